"""A streaming window mined in two processes (DUST_WINDOW_PROCESSES, state/partitions.py): Figure 1
counted in a forked process beside phase 3 (core/mining/parallel.py) gives the candidates of one
process and of a fresh ``mine``, window after window, with the kept URL index; the choice of one
or two processes (core/mining/processes.py) and the setting."""

from __future__ import annotations

import pytest

import dustbuster.core.mining.processes as processes
from dustbuster.core.errors import ConfigError
from dustbuster.core.mining.mine import mine, unsafe_flags
from dustbuster.core.params import DustParams
from dustbuster.logs.reader import parse_lines
from dustbuster.sim.forum import generate
from dustbuster.state.partitions import Message, PartitionState
from dustbuster.stream.settings import Settings, auto_parse_processes, auto_window_processes

SITE = "www.forum.co.il"

pytestmark = pytest.mark.skipif(not processes.can_fork(), reason="two processes need fork")


def candidates(result) -> dict:
    doc = result.to_json()
    doc.pop("stats")
    return doc


def feed(state: PartitionState, lines: list[str], offset: int) -> None:
    res = parse_lines(lines, SITE)
    staged = state.stage_group("raw", [Message(offset, SITE, res.records, res.counts)])
    if staged is not None:
        state.commit(staged)


def test_two_process_windows_equal_one_process_and_mine(tmp_path, monkeypatch):
    monkeypatch.setattr(processes, "MIN_URLS", 1)  # the forum's small lists mined in two processes too
    lines, other = list(generate(5000, seed=5)), list(generate(2000, seed=6))
    two = PartitionState(tmp_path / "two", 0, DustParams(), max_urls_per_site=1500, window_processes=2)
    one = PartitionState(tmp_path / "one", 0, DustParams(), max_urls_per_site=1500, window_processes=1)
    groups = [lines[:2000], other[:600], [ln.replace('" 200 ', '" 200 7', 1) for ln in lines[:150]], other[600:1400]]
    for k, group in enumerate(groups):
        feed(two, group, k)
        feed(one, group, k)
        got, same = two.window(SITE), one.window(SITE)
        assert got.stats["window_processes"] == 2 and same.stats["window_processes"] == 1
        ul = one.site(SITE).urllist()
        want = mine(ul, one.params)
        want.unsafe = unsafe_flags(want, ul)
        assert candidates(got) == candidates(same) == candidates(want)
    two.close()
    one.close()


def test_a_small_list_is_mined_in_one_process(tmp_path):
    state = PartitionState(tmp_path, 0, DustParams(), window_processes=2)
    feed(state, list(generate(600, seed=5)), 0)
    assert state.window(SITE).stats["window_processes"] == 1  # under MIN_URLS: no second process
    state.close()


def test_the_choice(monkeypatch):
    assert processes.two_processes(2, processes.MIN_URLS)
    assert not processes.two_processes(2, processes.MIN_URLS - 1)
    assert not processes.two_processes(1, 10**6)
    monkeypatch.setattr(processes, "can_fork", lambda: False)
    assert not processes.two_processes(2, 10**6)


def test_the_setting():
    assert Settings.from_env({}).window_processes == auto_window_processes() == (2 if auto_parse_processes() else 1)
    assert Settings.from_env({"DUST_WINDOW_PROCESSES": "auto"}).window_processes == auto_window_processes()
    assert Settings.from_env({"DUST_WINDOW_PROCESSES": "1"}).window_processes == 1
    assert Settings.from_env({"DUST_WINDOW_PROCESSES": "2"}).window_processes == 2
    for bad in ("0", "3"):
        with pytest.raises(ConfigError, match="DUST_WINDOW_PROCESSES"):
            Settings.from_env({"DUST_WINDOW_PROCESSES": bad})


def test_a_lost_second_process_leaves_the_window_to_this_one(tmp_path, monkeypatch, caplog):
    """The forked process killed (out of memory, say): the window mines the list in this process,
    with the same candidates, and says so in a warning."""
    import os

    import dustbuster.core.mining.parallel as parallel

    monkeypatch.setattr(processes, "MIN_URLS", 1)
    monkeypatch.setattr(parallel, "_pairs_child", lambda *a: os._exit(9))  # the child dies before it sends
    state = PartitionState(tmp_path, 0, DustParams(), window_processes=2)
    feed(state, list(generate(1500, seed=5)), 0)
    with caplog.at_level("WARNING", logger="dustbuster.state.partitions"):
        got = state.window(SITE)
    assert got.stats["window_processes"] == 1
    assert any("second process was lost" in r.getMessage() and "exit code 9" in r.getMessage()
               for r in caplog.records)
    ul = state.site(SITE).urllist()
    want = mine(ul, state.params)
    want.unsafe = unsafe_flags(want, ul)
    assert candidates(got) == candidates(want)
    feed(state, list(generate(600, seed=6)), 1)
    assert state.window(SITE).stats["window_processes"] == 1  # the site stays in one process from then on
    state.close()


def test_two_process_windows_parse_only_the_new_urls(tmp_path, monkeypatch):
    """The state thread's half reads the window's kept URL index (URLIndex.refresh), as one
    process does: no window after the first builds an index anew."""
    from dustbuster.core.urls.urlindex import URLIndex

    monkeypatch.setattr(processes, "MIN_URLS", 1)
    built = []
    init = URLIndex.__init__
    monkeypatch.setattr(URLIndex, "__init__", lambda self, *a, **k: built.append(1) or init(self, *a, **k))
    lines = list(generate(3000, seed=5))
    state = PartitionState(tmp_path, 0, DustParams(), window_processes=2)
    for k in range(3):
        feed(state, lines[k * 1000:(k + 1) * 1000], k)
        assert state.window(SITE).stats["window_processes"] == 2
    assert len(built) == 1  # the first window's; the next two refreshed it
    state.close()


def test_the_child_never_signals_the_workers_event_loop(tmp_path, monkeypatch):
    """A worker's event loop handles SIGTERM (faust's mode does, through the loop's wakeup
    socket, which a forked child inherits).  When this process's half fails while the child
    still counts, the child is stopped; nothing of that reaches the loop's handler (a SIGTERM
    the child passed on would stop the worker), and the failure is the window's own."""
    import asyncio
    import signal
    import time

    import dustbuster.core.mining.mine as mining
    import dustbuster.core.mining.parallel as parallel

    count = parallel.count_supports

    def slow(*a, **k):  # the child: still counting when the parent fails
        time.sleep(30)
        return count(*a, **k)

    def boom(*a, **k):
        raise RuntimeError("the state thread's half failed")

    monkeypatch.setattr(processes, "MIN_URLS", 1)
    monkeypatch.setattr(parallel, "count_supports", slow)
    monkeypatch.setattr(parallel, "mine_general", boom)
    monkeypatch.setattr(mining, "mine_general", boom)
    state = PartitionState(tmp_path, 0, DustParams(), window_processes=2)
    feed(state, list(generate(1500, seed=5)), 0)

    async def run() -> list:
        loop = asyncio.get_running_loop()
        heard: list = []
        loop.add_signal_handler(signal.SIGTERM, heard.append, "SIGTERM")
        try:
            with pytest.raises(RuntimeError, match="half failed"):
                await loop.run_in_executor(None, state.window, SITE)
            for _ in range(20):  # the child is gone: a signal it passed on is in the socket by now
                await asyncio.sleep(0.01)
        finally:
            loop.remove_signal_handler(signal.SIGTERM)
        return heard

    assert asyncio.run(run()) == []
    state.close()
