"""Streaming equals ``dustbuster mine`` on the same files (issue 27, finding 5), on the real broker:
``feed`` reads compressed logs, carries each line's bytes so the worker judges it exactly as
``mine`` does (``bad_encoding``, the one line cap), and candidate sets carry ``mine``'s ``unsafe``
flags.  The fuzz log is tests/fuzzlog.py's."""

from __future__ import annotations

import bz2
import gzip
import json
import re
import subprocess
import sys
from collections import Counter

from tests.conftest import LOGS, ROOT
from tests.fuzzlog import SITE, write_fuzz_log
from tests.streamtools import Worker, latest_candidates, mine_json, read_topic, stream_env

TWIKI = LOGS / "monitorware-twiki" / "access_log"


def _feed(env: dict, path, site: str) -> tuple[int, int]:
    """Feeds ``path``; (lines delivered, lines feed rejected itself) from its summary line."""
    r = subprocess.run([sys.executable, "-m", "dustbuster", "feed", str(path), "--site", site, "--batch-lines", "200"],
                       cwd=ROOT, env=env, capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    m = re.search(r"fed (\d+) lines", r.stderr)
    assert m, r.stderr
    rej = re.search(r"; (\d+) lines", r.stderr)
    return int(m.group(1)), int(rej.group(1)) if rej else 0


def _raw_lines(env: dict) -> list:
    out = []
    for m in read_topic(env["DUST_KAFKA_BOOTSTRAP"], env["DUST_TOPIC_PREFIX"] + "-raw"):
        out.extend(json.loads(m.value)["lines"])
    return out


def test_feed_sends_the_lines_of_compressed_logs(kafka, tmp_path):
    """A .gz (and .bz2) log is sent as its text lines, not as compressed bytes."""
    env = stream_env(kafka)
    text = TWIKI.read_bytes()
    gz, bz = tmp_path / "access_log.gz", tmp_path / "access_log.bz2"
    gz.write_bytes(gzip.compress(text))
    bz.write_bytes(bz2.compress(text))
    want = text.decode("utf-8").splitlines()
    assert _feed(env, gz, "a.org") == (len(want), 0)
    assert _feed(env, bz, "a.org") == (len(want), 0)
    assert _raw_lines(env) == want + want


def _flags(doc: dict) -> dict[str, str]:
    return {r["display"]: r.get("unsafe") for k in ("rules", "param_rules", "general_rules") for r in doc[k]}


def _figures(doc: dict, rejects: Counter | None = None) -> dict:
    """The counts to compare: a candidate set's (with the rejects topic's reasons) or mine's."""
    if rejects is None:  # mine --json
        rd = doc["stats"]["read"]
        lines, skipped, rejected = rd["lines"], sum(rd["skipped"].values()) + rd["blank"], rd["rejected"]
        records, dropped = rd["records"], rd["dropped_status"]
    else:
        st = doc["stats"]
        lines, skipped, rejected, records, dropped = (st["lines"], st["skipped"], dict(rejects), st["records"],
                                                      st["dropped_status"])
    return {"lines": lines, "records": records, "dropped_status": dropped, "skipped": skipped,
            "rejected": dict(sorted(rejected.items())), "urls": doc["stats"]["urls"],
            "rules": len(doc["rules"]), "param_rules": len(doc["param_rules"]),
            "general_rules": len(doc["general_rules"]),
            "unsafe": sum(1 for v in _flags(doc).values() if v)}


def test_streaming_equals_mine_on_the_fuzz_log(kafka, tmp_path):
    """The fuzz log, plain and gzipped (two sites), through feed and a worker: the same records,
    URLs, rejects by reason, rules and unsafe flags as ``mine`` on each file."""
    log = write_fuzz_log(tmp_path / "fuzz.log")
    gz = tmp_path / "fuzz.log.gz"
    gz.write_bytes(gzip.compress(log.read_bytes()))
    sites = {SITE: log, "gz." + SITE: gz}
    env = stream_env(kafka)
    w = Worker(env, tmp_path / "w", tmp_path / "w.log").start()
    try:
        fed = {site: _feed(env, path, site) for site, path in sites.items()}
        got = latest_candidates(env, {site: n for site, (n, _) in fed.items()}, workers=[w], timeout=180)
        reasons: dict[str, Counter] = {site: Counter() for site in sites}
        for m in read_topic(kafka, env["DUST_TOPIC_PREFIX"] + "-rejects"):
            d = json.loads(m.value)
            if d.get("site") in reasons:
                reasons[d["site"]][d["reason"]] += 1
    finally:
        w.stop()
    for site, path in sites.items():
        want = mine_json(path, site)
        stream, batch = _figures(got[site], reasons[site]), _figures(want)
        print(site, "streaming", stream, "feed rejected", fed[site][1])
        print(site, "mine     ", batch)
        if site == SITE:
            assert batch["unsafe"] >= 1, "the fuzz log must give mine an unsafe candidate"
    for site, path in sites.items():
        want = mine_json(path, site)
        stream, batch = _figures(got[site], reasons[site]), _figures(want)
        assert fed[site][1] == 0, "feed rejected lines itself"
        assert stream == batch, site
        assert [r["display"] for r in got[site]["rules"]] == [r["display"] for r in want["rules"]]
        assert _flags(got[site]) == _flags(want), site
