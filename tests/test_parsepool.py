"""Raw messages parsed in processes of their own (DUST_PARSE_PROCESSES, agents/parsepool.py) give
what the agent computes inline, message by message and in order (junk included); the setting is
checked at start; and a worker with parser processes killed with -9 midway loses nothing and counts
nothing twice (the kill -9 test of tests/test_stream_integration.py, with the pool on)."""

from __future__ import annotations

import asyncio
import json

import pytest

from dustbuster.core.errors import ConfigError
from dustbuster.agents.parsepool import ParsePool, parse_message
from dustbuster.stream.settings import Settings, auto_parse_processes
from tests.conftest import LOGS
from tests.streamtools import Worker, compact, feed, latest_candidates, mine_json, stream_env


def _messages() -> list:
    lines = (LOGS / "semicomplete-apache" / "apache_logs").read_text(errors="replace").splitlines()
    out = [json.dumps({"site": "semicomplete.com", "lines": lines[i:i + 300]}).encode() for i in range(0, 3000, 300)]
    out += [b"not json", b'{"site": 5, "lines": []}', json.dumps({"site": "x.org", "lines": [1, None, "junk"]}).encode()]
    return out


def test_the_pool_parses_as_the_agent_does_inline():
    values = _messages()
    inline = asyncio.run(ParsePool(0, 10000, 65536).parse(values))

    async def pooled():
        pool = ParsePool(2, 10000, 65536)
        try:
            return await pool.parse(values)
        finally:
            await pool.stop()

    assert asyncio.run(pooled()) == inline
    assert inline[-3].error and inline[-3].error[2] is True  # junk: a ParseError's reason and detail
    assert inline[0] == parse_message(values[0], 10000, 65536) and inline[0].counts["lines"] == 300


def test_the_setting():
    assert Settings.from_env({"DUST_PARSE_PROCESSES": "4"}).parse_processes == 4
    assert Settings.from_env({}).parse_processes == auto_parse_processes()
    assert Settings.from_env({"DUST_PARSE_PROCESSES": "auto"}).parse_processes == auto_parse_processes()
    assert Settings.from_env({"DUST_PARSE_PROCESSES": "0"}).parse_processes == 0
    with pytest.raises(ConfigError):
        Settings.from_env({"DUST_PARSE_PROCESSES": "-1"})


@pytest.mark.parametrize("processes", ["2", "0"])
def test_kill9_with_parser_processes_loses_nothing_and_counts_nothing_twice(kafka, tmp_path, processes):
    """With two parser processes (groups parsed ahead of the one applied, agents/ingest.py) and
    inline (the default, one process, runs in tests/test_stream_integration.py)."""
    from dustbuster.sim.forum import generate

    env = stream_env(kafka, partitions=1) | {"DUST_PARSE_PROCESSES": processes}
    lines = list(generate(12000, seed=13))
    log, first, second = tmp_path / "forum.log", tmp_path / "first.log", tmp_path / "second.log"
    log.write_text("\n".join(lines) + "\n")
    first.write_text("\n".join(lines[:6000]) + "\n")
    second.write_text("\n".join(lines[6000:]) + "\n")
    w = Worker(env, tmp_path / "w", tmp_path / "w.log").start()
    feed(env, first, "www.forum.co.il")
    latest_candidates(env, {"www.forum.co.il": 6000}, workers=[w])
    feed(env, second, "www.forum.co.il")
    w.kill9()
    w = Worker(env, tmp_path / "w", tmp_path / "w2.log").start()  # same state dir: a restart
    try:
        got = latest_candidates(env, {"www.forum.co.il": 12000}, workers=[w])["www.forum.co.il"]
        want = mine_json(log, "www.forum.co.il")
        assert compact(got) == compact(want)
        assert got["stats"]["lines"] == 12000
        assert got["stats"]["records"] == want["stats"]["read"]["records"]
    finally:
        w.stop()


def test_a_dead_parser_process_is_replaced_on_the_next_try():
    import os
    import signal

    async def run():
        pool = ParsePool(1, 10000, 65536)
        values = _messages()[:4]
        try:
            first = await pool.parse(values)
            for pid in list(pool._pool._processes):
                os.kill(pid, signal.SIGKILL)
            with pytest.raises(Exception):
                await pool.parse(values)
            assert await pool.parse(values) == first  # a fresh pool
        finally:
            await pool.stop()

    asyncio.run(run())


def test_a_cgroup_quota_bounds_the_cpus_auto_counts(tmp_path):
    """DUST_PARSE_PROCESSES=auto reads a cgroup v2 quota (cpu.max) as well as the CPU affinity:
    a container given one CPU gets no parser process."""
    from dustbuster.stream.settings import cgroup_cpu_quota

    for text, want in [("max 100000\n", None), ("150000 100000\n", 1.5), ("50000 100000", 0.5), ("junk", None)]:
        (tmp_path / "cpu.max").write_text(text)
        assert cgroup_cpu_quota(tmp_path / "cpu.max") == want
    assert cgroup_cpu_quota(tmp_path / "absent") is None
