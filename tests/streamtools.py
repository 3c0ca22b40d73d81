"""Helpers for the integration tests: workers as real processes, feeding, reading topics."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
import time
import uuid
from pathlib import Path

from tests.conftest import ROOT


class Worker:
    def __init__(self, env: dict, data_dir: Path, log: Path) -> None:
        self.env, self.data_dir, self.log = env, data_dir, log
        self.proc: subprocess.Popen | None = None

    def start(self) -> "Worker":
        out = open(self.log, "ab")
        self.proc = subprocess.Popen([sys.executable, "-m", "dustbuster", "worker", "--data-dir", str(self.data_dir)],
                                     cwd=ROOT, env=self.env, stdout=out, stderr=subprocess.STDOUT, start_new_session=True)
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
    tag = uuid.uuid4().hex[:8]
    env = dict(os.environ)
    env.update({"DUST_KAFKA_BOOTSTRAP": bootstrap, "DUST_TOPIC_PREFIX": f"t{tag}", "DUST_APP_ID": f"app{tag}",
                "DUST_WINDOW_S": str(window), "DUST_PARTITIONS": str(partitions),
                "DUST_SESSION_TIMEOUT_S": "6", "DUST_API_PORT": "0"})
    env.pop("DUST_VALIDATOR_SITES", None)  # nothing is fetched unless a test configures a site
    return env


def feed(env: dict, path: Path | str, site: str, stdin: bytes | None = None, batch_lines: int = 200) -> subprocess.CompletedProcess:
    r = subprocess.run([sys.executable, "-m", "dustbuster", "feed", str(path), "--site", site, "-q",
                        "--batch-lines", str(batch_lines)], cwd=ROOT, env=env, input=stdin, capture_output=True, timeout=120)
    assert r.returncode == 0, r.stderr.decode()
    return r


def mine_json(path: Path, site: str) -> dict:
    r = subprocess.run([sys.executable, "-m", "dustbuster", "mine", str(path), "--site", site, "--json", "-q"],
                       cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout)


def compact(doc: dict) -> dict:
    return {
        "rules": [(r["display"], r["support"], r["support_high"]) for r in doc["rules"]],
        "param_rules": [(r["display"], r["support"], r["disqualified"]) for r in doc["param_rules"]],
    }


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
    return asyncio.run(_read_all(bootstrap, topic))


def latest_candidates(env: dict, want: dict[str, int], timeout: float = 120.0, workers: list[Worker] = ()) -> dict[str, dict]:
    """Wait until every site's newest candidate set has seen ``want[site]`` lines; return them."""
    deadline = time.monotonic() + timeout
    topic = env["DUST_TOPIC_PREFIX"] + "-candidates"
    latest: dict[str, dict] = {}
    while time.monotonic() < deadline:
        for w in workers:
            assert w.alive(), f"worker died: {w.log.read_text()[-3000:]}"
        for m in read_topic(env["DUST_KAFKA_BOOTSTRAP"], topic):
            d = json.loads(m.value)
            latest[d["site"]] = d
        if all(s in latest and latest[s]["stats"].get("lines") == n for s, n in want.items()):
            return latest
        time.sleep(1.0)
    raise AssertionError(f"candidates did not catch up: { {s: d['stats'].get('lines') for s, d in latest.items()} } want {want}")
