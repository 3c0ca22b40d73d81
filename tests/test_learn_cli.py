"""``dustbuster learn train|propose`` and ``eval --model`` end to end on a tiny model: the truth
file in, a versioned model out, candidate rules from its rewrites, the model alone scored."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

pytest.importorskip("jax")

from dustbuster.core.validation.sketch import Sketch  # noqa: E402
from dustbuster.core.report.truth import SIG_K  # noqa: E402
from tests.conftest import ROOT  # noqa: E402

H = "http://h.test"
TINY = ["--embed", "8", "--hidden", "16", "--epochs", "3", "--min-steps", "30"]


def dust(*args, **kw):
    return subprocess.run([sys.executable, "-m", "dustbuster", *args], cwd=ROOT, capture_output=True, text=True,
                          timeout=300, **kw)


def sig(n: int) -> dict:
    return Sketch("text", tuple(n * 1000 + i for i in range(SIG_K)), "", 100).to_json()


def truth_file(path, n: int = 12) -> None:
    """Pages /item/i, each also reached as /item/i?sid=..; one failed fetch (left out)."""
    recs = []
    for i in range(n):
        recs.append({"url": f"{H}/item/{i}", "ok": True, "signature": sig(i), "cluster": i, "class": "item"})
        recs.append({"url": f"{H}/item/{i}?sid=s{i}", "ok": True, "signature": sig(i), "cluster": i,
                     "class": "item"})
    recs.append({"url": f"{H}/gone", "ok": False, "reason": "status_404", "cluster": None, "class": "gone"})
    path.write_text("".join(json.dumps(r) + "\n" for r in recs))


def test_train_propose_and_eval(tmp_path):
    truth = tmp_path / "truth.jsonl"
    truth_file(truth)
    models = tmp_path / "models"
    r = dust("learn", "train", str(truth), "--site", "h.test", "--models", str(models), *TINY)
    assert r.returncode == 0, r.stderr
    path = r.stdout.strip()
    assert path.endswith("h.test/v0001") and "12 content clusters" in r.stderr and "saved" in r.stderr
    meta = json.loads((models / "h.test" / "v0001" / "model.json").read_text())["meta"]
    assert meta["site"] == "h.test" and meta["training_data"]["rewrite_pairs"] == 12
    assert 0 <= meta["train_exact_match"] <= 1 and meta["functions"]
    # a second training is a new version, the same seed the same parameters
    r = dust("learn", "train", str(truth), "--site", "h.test", "--models", str(models), *TINY, "-q")
    assert r.returncode == 0 and r.stdout.strip().endswith("h.test/v0002")
    a = (models / "h.test" / "v0001" / "model.npz").read_bytes()
    assert a == (models / "h.test" / "v0002" / "model.npz").read_bytes()

    log = tmp_path / "urls.jsonl"
    log.write_text("".join(json.dumps({"url": u}) + "\n" for i in range(40) for u in (f"{H}/item/{i}?sid=x{i}",
                                                                                     f"{H}/item/{i}")))
    out = tmp_path / "learned.json"
    r = dust("learn", "propose", str(log), "--site", "h.test", "--models", str(models), "--format", "jsonl",
             "--min-confidence", "0", "-o", str(out))
    assert r.returncode == 0, r.stderr
    doc = json.loads(out.read_text())
    assert doc["schema"] == "dustbuster/candidates@1" and doc["stats"]["model"].endswith("v0002")
    assert doc["stats"]["urls"] == 80 and all(x["status"] == "likely" for x in doc["rules"])
    assert all(x["evidence"]["source"] == "learned" for x in doc["rules"])
    assert "candidate rules (to validate)" in r.stderr

    r = dust("eval", "--truth", str(truth), "--model", path, "--no-w3lib", "--json", "-q")
    assert r.returncode == 0, r.stderr
    names = [x["name"] for x in json.loads(r.stdout)["results"]]
    assert names == ["KeepAll", "learned model alone (h.test/v0001)"]


def test_clear_errors(tmp_path):
    r = dust("learn", "train", str(tmp_path / "none.jsonl"), "--site", "h.test", "--models", str(tmp_path))
    assert r.returncode == 2 and "no such truth file" in r.stderr
    empty = tmp_path / "t.jsonl"
    empty.write_text(json.dumps({"url": f"{H}/x", "ok": False}) + "\n")
    r = dust("learn", "train", str(empty), "--site", "h.test", "--models", str(tmp_path))
    assert r.returncode == 2 and "no fetched pages" in r.stderr
    log = tmp_path / "urls.jsonl"
    log.write_text(json.dumps({"url": f"{H}/a"}) + "\n")
    r = dust("learn", "propose", str(log), "--site", "h.test", "--models", str(tmp_path / "m"))
    assert r.returncode == 2 and "no model of h.test" in r.stderr and "learn train" in r.stderr
    junk = tmp_path / "junk.log"
    junk.write_text("not a log line\n")
    r = dust("learn", "propose", str(junk), "--site", "h.test", "--models", str(tmp_path / "m"))
    assert r.returncode == 2 and "no known log format" in r.stderr
    r = dust("learn", "--help")
    assert r.returncode == 0 and "never canonizes" in r.stdout
