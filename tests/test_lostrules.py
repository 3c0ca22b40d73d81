"""Pages lost by the rules (bench/quality/lostrules.py, issue 28): tiny synthetic crawls, counted by
bench/quality/crawls.py's ``numbers`` as `make quality` counts them, and the --recount of a run folder."""

from __future__ import annotations

import json
import random
import sys

import pytest

from tests.conftest import ROOT

pytest.importorskip("scrapy", reason="Scrapy is not installed (pip install -e '.[test]' or '.[scrapy]')")
sys.path.insert(0, str(ROOT / "bench" / "quality"))

from crawls import main as crawls_main, numbers  # noqa: E402
from crawleff import crawl_table  # noqa: E402
from lostrules import rules_key  # noqa: E402

from dustbuster.core import ParamRule  # noqa: E402
from dustbuster.core.report.truth import signature  # noqa: E402

SITE = "http://forum.test"
PLAIN, OURS = "scrapy", "scrapy + our rules"


def page(seed: int) -> dict:
    """The signature of a page of its own (400 words drawn by ``seed``: no two pages alike)."""
    rnd = random.Random(seed)
    body = " ".join(f"w{rnd.randrange(100000)}" for _ in range(400))
    return signature(f"<html><body><p>{body}</p></body></html>".encode(), "text/html").to_json()


def fetch(path: str, content: int, final: str = "", status: int = 200) -> dict:
    return {"url": SITE + path, "response_url": SITE + (final or path), "status": status, "sig": page(content)}


def crawl(*responses: dict) -> dict:
    return {"responses": list(responses), "stats": {"downloader/response_count": len(responses)}, "seconds": 1.0}


def by_query_dropped(url: str) -> bytes:
    """A key that drops the query string: merges /p?id=1 with /p?id=2."""
    return url.split("?")[0].encode()


def count(plain: dict, ours: dict, key=by_query_dropped) -> dict:
    return numbers({PLAIN: plain, OURS: ours}, 1, 1, {OURS: key})["crawls"][OURS]


def test_a_rule_merging_two_different_pages_loses_one():
    plain = crawl(fetch("/p?id=1", 1), fetch("/p?id=2", 2), fetch("/", 0))
    ours = crawl(fetch("/p?id=1", 1), fetch("/", 0))
    row = count(plain, ours)
    assert (row["missed"], row["lost_by_rules"], row["not_reached"]) == (1, 1, 0)
    assert row["lost_examples"] == [SITE + "/p?id=2"]
    assert row["at_risk_reached"] == 1  # /p?id=1's page: this crawl fetched it first, another order loses it


def test_a_duplicate_merged_rightly_loses_nothing():
    plain = crawl(fetch("/p?id=1", 1), fetch("/p?id=1&sid=9", 1), fetch("/", 0))
    ours = crawl(fetch("/p?id=1", 1), fetch("/", 0))
    row = count(plain, ours)
    assert (row["missed"], row["lost_by_rules"], row["not_reached"]) == (0, 0, 0)


def test_one_url_merged_wrongly_and_another_safe_is_not_lost():
    # content 2 shows at /p?id=2 (merged with /p?id=1's page by the key) and at /page2 (a key of its own)
    plain = crawl(fetch("/p?id=1", 1), fetch("/p?id=2", 2), fetch("/page2", 2))
    ours = crawl(fetch("/p?id=1", 1))
    row = count(plain, ours)
    assert (row["missed"], row["lost_by_rules"], row["not_reached"]) == (1, 0, 1)


def test_budget_only_misses_are_not_reached_not_lost():
    plain = crawl(*(fetch(f"/t/{i}", i) for i in range(6)))
    ours = crawl(*(fetch(f"/t/{i}", i) for i in range(2)))
    row = count(plain, ours, key=lambda url: url.encode())
    assert (row["missed"], row["lost_by_rules"], row["not_reached"], row["changed"]) == (4, 0, 4, 0)
    assert row["not_reached_examples"] == [SITE + f"/t/{i}" for i in range(2, 6)]


def test_a_page_changed_between_crawls_is_neither_lost_nor_merged():
    # /feed showed content 1 to the plain crawl and content 2 to ours: the same URL is no false merge
    plain = crawl(fetch("/feed", 1), fetch("/", 0))
    ours = crawl(fetch("/feed", 2), fetch("/", 0))
    row = count(plain, ours, key=lambda url: url.encode())
    assert (row["missed"], row["lost_by_rules"], row["not_reached"], row["changed"]) == (1, 0, 1, 1)


def test_a_redirect_is_judged_by_both_of_its_urls():
    # /go → /p?id=2: the first URL has a key of its own, but the page it ends at shares its key with
    # /p?id=1's page, so the redirected request is dropped: content 2 is lost
    plain = crawl(fetch("/p?id=1", 1), fetch("/go", 2, final="/p?id=2"))
    assert count(plain, crawl(fetch("/p?id=1", 1)))["lost_by_rules"] == 1
    # a redirect that continues its own fetch (both URLs one key) keeps the page
    plain = crawl(fetch("/p?id=1", 1), fetch("/p?id=2", 2, final="/p?id=2&x=1"))
    assert count(plain, crawl(fetch("/p?id=1", 1)), key=lambda u: u.split("&")[0].encode())["lost_by_rules"] == 0


