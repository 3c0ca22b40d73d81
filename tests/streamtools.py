"""Helpers for the integration tests: feeding, mining, waiting for candidates; workers as real
processes and topic reads are :mod:`dustbuster.devkafka`'s (the benchmarks use them too)."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

from dustbuster.devkafka import Worker, read_topic, stream_env  # noqa: F401 - the tests import them from here
from tests.conftest import ROOT


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
