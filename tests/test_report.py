"""``dustbuster report``: the site owner's report (dustbuster.core.report.sitereport, dustbuster.cli.reporthtml):
its numbers on a small made-up site, the command, and the page in a real headless browser."""

from __future__ import annotations

import json
import subprocess
import sys

from dustbuster.core import ParamRule, SubstringRule
from dustbuster.core.report.sitereport import advice, site_report
from dustbuster.core.model.scopedrules import QueryRule
from tests.conftest import ROOT

EV = {"positives": 30, "negatives": 0, "distinct_pages": 12, "fetches": 40, "reason": "confirmed",
      "samples": [["http://h.test/a?sid=1", "http://h.test/a", "similar"]]}
DOC = {"site": "h.test", "version": 3, "rules": [
    ParamRule("sid", "remove", status="valid", evidence=EV).to_json(),
    SubstringRule.from_parts("http://www.h.test/", "http://h.test/", anchor_start=True, status="valid", evidence=EV).to_json(),
    ParamRule("ref", "remove", status="likely").to_json()]}  # not validated: not in the report
URLS = {"http://h.test/a": 5, "http://h.test/a?sid=1": 2, "http://h.test/a?sid=2": 1, "http://www.h.test/a": 1,
        "http://h.test/b?ref=x": 1, "http://h.test/b": 3, "http://h.test/wiki/c?sid=9&x=1": 1, "http://h.test/wiki/c?x=1": 1}


def truth() -> dict:
    page = {"http://h.test/a": 0, "http://h.test/a?sid=1": 0, "http://h.test/a?sid=2": 0, "http://www.h.test/a": 0,
            "http://h.test/b?ref=x": 1, "http://h.test/b": 1, "http://h.test/wiki/c?sid=9&x=1": 2, "http://h.test/wiki/c?x=1": 2}
    return {u: {"url": u, "cluster": c} for u, c in page.items()}


def test_report_numbers():
    rep = site_report("h.test", DOC, URLS, truth())
    assert (rep["urls"], rep["canonical"], rep["duplicates"], rep["hits"]) == (8, 4, 4, 15)
    assert rep["duplicate_share"] == 0.5 and rep["duplicate_hits"] == 2 + 1 + 1 + 1
    assert [r["rule"] for r in rep["rules"]] == [DOC["rules"][0]["display"], DOC["rules"][1]["display"]]
    assert [r["urls_rewritten"] for r in rep["rules"]] == [3, 1]
    assert rep["rules"][0]["evidence"]["distinct_pages"] == 12 and rep["rules"][0]["samples"]
    assert rep["rules"][0]["advice"]["robots"] == "Clean-param: sid"
    assert "301" in rep["rules"][1]["advice"]["redirect"] and "one host name" in rep["rules"][1]["advice"]["redirect"]
    assert rep["parameters"] == [{"name": "sid", "duplicates": 3}]
    assert rep["classes"][0] == {"class": "a", "urls": 4, "duplicates": 3}
    t = rep["truth"]
    assert (t["pages"], t["duplicates"], t["left"], t["false_merges"]) == (3, 5, 1, 0)  # ?ref=x is left
    assert t["found"] == 4 and t["found_share"] == 0.8
    json.dumps(rep)


def test_advice_per_rule_type():
    assert advice(ParamRule("utm", "remove", scope="/blog"))["robots"] == "Clean-param: utm /blog/"
    assert "robots" not in advice(ParamRule("p", "replace", "1")) and "p=1" in advice(ParamRule("p", "replace", "1"))["redirect"]
    assert "without the query" in advice(QueryRule("", "drop"))["redirect"]
    assert "canonical" in advice(SubstringRule.from_parts("/print/", "/"))


def write_inputs(tmp_path):
    log = tmp_path / "access.log"
    lines = []
    for u, n in URLS.items():
        host, path = u[7:].split("/", 1)
        lines += [f'{host} 10.0.0.1 - - [25/Nov/2026:10:00:00 +0000] "GET /{path} HTTP/1.1" 200 100 "-" "t"'] * n
    log.write_text("\n".join(lines) + "\n")
    rules = tmp_path / "rules.json"
    rules.write_text(json.dumps(DOC))
    tr = tmp_path / "truth.jsonl"
    tr.write_text("".join(json.dumps(r) + "\n" for r in truth().values()))
    return log, rules, tr


def test_report_command(tmp_path):
    log, rules, tr = write_inputs(tmp_path)
    html, js = tmp_path / "r.html", tmp_path / "r.json"
    r = subprocess.run([sys.executable, "-m", "dustbuster", "report", "--site", "h.test", "--rules", str(rules), str(log),
                        "--truth", str(tr), "--html", str(html), "--json", str(js)], cwd=ROOT, capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    assert "4 of 8 URLs are duplicates" in r.stderr
    rep = json.loads(js.read_text())
    assert rep["duplicates"] == 4 and rep["truth"]["pages"] == 3
    page = html.read_text()
    assert page.count("<svg") == 1 and "<script" not in page and "http" not in page.split("<body>")[0].replace(
        "http-equiv", "")  # self-contained: nothing fetched
    assert "Clean-param: sid" in page
    bad = subprocess.run([sys.executable, "-m", "dustbuster", "report", "--site", "other.test", "--rules", str(rules),
                          str(log)], cwd=ROOT, capture_output=True, text=True)
    assert bad.returncode != 0 and "not of other.test" in bad.stderr


def test_report_in_a_real_browser(tmp_path):
    from tests.browser import chrome, screenshot

    log, rules, tr = write_inputs(tmp_path)
    html = tmp_path / "r.html"
    subprocess.run([sys.executable, "-m", "dustbuster", "report", "--site", "h.test", "--rules", str(rules), str(log),
                    "--truth", str(tr), "--html", str(html), "-q"], cwd=ROOT, check=True)
    d = chrome()
    try:
        d.get(html.as_uri())
        assert d.title == "Duplicate URLs of h.test"
        bars = d.find_elements("css selector", "#plot g.bar")
        assert len(bars) == 3 and "3 / 4" in bars[0].text
        red = d.find_elements("css selector", "#plot g.bar rect")[1]
        assert red.size["width"] > 0 and red.get_attribute("fill") == "#e45756"
        rows = d.find_elements("css selector", "tr.rule")
        assert len(rows) == 2 and "Clean-param: sid" in rows[0].text and "12 distinct pages" in rows[0].text
        assert "50.0%" in d.find_element("css selector", ".cards").text
        assert "sid" in d.find_element("css selector", "#params").text
        screenshot(d, "report-made-up.png", tmp_path, publish=False)  # made-up data: not for docs
    finally:
        d.quit()


def test_a_report_without_parameter_duplicates_says_so():
    from dustbuster.cli.reporthtml import render

    doc = DOC | {"rules": [DOC["rules"][1]]}  # the host rule only: no parameter removed
    html = render(site_report("h.test", doc, URLS))
    assert "No duplicate URL here differs from its canonical URL by a query parameter." in html
    assert "No duplicate URL here" not in render(site_report("h.test", DOC, URLS))
