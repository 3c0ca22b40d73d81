"""The dashboard's data (agents/dashboard_state.py, dashboard_view.py, dashboard_feed.py) and its
routes (agents/dashboard.py) in-process, numbers worked by hand.  The page itself is driven in a
real browser by tests/test_dashboard_browser.py."""

from __future__ import annotations

import asyncio
import json
from collections import Counter

import pytest
from aiohttp.test_utils import TestClient, TestServer

from dustbuster.agents.api import make_api
from dustbuster.agents.dashboard_feed import CandidatesFollower
from dustbuster.agents.dashboard_state import DashboardState, Rounds
from dustbuster.agents.dashboard_view import ViewCache, snapshot
from dustbuster.core import ParamRule, SubstringRule
from dustbuster.core.errors import RuleError
from dustbuster.core.canon.rulebook import RuleBook
from dustbuster.agents.metrics import Metrics

from dustdev.dashboard import record_versions

R = SubstringRule.from_parts
SID = ParamRule("sid", "remove", status="valid", evidence={"positives": 95, "negatives": 0, "samples": [
    ["http://forum.test/story_1?sid=9", "http://forum.test/story_1", "similar"]]}).to_json()
WWW = R("http://www.", "http://", True, status="valid").to_json()
STORY = R("/story?id=", "/story_", status="valid", evidence={"positives": 40, "negatives": 1}).to_json()
URLS = ["http://www.forum.test/story?id=1", "http://forum.test/story_1", "http://forum.test/story?id=1&sid=9",
        "http://forum.test/story_2"]


def doc(version: int, *rules: dict) -> dict:
    return {"site": "forum.test", "version": version, "created": 1795650000.0 + version, "rules": list(rules),
            "stats": {"candidates": 9, "fetches": 300, "set_check": {"passed": True, "rounds": 1, "dropped": []}}}


def cand(window: int, lines: int, urls: int, test_urls=URLS, rules=()) -> dict:
    return {"site": "forum.test", "window": window, "rules": list(rules), "param_rules": [],
            "stats": {"lines": lines, "urls": urls}, "test_urls": list(test_urls)}


def test_traffic_keeps_a_series_per_site_and_the_newest_candidate_set():
    st = DashboardState()
    st.add_candidates("forum.test", 100.0, cand(1, 500, 300))
    st.add_candidates("forum.test", 160.0, cand(3, 1500, 700))
    st.add_candidates("forum.test", 170.0, cand(2, 1000, 500))  # an older window read late: ignored
    tr = st.traffic["forum.test"]
    assert [(p.window, p.lines, p.urls) for p in tr.points] == [(1, 500, 300), (3, 1500, 700)]
    assert tr.candidates["window"] == 3 and "test_urls" not in tr.candidates and tr.test_urls == URLS


def test_rounds_show_progress_live_and_the_outcome():
    rounds = Rounds()
    c = cand(7, 1, 1, rules=[WWW, STORY, STORY]) | {"param_rules": [SID]}
    rp = rounds.begin("forum.test", c)
    counts: Counter = Counter()
    rp.watch(counts)  # the fetcher's counts, read live
    counts["ok"] += 40
    counts["soft_error"] += 2

    class V:
        def __init__(self, valid, reason=""):
            self.valid, self.reason = valid, reason

    hook = rp.chain(None)
    for v in (V(True), V(False), V(None), V(True, "cached")):
        hook(v)
    now = rp.started + 4.0
    j = rp.to_json(now)
    assert (j["to_decide"], j["decided"], j["valid"], j["invalid"], j["undecided"], j["cached"]) == (4, 4, 2, 1, 1, 1)
    assert j["fetches"] == 42 and j["fetch_outcomes"] == {"ok": 40, "soft_error": 2} and j["fetch_rate"] == 10.5
    assert rounds.for_site("forum.test") == (rp, None)
    rounds.end(rp, object())  # a RuleSet was returned: published
    counts["ok"] += 100  # the fetcher lives on elsewhere: the finished round keeps its numbers
    assert rounds.for_site("forum.test") == (None, rp)
    assert rp.to_json()["outcome"] == "published" and rp.to_json()["fetches"] == 42
    for result, outcome in (("unchanged", "unchanged"), ("unconfigured", "unconfigured"), (None, "tombstone"),
                            (ValueError("x"), "failed")):
        r = rounds.begin("forum.test", c)
        rounds.end(r, result)
        assert r.outcome == outcome


class FakeFollower:
    def __init__(self, book: RuleBook) -> None:
        self.on_update = book.update


def test_versions_record_what_was_added_and_removed_and_what_was_refused():
    book, st = RuleBook(), DashboardState()
    f = FakeFollower(book)
    record_versions(f, book, st.versions)
    f.on_update("forum.test", doc(1, SID, WWW))
    f.on_update("forum.test", doc(1, SID, WWW))  # read again: no new entry
    f.on_update("forum.test", doc(2, SID, STORY))
    with pytest.raises(RuleError):
        f.on_update("forum.test", doc(1, SID))  # stale: the follower counts it, the log shows it
    f.on_update("forum.test", None)
    vs = st.versions.for_site("forum.test")
    assert [v["version"] for v in vs] == [1, 2, 1, None]
    assert vs[0]["added"] == ["remove sid=*", '"^http://www." → "^http://"'] and vs[0]["removed"] == []
    assert vs[1]["added"] == ['"/story?id=" → "/story_"'] and vs[1]["removed"] == ['"^http://www." → "^http://"']
    assert vs[2]["refused"] == "stale_version" and book.sites == {}
    assert vs[3]["removed"] == ["remove sid=*", '"/story?id=" → "/story_"'] and vs[3]["rules"] == 0


