"""The streaming miner against a real Kafka broker (issue 3's proofs)."""

from __future__ import annotations

import json
import time

import pytest

from tests.conftest import LOGS
from tests.streamtools import Worker, compact, feed, latest_candidates, mine_json, read_topic, stream_env

TWIKI = LOGS / "monitorware-twiki" / "access_log"
SEMI = LOGS / "semicomplete-apache" / "apache_logs"


def nlines(path) -> int:
    with open(path, "rb") as fh:
        return sum(1 for _ in fh)


@pytest.fixture
def generated_log(tmp_path):
    from bench.genlog import generate

    path = tmp_path / "forum.log"
    path.write_text("\n".join(generate(4000, seed=11)) + "\n")
    return path


def test_stream_equals_batch(kafka, tmp_path, generated_log):
    env = stream_env(kafka)
    w = Worker(env, tmp_path / "w", tmp_path / "w.log").start()
    try:
        sites = {"monitorware.example": TWIKI, "semicomplete.com": SEMI, "www.forum.co.il": generated_log}
        for site, path in sites.items():
            feed(env, path, site)
        got = latest_candidates(env, {s: nlines(p) for s, p in sites.items()}, workers=[w])
        for site, path in sites.items():
            want = mine_json(path, site)
            assert compact(got[site]) == compact(want), site
            assert got[site]["stats"]["records"] == want["stats"]["read"]["records"]
            assert got[site]["stats"]["dropped_status"] == want["stats"]["read"]["dropped_status"]
    finally:
        w.stop()


def test_kill9_midway_loses_nothing_and_counts_nothing_twice(kafka, tmp_path, generated_log):
    env = stream_env(kafka)
    lines = generated_log.read_bytes().splitlines(keepends=True)
    half = len(lines) // 2
    first, second = tmp_path / "a.log", tmp_path / "b.log"
    first.write_bytes(b"".join(lines[:half]))
    second.write_bytes(b"".join(lines[half:]))
    w = Worker(env, tmp_path / "w", tmp_path / "w.log").start()
    feed(env, first, "www.forum.co.il")
    feed(env, second, "www.forum.co.il")  # all lines are in Kafka; the worker is mid-way through them
    time.sleep(2.0)
    w.kill9()
    w = Worker(env, tmp_path / "w", tmp_path / "w2.log").start()  # same state dir: a restart
    try:
        got = latest_candidates(env, {"www.forum.co.il": len(lines)}, workers=[w])["www.forum.co.il"]
        want = mine_json(generated_log, "www.forum.co.il")
        assert compact(got) == compact(want)
        assert got["stats"]["lines"] == len(lines)  # none lost, none counted twice
        assert got["stats"]["records"] == want["stats"]["read"]["records"]
    finally:
        w.stop()


def test_junk_on_the_topic_goes_to_rejects(kafka, tmp_path):
    import asyncio

    from aiokafka import AIOKafkaProducer

    env = stream_env(kafka)
    w = Worker(env, tmp_path / "w", tmp_path / "w.log").start()
    raw = env["DUST_TOPIC_PREFIX"] + "-raw"

    async def junk():
        p = AIOKafkaProducer(bootstrap_servers=kafka, max_request_size=4 * 1024 * 1024)
        await p.start()
        try:
            for value in [b"\x00\xff\xfebinary", b"{not json", b"[1,2]", json.dumps({"site": "x.org", "lines": "nope"}).encode(),
                          json.dumps({"site": "x.org", "lines": ["GET / HTTP/1.1", "x" * 70000]}).encode()]:
                await p.send_and_wait(raw, value, key=b"x.org")
        finally:
            await p.stop()

    try:
        asyncio.run(junk())
        feed(env, TWIKI, "monitorware.example")
        got = latest_candidates(env, {"monitorware.example": nlines(TWIKI)}, workers=[w])
        assert compact(got["monitorware.example"]) == compact(mine_json(TWIKI, "monitorware.example"))
        reasons = [json.loads(m.value)["reason"] for m in read_topic(kafka, env["DUST_TOPIC_PREFIX"] + "-rejects")]
        assert reasons.count("bad_json") == 2 and reasons.count("bad_record") == 2
        assert "oversized_line" in reasons and "malformed" in reasons
        assert w.alive()
    finally:
        w.stop()
