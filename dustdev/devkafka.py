"""Kafka and workers for the integration tests and the streaming benchmarks: a real broker found the
way the project promises (:func:`kafka_bootstrap`), an environment for one isolated run
(:func:`stream_env`), workers as real processes (:class:`Worker`) and a topic read whole
(:func:`read_topic`).  Test support (dustdev/, not installed): nothing of the service imports it.

The broker, in order:

1. ``DUST_KAFKA_BOOTSTRAP`` if set;
2. testcontainers' Kafka module when a Docker engine answers;
3. the project's own local KRaft broker (:mod:`dustbuster.broker`, jars from deploy/kafka/pom.xml).
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import uuid
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator

log = logging.getLogger(__name__)

#: the source checkout dustdev/ lives in (workers start there; None if it were copied elsewhere)
_CHECKOUT = Path(__file__).resolve().parent.parent
SOURCE_ROOT: Path | None = _CHECKOUT if (_CHECKOUT / "pyproject.toml").is_file() else None


def _docker_answers() -> bool:
    try:
        import docker  # testcontainers' dependency

        client = docker.from_env(timeout=3)
        client.ping()
        return True
    except Exception:  # no engine, no socket, no permission: all mean "not here"
        return False


@contextmanager
def kafka_bootstrap() -> Iterator[str]:
    """The bootstrap address of a real Kafka broker while the context lasts (see above)."""
    env = os.environ.get("DUST_KAFKA_BOOTSTRAP")
    if env:
        yield env
        return
    if _docker_answers():
        from testcontainers.kafka import KafkaContainer

        with KafkaContainer() as kc:
            yield kc.get_bootstrap_server()
        return
    from dustbuster.broker import LocalKafka

    tmp = Path(tempfile.mkdtemp(prefix="dust-kafka-"))
    broker = LocalKafka(tmp)
    try:
        broker.start()
        log.info("local Kafka on %s (%s)", broker.bootstrap, broker.timings)
        yield broker.bootstrap
    finally:
        broker.stop()
        shutil.rmtree(tmp, ignore_errors=True)


class Worker:
    """``dustbuster worker`` as a process of its own session (so a kill reaches all of it)."""

    def __init__(self, env: dict, data_dir: Path, log: Path, cwd: Path | None = SOURCE_ROOT) -> None:
        self.env, self.data_dir, self.log, self.cwd = env, data_dir, log, cwd
        self.proc: subprocess.Popen | None = None

    def start(self) -> "Worker":
        out = open(self.log, "ab")
        self.proc = subprocess.Popen([sys.executable, "-m", "dustbuster", "worker", "--data-dir", str(self.data_dir)],
                                     cwd=self.cwd, env=self.env, stdout=out, stderr=subprocess.STDOUT,
                                     start_new_session=True)
        out.close()
        return self

    def kill9(self) -> None:
        os.killpg(self.proc.pid, signal.SIGKILL)
        self.proc.wait(10)

    def stop(self) -> None:
        if self.proc and self.proc.poll() is None:
            os.killpg(self.proc.pid, signal.SIGTERM)
            try:
                self.proc.wait(20)
            except subprocess.TimeoutExpired:
                os.killpg(self.proc.pid, signal.SIGKILL)
                self.proc.wait(10)

    def alive(self) -> bool:
        return self.proc is not None and self.proc.poll() is None


def stream_env(bootstrap: str, window: float = 1.0, partitions: int = 2) -> dict:
    """This process's environment with the settings of one isolated run: a fresh topic prefix and
    app id, the window, the partitions, a short session timeout, the API on a free port and no
    validator sites (nothing is fetched unless the caller configures a site)."""
    tag = uuid.uuid4().hex[:8]
    env = dict(os.environ)
    env.update({"DUST_KAFKA_BOOTSTRAP": bootstrap, "DUST_TOPIC_PREFIX": f"t{tag}", "DUST_APP_ID": f"app{tag}",
                "DUST_WINDOW_S": str(window), "DUST_PARTITIONS": str(partitions),
                "DUST_SESSION_TIMEOUT_S": "6", "DUST_API_PORT": "0"})
    env.pop("DUST_VALIDATOR_SITES", None)
    return env


async def _read_all(bootstrap: str, topic: str, timeout_ms: int = 1500) -> list:
    from aiokafka import AIOKafkaConsumer

    c = AIOKafkaConsumer(topic, bootstrap_servers=bootstrap, auto_offset_reset="earliest", group_id=None,
                         enable_auto_commit=False)
    await c.start()
    out = []
    try:
        while True:
            got = await c.getmany(timeout_ms=timeout_ms)
            if not got:
                break
            for msgs in got.values():
                out.extend(msgs)
    finally:
        await c.stop()
    return out


def read_topic(bootstrap: str, topic: str) -> list:
    """Every message of ``topic`` from the start, group-less: read until a poll brings nothing.
    Not :func:`dustbuster.stream.consume.latest_by_key`: the tests and benchmarks count and inspect
    every record (each reject, each raw batch, a compaction's effect), not the latest per key."""
    return asyncio.run(_read_all(bootstrap, topic))


def latest_candidates(env: dict, want: dict[str, int], timeout: float = 120.0, workers: "list[Worker]" = ()) -> dict[str, dict]:
    """Wait until every site's newest candidate set has seen ``want[site]`` lines; return them
    (site → candidate set).  RuntimeError when a worker dies or the time runs out."""
    deadline = time.monotonic() + timeout
    topic = env["DUST_TOPIC_PREFIX"] + "-candidates"
    latest: dict[str, dict] = {}
    while time.monotonic() < deadline:
        for w in workers:
            if not w.alive():
                raise RuntimeError(f"worker died: {w.log.read_text()[-3000:]}")
        for m in read_topic(env["DUST_KAFKA_BOOTSTRAP"], topic):
            d = json.loads(m.value)
            latest[d["site"]] = d
        if all(s in latest and latest[s]["stats"].get("lines") == n for s, n in want.items()):
            return latest
        time.sleep(1.0)
    logs = "".join(f"\n--- {w.log} (last 3,000 characters):\n{w.log.read_text(errors='replace')[-3000:]}"
                   for w in workers if w.log.exists())
    raise RuntimeError(f"candidates did not catch up: { {s: d['stats'].get('lines') for s, d in latest.items()} } "
                       f"want {want}{logs}")