def test_snapshot_redundancy_evidence_and_test_urls_changed_by_hand():
    book, st = RuleBook(), DashboardState()
    book.update("forum.test", doc(3, SID, WWW, STORY))
    st.add_candidates("forum.test", 100.0, cand(5, 40, 4, rules=[R("/", "", status="likely").to_json() | {"support": 3},
                                                                  STORY | {"status": "likely", "support": 9}]))
    snap = snapshot(st, book, None, ViewCache(), "w:1", now=200.0)
    assert snap["site"] == "forum.test" and [r["site"] for r in snap["sites"]] == ["forum.test"]
    row = snap["sites"][0]
    assert (row["lines"], row["urls"], row["version"], row["rules"], row["candidates"]) == (40, 4, 3, 3, 2)
    # 4 URLs: the first three are story 1 (www., ?id=, sid) → 2 canonical URLs: 50 %
    assert row["redundancy"] == {"urls": 4, "unique_before": 4, "unique_after": 2, "discovered_redundancy": 0.5}
    d = snap["detail"]
    pub = {r["display"]: r for r in d["published"]["rules"]}
    assert pub["remove sid=*"]["changes"] == {"count": 1, "examples": [[URLS[2], "http://forum.test/story?id=1"]]}
    assert pub['"^http://www." → "^http://"']["changes"]["count"] == 1
    assert pub['"/story?id=" → "/story_"']["changes"]["count"] == 2
    assert pub["remove sid=*"]["evidence"]["positives"] == 95
    assert pub["remove sid=*"]["samples"] == [{"u": "http://forum.test/story_1?sid=9", "v": "http://forum.test/story_1",
                                              "outcome": "similar"}]
    assert d["published"]["set_check"]["passed"] is True and d["published"]["test_urls"] == 4
    c = d["candidates"]
    assert c["status"] == "likely, not validated" and [r["display"] for r in c["rules"]] == [
        '"/story?id=" → "/story_"', '"/" → ""']  # ranked by support
    assert c["rules"][1]["unsafe"].startswith("not a URL")  # "/" → "" breaks URLs: flagged as mine flags it
    assert snapshot(st, book, "nosuch.test", ViewCache())["site"] == "forum.test"  # unknown: the first site


def test_candidates_follower_skips_junk_and_keeps_good_sets():
    st = DashboardState()
    f = CandidatesFollower("127.0.0.1:1", "t-candidates", st)
    assert f.apply(b"forum.test", b"\xff not json", 1000) is False
    assert f.apply(b"forum.test", json.dumps({"site": "forum.test", "window": "x"}).encode(), 1000) is False
    assert f.apply(b"forum.test", json.dumps(cand(4, 10, 3)).encode(), 1795650000123) is True
    assert st.candidate_sets_skipped == 2 and st.candidate_sets_read == 1
    assert st.traffic["forum.test"].points[-1].t == pytest.approx(1795650000.123)


def run_api(fn, token: str = "s3cret"):
    book, st = RuleBook(), DashboardState()
    book.update("forum.test", doc(3, SID, WWW, STORY))
    st.add_candidates("forum.test", 100.0, cand(5, 40, 4))
    app = make_api(book, Metrics(), token=token, dashboard=st)

    async def go():
        async with TestClient(TestServer(app, host="127.0.0.1")) as client:
            await fn(client)
    asyncio.run(go())


def test_routes_page_open_data_behind_the_token():
    async def check(c):
        r = await c.get("/")
        assert r.status == 200 and r.content_type == "text/html" and "dashboard.js" in await r.text()
        assert "script-src 'self'" in r.headers["Content-Security-Policy"]
        for name, ctype in (("dashboard.js", "text/javascript"), ("dashboard.css", "text/css")):
            r = await c.get("/dashboard/static/" + name)
            assert r.status == 200 and r.content_type == ctype
        assert (await c.get("/dashboard/static/nosuch.js")).status == 404
        r = await c.get("/dashboard/state.json")
        assert r.status == 401 and (await r.json())["reason"] == "unauthorized"
        r = await c.get("/dashboard/state.json?site=forum.test", headers={"Authorization": "Bearer s3cret"})
        assert r.status == 200
        body = await r.json()
        assert body["detail"]["published"]["version"] == 3 and body["sites"][0]["urls"] == 4
        assert (await c.get("/sites")).status == 401  # the other routes keep their token
    run_api(check)


def test_a_rule_decided_from_the_cache_shows_the_samples_fetched_when_it_was_decided():
    book, st = RuleBook(), DashboardState()
    f = FakeFollower(book)
    record_versions(f, book, st.versions)
    f.on_update("forum.test", doc(1, SID, WWW))
    cached = dict(SID, evidence={"positives": 95, "negatives": 0, "reason": "cached"})  # no samples
    f.on_update("forum.test", doc(2, cached, STORY))
    rules = {r["display"]: r for r in snapshot(st, book, None, ViewCache())["detail"]["published"]["rules"]}
    assert rules["remove sid=*"]["samples_version"] == 1 and rules["remove sid=*"]["samples"][0]["outcome"] == "similar"
    assert rules['"/story?id=" → "/story_"']["samples"] == [] and rules['"/story?id=" → "/story_"']["samples_version"] == 2
    assert set(st.versions.samples["forum.test"]) == {"remove sid=*"}  # only the current rules are kept
