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
    assert any("window mined in one process" in r.getMessage() and "exit code 9" in r.getMessage()
               for r in caplog.records)
    ul = state.site(SITE).urllist()
    want = mine(ul, state.params)
    want.unsafe = unsafe_flags(want, ul)
    assert candidates(got) == candidates(want)
    state.close()
