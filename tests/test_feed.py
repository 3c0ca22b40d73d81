"""dustbuster feed against the real broker: batches, --follow across rotation, clear failures."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
import time

from tests.conftest import ROOT
from tests.streamtools import read_topic, stream_env

LINE = '1.2.3.4 - - [07/Mar/2004:16:05:49 -0800] "GET /p{} HTTP/1.1" 200 {}'


def raw_lines(env) -> list[str]:
    out = []
    for m in read_topic(env["DUST_KAFKA_BOOTSTRAP"], env["DUST_TOPIC_PREFIX"] + "-raw"):
        out.extend(json.loads(m.value)["lines"])
    return out


def test_feed_batches_and_keys(kafka, tmp_path):
    env = stream_env(kafka)
    log = tmp_path / "a.log"
    log.write_text("".join(LINE.format(i, i) + "\n" for i in range(1234)))
    r = subprocess.run([sys.executable, "-m", "dustbuster", "feed", str(log), "--site", "WWW.A.org", "--batch-lines", "500"],
                       cwd=ROOT, env=env, capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    assert "fed 1234 lines in 3 batches" in r.stderr
    msgs = read_topic(kafka, env["DUST_TOPIC_PREFIX"] + "-raw")
    assert {m.key for m in msgs} == {b"www.a.org"}
    assert [len(json.loads(m.value)["lines"]) for m in msgs] == [500, 500, 234]
    assert raw_lines(env) == [LINE.format(i, i) for i in range(1234)]


def test_feed_follow_survives_rotation(kafka, tmp_path):
    env = stream_env(kafka)
    log = tmp_path / "access.log"
    log.write_text("".join(LINE.format(i, 1) + "\n" for i in range(10)))
    p = subprocess.Popen([sys.executable, "-m", "dustbuster", "feed", str(log), "--site", "a.org", "--follow", "-q",
                          "--batch-lines", "1000"], cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        time.sleep(3)
        with open(log, "a") as fh:
            fh.write("".join(LINE.format(i, 1) + "\n" for i in range(10, 20)))
        time.sleep(1.5)
        with open(log, "a") as fh:  # written just before the rotation
            fh.write(LINE.format(20, 1) + "\n")
        os.rename(log, tmp_path / "access.log.1")  # logrotate: move, then a new file
        log.write_text("".join(LINE.format(i, 1) + "\n" for i in range(21, 30)))
        time.sleep(2)
        with open(log, "a") as fh:
            fh.write(LINE.format(30, 1) + "\n")
        time.sleep(2)
    finally:
        p.send_signal(signal.SIGTERM)
        out, err = p.communicate(timeout=30)
    assert p.returncode == 0, err.decode()
    got = raw_lines(env)
    assert got == [LINE.format(i, 1) for i in range(31)]  # in order, none lost, none twice


def test_feed_fails_loudly_when_the_broker_rejects(kafka, tmp_path):
    from aiokafka.admin import AIOKafkaAdminClient, NewTopic

    env = stream_env(kafka)
    topic = env["DUST_TOPIC_PREFIX"] + "-raw"

    async def small_topic():
        admin = AIOKafkaAdminClient(bootstrap_servers=kafka)
        await admin.start()
        try:
            await admin.create_topics([NewTopic(topic, 1, 1, topic_configs={"max.message.bytes": "2000"})])
        finally:
            await admin.close()

    asyncio.run(small_topic())
    log = tmp_path / "a.log"
    log.write_text("".join(LINE.format(i, i) + "\n" for i in range(100)))
    r = subprocess.run([sys.executable, "-m", "dustbuster", "feed", str(log), "--site", "a.org", "--batch-lines", "100", "-q"],
                       cwd=ROOT, env=env, capture_output=True, text=True, timeout=120)
    assert r.returncode == 2 and "rejected a batch" in r.stderr and "Traceback" not in r.stderr
    r = subprocess.run([sys.executable, "-m", "dustbuster", "feed", str(tmp_path / "missing.log"), "--site", "a.org"],
                       cwd=ROOT, env=env, capture_output=True, text=True, timeout=60)
    assert r.returncode == 2 and "no such log file" in r.stderr
