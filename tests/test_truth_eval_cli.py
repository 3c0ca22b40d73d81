"""``dustbuster truth`` and ``dustbuster eval`` against the simulator on loopback: a complete,
resumable truth file; eval's scores for a hand-made rule set, mine's candidates and the
baselines; the HTML report; errors a person can act on."""

from __future__ import annotations

import json
import subprocess
import sys

from dustbuster.sim.forum import SITE_HOSTS
from tests.conftest import ROOT
from tests.simsite import start_sim_site, write_sites

HOSTS = SITE_HOSTS


def dust(*args, **kw):
    return subprocess.run([sys.executable, "-m", "dustbuster", *args], cwd=ROOT, capture_output=True, text=True,
                          timeout=300, **kw)


def test_truth_and_eval_on_the_simulator(tmp_path):
    sim, port = start_sim_site()
    try:
        log = tmp_path / "sim.log"
        assert dust("sim-site", "--port", str(port), "--write-log", str(log), "--lines", "1500", "-q").returncode == 0
        sites = tmp_path / "sites.json"
        write_sites(sites, port)
        truth = tmp_path / "truth.jsonl"
        r = dust("truth", str(log), "--site", "forum.test", "--sites", str(sites), "-o", str(truth))
        assert r.returncode == 0, r.stderr
        recs = [json.loads(x) for x in truth.read_text().splitlines()]
        assert len(recs) == len({x["url"] for x in recs}) > 500
        assert all((x["cluster"] is not None) == x["ok"] for x in recs)
        assert "distinct contents" in r.stderr and "duplicate URLs" in r.stderr
        # story?id=N and story_N on the same host show the same story: one cluster
        by_url = {x["url"]: x for x in recs}
        w = f"http://www.forum.test:{port}"
        pairs = [(u, u.replace("/story?id=", "/story_")) for u in by_url if u.startswith(f"{w}/story?id=") and "&" not in u]
        same = [(a, b) for a, b in pairs if b in by_url]
        assert same and all(by_url[a]["cluster"] == by_url[b]["cluster"] for a, b in same)
        # resumable: a second run fetches nothing and writes the same clusters
        r2 = dust("truth", str(log), "--site", "forum.test", "--sites", str(sites), "-o", str(truth))
        assert r2.returncode == 0 and " 0 fetched now" in r2.stderr, r2.stderr
        assert [json.loads(x)["cluster"] for x in truth.read_text().splitlines()] == [x["cluster"] for x in recs]

        rules = tmp_path / "rules.json"  # a hand-made validated set: story?id=N → story_N
        rules.write_text(json.dumps({"schema": "dustbuster/ruleset@1", "site": "forum.test", "version": 1, "rules": [
            {"type": "substring", "alpha": "/story?id=", "beta": "/story_", "status": "valid"}]}))
        cands = tmp_path / "cands.json"
        r = dust("mine", str(log), "--json", "-q")
        assert r.returncode == 0
        cands.write_text(r.stdout)
        html = tmp_path / "report.html"
        r = dust("eval", "--truth", str(truth), str(rules), str(cands), "--json", "--html", str(html), "--no-w3lib")
        assert r.returncode == 0, r.stderr
        doc = json.loads(r.stdout)
        res = {x["name"].split(" ")[0]: x for x in doc["results"]}
        assert set(res) == {"KeepAll", "rules.json", "cands.json"}
        assert res["rules.json"]["kind"] == "validated" and res["cands.json"]["kind"] == "unvalidated"
        keep, hand = res["KeepAll"]["overall"], res["rules.json"]["overall"]
        assert keep["recall"] == 1.0 and keep["redundancy"] == 0
        assert hand["redundancy"] > 0 and hand["false_merge_groups"] == 0 and hand["f1"] > keep["f1"]
        assert "story" in res["rules.json"]["classes"]
        text = html.read_text()
        assert text.startswith("<!doctype html>") and "<svg" in text and "<script" not in text
        r = dust("eval", "--truth", str(truth), str(rules), "--no-w3lib")  # the tables for a person
        assert r.returncode == 0 and "per URL class" in r.stdout and "KeepAll" in r.stdout
    finally:
        sim.terminate()
        sim.wait(10)


def test_clear_errors(tmp_path):
    r = dust("eval", "--truth", str(tmp_path / "none.jsonl"))
    assert r.returncode == 2 and "no such truth file" in r.stderr
    truth = tmp_path / "t.jsonl"
    truth.write_text(json.dumps({"url": "http://h/a", "ok": True, "cluster": 0, "class": "a"}) + "\n")
    r = dust("eval", "--truth", str(truth), str(tmp_path / "nope.json"), "--no-w3lib")
    assert r.returncode == 2 and "no such rule file" in r.stderr
    (tmp_path / "bad.json").write_text("{}")
    r = dust("eval", "--truth", str(truth), str(tmp_path / "bad.json"), "--no-w3lib")
    assert r.returncode == 2 and "not a rule document" in r.stderr
    log = tmp_path / "a.log"
    log.write_text('127.0.0.1 - - [25/Nov/2026:10:00:00 +0000] "GET / HTTP/1.1" 200 5 "-" "x"\n')
    r = dust("truth", str(log), "--site", "h.test", "--sites", str(tmp_path / "none.json"), "-o", str(truth))
    assert r.returncode == 2 and "no such sites file" in r.stderr
    (tmp_path / "sites.json").write_text("{}")
    r = dust("truth", str(log), "--site", "h.test", "--sites", str(tmp_path / "sites.json"), "-o", str(truth))
    assert r.returncode == 2 and "has no origins for site 'h.test'" in r.stderr
