"""Every benchmark of bench/ runs at a small size, so that none can rot unseen (issue 25:
bench_canon failed on an assert for weeks): each exits 0 and writes its JSON.  Nothing here
asserts a time.  A new bench/*.py must be added to SMALL (test_every_bench_is_run says so)."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from tests.conftest import ROOT

BENCH = ROOT / "bench"

#: script → (its arguments for a small run, whether it writes JSON to --out, the modules it needs)
SMALL = {
    "bench_bigmine.py": (["--small"], True, []),
    "bench_canon.py": (["--small"], True, ["w3lib"]),
    "bench_commands.py": (["--small"], True, []),
    "bench_cost.py": (["--small"], True, []),
    "bench_links.py": (["--small"], True, []),
    "bench_learned.py": (["--small"], True, ["jax"]),
    "bench_mine.py": (["--small"], True, []),
    "bench_parse.py": (["--small"], True, []),
    "bench_window.py": (["--small"], True, []),
    "trust_sim.py": (["--small"], True, []),
    "genlog.py": (["--lines", "50"], False, []),
}
#: these need a broker: the session's (tests/conftest.py kafka) through DUST_KAFKA_BOOTSTRAP
KAFKA = {"bench_stream.py": ["--small"], "bench_scale.py": ["--small"], "bench_capfresh.py": ["--small"]}


def run_bench(script: str, args: list[str], env: dict | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, str(BENCH / script), *args], cwd=ROOT, capture_output=True, text=True,
                          timeout=600, env={**os.environ, **(env or {})})


def test_every_bench_is_run():
    scripts = {p.name for p in BENCH.glob("*.py") if p.name != "__init__.py"}
    assert scripts == set(SMALL) | set(KAFKA), "add the new bench's small run to tests/test_bench_small.py"


@pytest.mark.parametrize("script", sorted(SMALL))
def test_bench_runs_small(script, tmp_path):
    args, writes_json, needs = SMALL[script]
    for mod in needs:
        pytest.importorskip(mod)
    out = tmp_path / "out.json"
    r = run_bench(script, args + (["--out", str(out)] if writes_json else []))
    assert r.returncode == 0, r.stderr[-3000:]
    if writes_json:
        assert json.loads(out.read_text())
    else:
        assert len(r.stdout.splitlines()) == 50


@pytest.mark.parametrize("script", sorted(KAFKA))
def test_streaming_bench_runs_small(script, kafka, tmp_path):
    out = tmp_path / "out.json"
    r = run_bench(script, KAFKA[script] + ["--out", str(out)], env={"DUST_KAFKA_BOOTSTRAP": kafka})
    assert r.returncode == 0, r.stderr[-3000:]
    assert json.loads(out.read_text())


def test_scale_bench_runs_small_on_a_prefilled_topic(kafka, tmp_path):
    """bench_scale's --prefill (the mode for the next many-core run: the producers share no core with
    the workers) at a small size: every site's URLs counted as mine counts them.  (Which worker ends with
    which site depends on when each joined: not asserted.)"""
    out = tmp_path / "out.json"
    r = run_bench("bench_scale.py", ["--small", "--prefill", "--out", str(out)], env={"DUST_KAFKA_BOOTSTRAP": kafka})
    assert r.returncode == 0, r.stderr[-3000:]
    row = json.loads(out.read_text())["runs"][0]
    assert row["urls_equal_to_mine"] and sum(row["sites_per_worker"]) == 2
