"""A URL list as a source (issue 28 item 5): the format ``urls``, ``--urls``, listed URLs that are
test URLs for the validator and never Figure 1 evidence."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from dustbuster.core.errors import ParseError
from dustbuster.core.mining.mine import mine
from dustbuster.core.urls.urllist import URLList
from dustbuster.logs.formats import FORMATS, parse_urls, sniff
from dustbuster.logs.reader import read_urllist
from dustbuster.logs.record import Context, Skip

from tests.conftest import ROOT

LOG = ROOT / "tests/data/logs/monitorware-twiki/access_log"


def test_parse_urls():
    ctx = Context(site="w.org")
    rec = parse_urls("http://W.org/a?b=1#frag\n", ctx)
    assert (rec.url, rec.status, rec.size, rec.listed) == ("http://w.org/a?b=1", None, None, True)
    assert parse_urls("/index.php?title=Main", ctx).url == "http://w.org/index.php?title=Main"
    for blank in ("", "   \n", "# a comment"):
        with pytest.raises(Skip):
            parse_urls(blank, ctx)
    with pytest.raises(ParseError):
        parse_urls("GET /a HTTP/1.1", ctx)
    assert "urls" in FORMATS


def test_sniff_finds_a_url_list_and_never_takes_a_log_for_one():
    ctx = Context(site="w.org")
    assert sniff(["http://w.org/a", "/b?x=1", ""], ctx) == "urls"
    head = LOG.read_text(encoding="utf-8", errors="replace").splitlines()[:20]
    assert sniff(head, ctx) != "urls"


def test_listed_urls_stay_apart_until_the_log_has_them():
    ul = URLList()
    ul.list_only("http://h/a")
    ul.list_only("http://h/b")
    ul.add("http://h/b", 200, 10)
    ul.list_only("http://h/b")
    assert list(ul) == ["http://h/b"] and list(ul.listed) == ["http://h/a"]
    assert ul.test_urls() == ["http://h/b", "http://h/a"] and len(ul) == 1


def test_read_urllist_lists_a_url_file_apart(tmp_path):
    f = tmp_path / "frontier.txt"
    f.write_text("http://w.org/a?x=1\n/a?x=2\n\n", encoding="utf-8")
    ul, stats = read_urllist([f], "urls", "w.org")
    assert len(ul) == 0 and list(ul.listed) == ["http://w.org/a?x=1", "http://w.org/a?x=2"]


@pytest.mark.parametrize("bulk", [True, False])
def test_a_url_list_then_a_log_of_the_same_urls_lists_them_once(tmp_path, bulk):
    """The bulk reader writes the log's URLs in blocks: a URL the list named first is then no
    longer only listed, as URLList.add makes it on the line loop (review finding)."""
    ul0, _ = read_urllist([LOG], "common", "twiki.test", bulk=False)
    f = tmp_path / "frontier.txt"
    f.write_text("\n".join([*list(ul0)[:5], "http://twiki.test/only-listed"]) + "\n", encoding="utf-8")
    ul, _ = read_urllist([f, LOG], "auto", "twiki.test", bulk=bulk)
    assert list(ul.listed) == ["http://twiki.test/only-listed"]
    tests = ul.test_urls()
    assert len(tests) == len(set(tests)) == len(ul0) + 1


def _frontier(tmp_path):
    ul, _ = read_urllist([LOG], "common", "twiki.test")
    urls = [u.replace("?rev=", "?rev=9") for u in ul] + [u + "&sid=1" if "?" in u else u + "?sid=1" for u in ul]
    f = tmp_path / "frontier.txt"
    f.write_text("\n".join(urls) + "\n", encoding="utf-8")
    return ul, f


def test_listed_urls_are_no_mining_evidence(tmp_path):
    """The same candidates with and without a URL list of 1,200 more URLs (Figure 1 and every
    comparison read the log's URLs only)."""
    ul, f = _frontier(tmp_path)
    plain = mine(ul).to_json()
    both, _ = read_urllist([LOG], "common", "twiki.test")
    more, _ = read_urllist([f], "urls", "twiki.test")
    for u in more.listed:
        both.list_only(u)
    assert len(both.listed) > 500
    mixed = mine(both).to_json()
    assert mixed["rules"] == plain["rules"]


def test_mine_cli_reads_url_lists(tmp_path):
    _, f = _frontier(tmp_path)
    out = subprocess.run([sys.executable, "-m", "dustbuster", "mine", str(LOG), "--site", "twiki.test",
                          "--format", "common", "--urls", str(f), "--json"],
                         capture_output=True, text=True, check=True, cwd=ROOT)
    doc = json.loads(out.stdout)
    assert doc["stats"]["listed_urls"] > 500
    assert doc["stats"]["candidates"] == len(doc["rules"])
    assert "listed (--urls)" in out.stderr and "candidates" in out.stderr


def test_validate_samples_the_listed_urls_too(tmp_path):
    """``dustbuster validate --urls``: a crawler's URLs join the test list (the validator's samples)."""
    from tests.simsite import start_sim_site, write_sim_log, write_sites

    sim, port = start_sim_site()
    try:
        log, more = tmp_path / "sim.log", tmp_path / "more.log"
        run = [sys.executable, "-m", "dustbuster"]
        write_sim_log(port, log, 3000)
        write_sim_log(port, more, 6000)
        seen, _ = read_urllist([log], "auto", "forum.test")
        ul, _ = read_urllist([more], "auto", "forum.test")
        frontier = tmp_path / "frontier.txt"
        frontier.write_text("\n".join(u for u in ul if u not in seen) + "\n", encoding="utf-8")
        sites, out = tmp_path / "sites.json", tmp_path / "rules.json"
        write_sites(sites, port)
        r = subprocess.run([*run, "validate", str(log), "--site", "forum.test", "--sites", str(sites), "--urls",
                            str(frontier), "-o", str(out)], cwd=ROOT, capture_output=True, text=True, timeout=600)
        assert r.returncode == 0, r.stderr
        doc = json.loads(out.read_text())
        assert doc["stats"]["listed_urls"] > 0 and "listed (--urls)" in r.stderr
        assert doc["rules"] and doc["stats"]["set_check"]["passed"] is True
    finally:
        sim.terminate()
        sim.wait(10)
