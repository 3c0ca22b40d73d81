"""The dustbuster command, run in a subprocess as users run it."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from tests.conftest import LOGS, ROOT
from tests.ruledocs import by_list

TWIKI = str(LOGS / "monitorware-twiki" / "access_log")


def dust(*args, stdin=None):
    return subprocess.run(
        [sys.executable, "-m", "dustbuster", *args], cwd=ROOT, input=stdin, capture_output=True, text=True, timeout=120
    )


def test_help_explains():
    r = dust("--help")
    assert r.returncode == 0 and "mine" in r.stdout and "canonize" in r.stdout
    r = dust("mine", "--help")
    assert "--stage" in r.stdout and "thesis" in r.stdout and "--rejects" in r.stdout


def test_mine_table_and_summary():
    r = dust("mine", TWIKI, "--site", "monitorware.example")
    assert r.returncode == 0, r.stderr
    assert '"?rev=r1." → "?rev=1."' in r.stdout
    assert "1546 lines" in r.stderr and "malformed=1" in r.stderr


def test_mine_json_and_stage_detect(tmp_path):
    rej = tmp_path / "rejects.tsv"
    r = dust("mine", TWIKI, "--site", "monitorware.example", "--json", "--rejects", str(rej), "-q")
    doc = json.loads(r.stdout)
    assert set(doc) >= {"stats", "rules", "params"} and doc["schema"] == "dustbuster/mine@2"
    doc = doc | by_list(doc)
    assert doc["rules"][0]["alpha"] == "?rev=r1." and doc["rules"][0]["support"] == 5
    assert doc["stats"]["read"]["rejected"] == {"malformed": 1}
    assert rej.read_text().startswith(f"{TWIKI}:907\tmalformed")
    # the paper's exact size test (--size-slack 0) finds 8 likely pairs; the default 2 % slack
    # (core/urls/urllist.py likely_similar) keeps those and finds 4 whose sizes differ by a few bytes
    exact = json.loads(dust("mine", TWIKI, "--site", "m", "--json", "-q", "--stage", "detect", "--size-slack", "0").stdout)
    exact = exact | by_list(exact)
    assert len(exact["rules"]) == exact["stats"]["likely_pairs"] == 8
    d = json.loads(dust("mine", TWIKI, "--site", "m", "--json", "-q", "--stage", "detect").stdout)
    d = d | by_list(d)
    assert len(d["rules"]) == d["stats"]["likely_pairs"] == 12
    assert {r["display"] for r in exact["rules"]} <= {r["display"] for r in d["rules"]}


def test_mine_parameters_are_passed():
    doc = json.loads(dust("mine", TWIKI, "--site", "m", "--json", "-q", "--ms", "2", "--t-low", "4", "--S", "12").stdout)
    assert doc["params"]["ms"] == 2 and doc["params"]["t_low"] == 4 and doc["params"]["S"] == 12


@pytest.mark.parametrize(
    "args, msg",
    [
        ((TWIKI,), "--site"),
        (("/nonexistent.log", "--site", "x"), "no such log file"),
        ((TWIKI, "--site", "x", "--t-low", "20"), "t_low must not exceed t_high"),
        ((TWIKI, "--site", "x", "--format", "xml"), "unknown format"),
    ],
)
def test_mine_errors_are_clear(args, msg):
    r = dust("mine", *args)
    assert r.returncode == 2 and msg in r.stderr and "Traceback" not in r.stderr


def test_canonize_reports_redundancy(tmp_path):
    rules = tmp_path / "rules.json"
    rules.write_text(dust("mine", TWIKI, "--site", "m.ex", "--json", "-q", "--size-slack", "0").stdout)  # the paper's size test
    urls = "http://m.ex/twiki/bin/view/Main/X?rev=r1.3\nhttp://m.ex/twiki/bin/view/Main/X?rev=1.3\n\nhttp://m.ex/y\n"
    r = dust("canonize", "--rules", str(rules), stdin=urls)  # mine's candidates are not validated: none applies
    assert r.returncode == 0, r.stderr
    assert r.stdout.splitlines() == urls.replace("\n\n", "\n").splitlines()
    assert "are not validated and are not applied (--unvalidated applies them)" in r.stderr
    assert "3 unique before, 3 after" in r.stderr and "(0 rules)" in r.stderr
    r = dust("canonize", "--rules", str(rules), "--unvalidated", stdin=urls)  # at the user's explicit risk
    assert r.returncode == 0, r.stderr
    assert r.stdout.splitlines() == ["http://m.ex/twiki/bin/view/Main/X?rev=1.3"] * 2 + ["http://m.ex/y"]
    assert "3 unique before, 2 after" in r.stderr and "33.3%" in r.stderr
    assert "warning: applying" in r.stderr and "rules that are not validated" in r.stderr
    assert "URLs changed by each rule" in r.stderr and '1  "?rev=r1." → "?rev=1."  [likely]' in r.stderr, r.stderr


def test_canonize_bad_rules_file(tmp_path):
    bad = tmp_path / "bad.json"
    bad.write_text("{nope")
    r = dust("canonize", "--rules", str(bad), stdin="")
    assert r.returncode == 2 and "not JSON" in r.stderr
    bad.write_text(json.dumps({"rules": [{"type": "substring", "alpha": "a"}]}))
    r = dust("canonize", "--rules", str(bad), stdin="")
    assert r.returncode == 2 and "lacks field 'beta'" in r.stderr


RULESET = {"schema": "dustbuster/ruleset@1", "site": "forum.test", "version": 3, "rules": [
    {"type": "parameter", "name": "sid", "action": "remove", "status": "valid"},
    {"type": "parameter", "name": "o", "action": "replace", "value": "asc", "status": "valid"},
    {"type": "substring", "alpha": "http://www.", "beta": "http://", "anchor_start": True, "status": "valid"},
    {"type": "substring", "alpha": "/a", "beta": "/b", "status": "invalid"},
]}


def test_export_formats_from_a_rule_file(tmp_path):
    from dustbuster.core.report.export import parse_nutch_xml

    f = tmp_path / "rs.json"
    f.write_text(json.dumps(RULESET))
    r = dust("export", "--rules", str(f), "--site", "forum.test", "--to", "nutch")
    assert r.returncode == 0, r.stderr
    assert len(parse_nutch_xml(r.stdout)) == 3 and "version 3" in r.stdout  # the invalid rule is not exported
    out = tmp_path / "c.json"
    r = dust("export", "--rules", str(f), "--site", "forum.test", "--to", "clearurls", "-o", str(out))
    doc = json.loads(out.read_text())
    assert r.returncode == 0 and "wrote 1 of 3 rules (2 skipped: the file says which and why)" in r.stderr
    assert doc["providers"]["dustbuster:forum.test"]["rules"] == ["sid"]
    assert doc["x-dustbuster"]["skipped"] == ["o=* → o=asc", '"^http://www." → "^http://"']
    r = dust("export", "--rules", str(f), "--site", "forum.test", "--to", "json", "--unvalidated")
    assert len(json.loads(r.stdout)["rules"]) == 4
    r = dust("export", "--rules", str(tmp_path / "none.json"), "--site", "x", "--to", "nutch")
    assert r.returncode == 2 and "no such rule file" in r.stderr
    r = dust("export", "--site", "x", "--to", "nutch")
    assert r.returncode == 2 and "one of the arguments --rules --from-topic is required" in r.stderr


def test_canonize_rule_file_modes(tmp_path):
    f = tmp_path / "rs.json"
    f.write_text(json.dumps(RULESET))
    urls = "HTTP://www.forum.test/a?sid=1&o=desc\n"
    r = dust("canonize", "--rules", str(f), "--json", "-q", stdin=urls)
    got = json.loads(r.stdout)
    assert got["canonical"] == "HTTP://www.forum.test/a?o=asc" and got["version"] == 3  # no normalization
    r = dust("canonize", "--rules", str(f), "--normalize", "-q", stdin=urls)
    assert r.stdout == "http://forum.test/a?o=asc\n"
    r = dust("canonize", "--rules", str(f), "--normalize", "--unvalidated", "-q", stdin=urls)
    assert r.stdout == "http://forum.test/b?o=asc\n"
