"""A validation round holds neither a rebalance nor a stop, through the real broker: the validator
agent hands each candidate set to a round runner and acknowledges it at once (agents/rounds.py).
A round of a slow site runs for minutes; meanwhile a second worker joins the group (ingestion of
new lines goes on: a candidate set with them comes out) and both workers stop on SIGTERM within
seconds (the round is cancelled, its verdicts so far kept), without SIGKILL."""

from __future__ import annotations

import os
import signal
import subprocess
import time

from tests.simsite import start_sim_site, write_sim_log, write_sites
from tests.streamtools import Worker, feed, latest_candidates, stream_env

SITE = "forum.test"


def wait_for_text(w: Worker, text: str, timeout: float = 120) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        assert w.alive(), w.log.read_text(errors="replace")[-3000:]
        if text in w.log.read_text(errors="replace"):
            return
        time.sleep(1)
    raise AssertionError(f"{text!r} never logged: {w.log.read_text(errors='replace')[-3000:]}")


def sigterm_seconds(w: Worker, limit: float = 60) -> float:
    """Seconds from SIGTERM to the worker's exit (SIGKILL after ``limit``: then the limit)."""
    assert w.proc is not None
    t0 = time.monotonic()
    os.killpg(w.proc.pid, signal.SIGTERM)
    try:
        w.proc.wait(limit)
    except subprocess.TimeoutExpired:
        os.killpg(w.proc.pid, signal.SIGKILL)
        w.proc.wait(10)
        return limit
    return time.monotonic() - t0


def test_a_round_holds_neither_a_rebalance_nor_a_stop(kafka, tmp_path):
    sim, port = start_sim_site()
    workers: list[Worker] = []
    try:
        log = write_sim_log(port, tmp_path / "sim.log", 3000)
        more = write_sim_log(port, tmp_path / "more.log", 300)
        env = stream_env(kafka, window=2.0, partitions=2)
        env["DUST_VALIDATOR_SITES"] = str(write_sites(tmp_path / "sites.json", port, rate_per_s=4, concurrency=1))
        a = Worker(env, tmp_path / "a", tmp_path / "a.log").start()
        workers.append(a)
        feed(env, log, SITE)
        wait_for_text(a, "validation round of window")  # at 4 pages/s: minutes of fetching ahead
        b = Worker(env, tmp_path / "b", tmp_path / "b.log").start()  # joins the group: a rebalance
        workers.append(b)
        t0 = time.monotonic()
        feed(env, more, SITE)
        latest_candidates(env, {SITE: 3300}, workers=[a, b], timeout=150)  # ingestion went on meanwhile
        caught_up = time.monotonic() - t0
        assert a.alive()
        stops = [sigterm_seconds(w) for w in workers]
    finally:
        for w in workers:
            w.stop()
        sim.terminate()
        sim.wait(10)
    assert caught_up < 150 and all(s < 30 for s in stops), (caught_up, stops)
    assert "validation rounds cancelled" in a.log.read_text(errors="replace") or \
        "round here is cancelled" in a.log.read_text(errors="replace")
