"""Helpers for the integration tests: feeding, mining, waiting for candidates; workers as real
processes and topic reads are :mod:`dustdev.devkafka`'s (the benchmarks use them too)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from dustdev.devkafka import Worker, latest_candidates, read_topic, stream_env  # noqa: F401 - the tests import them from here
from tests.conftest import ROOT
from tests.ruledocs import by_list


def feed(env: dict, path: Path | str, site: str, stdin: bytes | None = None, batch_lines: int = 200,
         fmt: str = "auto") -> subprocess.CompletedProcess:
    r = subprocess.run([sys.executable, "-m", "dustbuster", "feed", str(path), "--site", site, "-q", "--format", fmt,
                        "--batch-lines", str(batch_lines)], cwd=ROOT, env=env, input=stdin, capture_output=True, timeout=120)
    assert r.returncode == 0, r.stderr.decode()
    return r


def mine_json(path: Path, site: str) -> dict:
    r = subprocess.run([sys.executable, "-m", "dustbuster", "mine", str(path), "--site", site, "--json", "-q"],
                       cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout)


def compact(doc: dict) -> dict:
    doc = by_list(doc)  # a mine@2 document or candidate set: one list
    return {
        "rules": [(r["display"], r["support"], r["support_high"]) for r in doc["rules"]],
        "param_rules": [(r["display"], r["support"], r["disqualified"]) for r in doc["param_rules"]],
    }