def test_an_error_page_merged_with_a_page_hides_it():
    plain = crawl(fetch("/p?id=1", 1), fetch("/p?id=2", 2, status=404))
    assert count(plain, crawl(fetch("/p?id=1", 1)))["lost_by_rules"] == 0  # this crawl reached it first
    row = count(plain, crawl(fetch("/p?id=2", 2, status=404)))
    assert (row["lost_by_rules"], row["not_reached"]) == (1, 0)
    # a URL that answered 404 to one crawl and the page to another (a page restored) hides nothing
    plain = crawl(fetch("/p?id=1", 1), fetch("/", 0))
    assert count(plain, crawl(fetch("/p?id=1", 1, status=404), fetch("/", 0)))["lost_by_rules"] == 0


def test_the_key_is_the_fingerprinter_of_the_rules(tmp_path):
    rules = tmp_path / "rules.json"
    rules.write_text(json.dumps({"site": "forum.test", "version": 1, "rules": [
        ParamRule("id", "remove", status="valid").to_json()]}))  # a wrong rule: id names the page
    plain = crawl(fetch("/p?id=1", 1), fetch("/p?id=2", 2), fetch("/p?id=3&sid=1", 3), fetch("/p?sid=1", 3))
    row = count(plain, crawl(fetch("/p?id=1", 1)), key=rules_key(rules))
    # /p?id=1 and /p?id=2 are both /p: content 2 lost (this crawl fetched content 1 there); content 3's
    # two URLs are both /p?sid=1, a right merge
    assert (row["lost_by_rules"], row["at_risk_reached"], row["not_reached"]) == (1, 1, 1)


def test_recount_of_a_run_folder_and_old_results(tmp_path, capsys):
    app = tmp_path / "mediawiki"
    app.mkdir()
    (app / "rules.json").write_text(json.dumps({"site": "forum.test", "version": 1, "rules": [
        ParamRule("id", "remove", status="valid").to_json()]}))
    crawls = {"scrapy": crawl(fetch("/p?id=1", 1), fetch("/p?id=2", 2)),
              "scrapy-with-our-rules": crawl(fetch("/p?id=1", 1)),
              "scrapy-with-hand-canonicalizer": crawl(fetch("/p?id=1", 1), fetch("/p?id=2", 2))}
    for name, doc in crawls.items():
        (app / f"crawl-{name}.json").write_text(json.dumps(doc))
    old_row = {"downloads": 1, "pages": 1, "distinct": 1, "missed": 1, "seconds": 1.0, "missed_examples": [],
               "per_download": 1.0}
    old = {"crawls": {n: old_row for n in ("scrapy", OURS, "scrapy + hand canonicalizer")}, "budget": 10,
           "distinct_all": 2, "seeds": 1, "rules": 1}
    (app / "result.json").write_text(json.dumps({"app": "mediawiki", "crawl": old}))
    table = crawl_table({"crawl": old})  # a result of before the split stays readable
    assert "| not counted | 1 (missed, not split) |" in table and "--recount" in table
    assert crawls_main(["--recount", str(app), "--write"]) == 0
    out = capsys.readouterr().out
    assert "| lost by the rules | not reached within the budget |" in out
    new = json.loads((app / "result.json").read_text())["crawl"]
    assert new["budget"] == 10 and new["crawls"][OURS]["lost_by_rules"] == 1
    assert new["crawls"]["scrapy + hand canonicalizer"]["lost_by_rules"] == 0


def test_crawls_doc_shows_the_lost_in_brackets(tmp_path):
    from crawls import write_doc

    plain = crawl(fetch("/p?id=1", 1), fetch("/p?id=2", 2))
    res = {"app": "forum", "kind": "made up", "max": 10} | numbers(
        {"scrapy": plain, "scrapy key-only": crawl(fetch("/p?id=1", 1))}, 1, 1, {"scrapy key-only": by_query_dropped})
    write_doc([res], tmp_path / "crawls.md")
    doc = (tmp_path / "crawls.md").read_text()
    assert "| missed (lost by the rules) |" in doc and "| scrapy key-only | 1 | 1 | 1 | 1 (1) | 1 |" in doc


def test_recount_refuses_a_folder_without_a_run(tmp_path):
    with pytest.raises(SystemExit, match="no result.json"):
        crawls_main(["--recount", str(tmp_path)])
    (tmp_path / "result.json").write_text(json.dumps({"app": "mediawiki"}))
    with pytest.raises(SystemExit, match="no crawl numbers"):
        crawls_main(["--recount", str(tmp_path)])


def test_a_page_that_changed_between_crawls_under_another_origin_is_not_lost():
    """Trac's old wiki version shows relative times: the plain crawl saw it at the bare host, ours at
    ``www.`` minutes later and found another text.  One page of the deployment, two versions: the
    key that merges the two origins loses nothing (the hand canonicalizer "lost" 29 so)."""
    www = "http://www.forum.test"
    plain = crawl(fetch("/wiki/A?version=1", 1), fetch("/", 0))
    ours = crawl({**fetch("/wiki/A?version=1", 2), "url": www + "/wiki/A?version=1",
                  "response_url": www + "/wiki/A?version=1"}, fetch("/", 0))
    row = count(plain, ours, key=lambda url: url.replace("://www.", "://").encode())
    assert (row["missed"], row["lost_by_rules"]) == (1, 0)
    # two different pages merged by the key stay lost, versions or not
    plain = crawl(fetch("/p?id=1", 1), fetch("/p?id=2", 2), fetch("/", 0))
    assert count(plain, crawl(fetch("/p?id=1", 1), fetch("/", 0)))["lost_by_rules"] == 1
