"""The validator goes quiet once a site's evidence is decided (agents/validator.py): verdicts,
undecided ones included, are kept with a growing back-off (state/verdicts.py); a candidate set whose
rules are unchanged starts no round while its verdicts hold; each site's fetches share one pace and
one hourly budget across origins and rounds (fetch/pacer.py); a window that only listed URLs changed
sends nothing (agents/windows.py); each new version says what changed and why."""

from __future__ import annotations

import asyncio
import time
import types
from collections import Counter

from aiohttp import web

from dustbuster.agents.validator import _SiteCache, candidates_key, round_needed, version_changes
from dustbuster.agents.windows import window_key
from dustbuster.core.model.rules import SubstringRule
from dustbuster.fetch.client import FetchPolicy, Fetcher
from dustbuster.fetch.pacer import SitePacer
from dustbuster.state.verdicts import VerdictStore
from tests.loopback import serve


class Clock:
    def __init__(self) -> None:
        self.t = 1000.0

    def __call__(self) -> float:
        return self.t


def test_an_undecided_verdict_is_kept_for_a_back_off_that_doubles(tmp_path, monkeypatch):
    store = VerdictStore(tmp_path / "v")
    now = [5000.0]
    monkeypatch.setattr("dustbuster.state.verdicts.time.time", lambda: now[0])
    try:
        tries = []
        for _ in range(4):
            store.put("s.test", "r", {"valid": None, "reason": "too_few"}, retry_s=100, ttl_s=500)
            v = store.stored("s.test", "r")
            tries.append((v["undecided_tries"], v["retry_s"]))
            assert store.get("s.test", "r", 500) is not None  # kept: no fetch before its back-off
            now[0] += v["retry_s"] + 1
            assert store.get("s.test", "r", 500) is None  # then tried again
        assert tries == [(1, 100), (2, 200), (3, 400), (4, 500)]  # doubling, at most the TTL
        store.put("s.test", "r", {"valid": True}, retry_s=100, ttl_s=500)  # decided: the TTL, the count starts over
        assert "retry_s" not in store.stored("s.test", "r") and store.get("s.test", "r", 500) is not None
        store.put("s.test", "r", {"valid": None}, retry_s=100, ttl_s=500)
        assert store.stored("s.test", "r")["undecided_tries"] == 1
    finally:
        store.close()


def cand(rules, window=1, test_urls=()):
    return types.SimpleNamespace(rules=rules, window=window, test_urls=list(test_urls))


def test_a_round_is_needed_only_for_new_candidates_or_an_expired_verdict(tmp_path, monkeypatch):
    rules = [{"type": "substring", "display": '"/a" → "/b"', "support": 5},
             {"type": "param", "display": "remove sid=* under /", "support": 9}]
    moved = [dict(r, support=r["support"] + 40) for r in reversed(rules)]
    assert candidates_key(cand(rules)) == candidates_key(cand(moved, window=7, test_urls=["http://s.test/x"]))
    assert candidates_key(cand(rules)) != candidates_key(cand(rules[:1]))
    store = VerdictStore(tmp_path / "v")
    now = [5000.0]
    monkeypatch.setattr("dustbuster.state.verdicts.time.time", lambda: now[0])
    try:
        cache = _SiteCache(store, "s.test", ttl_s=3600, retry_s=60)
        key = candidates_key(cand(rules))
        assert round_needed(store, cache, "s.test", key) == "new candidates"
        cache.put('"/a" → "/b"', {"valid": True})
        cache.put("remove sid=* under /", {"valid": None})
        store.set_round("s.test", {"key": key, "verdicts": ['"/a" → "/b"', "remove sid=* under /"]})
        assert round_needed(store, cache, "s.test", key) is None  # decided: nothing to fetch
        assert round_needed(store, cache, "s.test", candidates_key(cand(rules[:1]))) == "new candidates"
        now[0] += 61  # the undecided one's back-off ran out
        assert round_needed(store, cache, "s.test", key) == "1 verdicts expired"
    finally:
        store.close()


def test_the_pacer_keeps_an_hourly_budget(monkeypatch):
    clock = Clock()
    p = SitePacer(rate_per_s=0, per_hour=3, clock=clock)
    got = [asyncio.run(p.take()) for _ in range(4)]
    assert got == [True, True, True, False] and p.left() == 0 and p.refused == 1
    clock.t += 1800
    assert p.left() == 0 and p.used() == 3
    clock.t += 1800.5
    assert p.left() == 3 and asyncio.run(p.take())
    unlimited = SitePacer(rate_per_s=0, per_hour=0)
    assert all(asyncio.run(unlimited.take()) for _ in range(1000)) and unlimited.left() is None
    assert unlimited.used() == 0  # nothing kept without a budget


def test_one_pace_and_one_budget_for_all_origins_and_rounds():
    """A site behind several host names is one server: its rate holds across them and across
    rounds (two fetchers, one pacer), and its budget refuses the fetch beyond it without a request
    (robots.txt is asked again later, never taken as absent)."""
    async def go():
        hits: Counter = Counter()

        async def page(req):
            hits[req.host.split(":")[0] + req.path] += 1
            return web.Response(text="<p>" + " ".join(f"w{i}" for i in range(200)) + "</p>", content_type="text/html")

        a = web.Application()
        a.router.add_get("/{tail:.*}", page)
        runner, port = await serve(a)
        hosts = ("a.test", "b.test", "c.test", "d.test")
        policy = FetchPolicy(origins=frozenset(f"http://{h}:{port}" for h in hosts), allow_private=True,
                             resolve={h: "127.0.0.1" for h in hosts}, robots=False, rate_per_s=20)
        pacer = SitePacer(policy.rate_per_s, per_hour=9)
        t0 = time.monotonic()
        async with Fetcher(policy, pacer) as f1, Fetcher(policy, pacer) as f2:
            first = await asyncio.gather(*(f.fetch(f"http://{h}:{port}/p") for h in hosts for f in (f1, f2)))
            dt = time.monotonic() - t0
            more = [await f1.fetch(f"http://a.test:{port}/q"), await f2.fetch(f"http://b.test:{port}/q")]
        robots_policy = FetchPolicy(origins=policy.origins, allow_private=True, resolve=policy.resolve, robots=True)
        spent_pacer = SitePacer(0, per_hour=1)
        await spent_pacer.take()  # the hour's only fetch went to another round
        async with Fetcher(robots_policy, spent_pacer) as f3:
            spent = await f3.fetch(f"http://a.test:{port}/r")  # robots.txt not fetched: no answer either way
            again = await f3.fetch(f"http://a.test:{port}/r")
        await runner.cleanup()
        return first, dt, more, hits, spent, again, f3._robots

    first, dt, more, hits, spent, again, robots = asyncio.run(go())
    assert all(f.ok for f in first)
    assert dt >= 7 * (1 / 20) * 0.9  # eight requests over four hosts and two rounds: seven gaps at the site's rate
    assert more[0].ok and more[1].reason == "fetch_budget"  # nine in the hour, then no request
    assert sum(n for k, n in hits.items() if not k.endswith("robots.txt")) == 9
    assert hits["a.test/robots.txt"] == 0 and hits["a.test/r"] == 0
    assert spent.reason == "fetch_budget" and again.reason == "fetch_budget" and robots == {}


def test_a_window_that_only_listed_urls_changed_has_the_last_key():
    doc = {"rules": [{"display": "x", "support": 4}], "params": {"n": 40},
           "stats": {"lines": 100, "records": 90, "dropped_status": 10, "error_urls": 0, "listed": 0, "urls": 50}}
    linked = {**doc, "stats": {**doc["stats"], "lines": 140, "listed": 40, "urls": 90, "listed_urls": 40},
              "test_urls": ["http://s.test/new"]}
    logged = {**doc, "stats": {**doc["stats"], "lines": 101, "records": 91}}
    assert window_key(doc) == window_key(linked)
    assert window_key(doc) != window_key(logged)
    assert window_key(doc) != window_key({**doc, "rules": [{"display": "x", "support": 5}]})


def test_a_new_version_says_what_changed_and_why():
    kept, new, gone, dropped = (SubstringRule(a, b) for a, b in (("/a", "/b"), ("/c", "/d"), ("/e", "/f"), ("/g", "/h")))
    sv = types.SimpleNamespace(
        result=types.SimpleNamespace(verdicts=[types.SimpleNamespace(rule=gone, valid=False, reason="negatives")]),
        setcheck=types.SimpleNamespace(dropped=[(dropped, "conflict")]))
    prev = {"version": 7, "sig": [kept.text, gone.text, dropped.text, "old rule"]}
    ch = version_changes(prev, [{"display": kept.text}, {"display": new.text}], sv)
    assert ch["added"] == [new.text] and ch["previous_version"] == 7
    assert ch["removed"] == [{"rule": gone.text, "why": "refuted (negatives)"},
                             {"rule": dropped.text, "why": "set check: conflict"},
                             {"rule": "old rule", "why": "no_longer_a_candidate"}]


def test_a_set_stored_before_keys_gets_one_round_from_the_timer(tmp_path):
    store = VerdictStore(tmp_path / "v")
    store.kv.write({b"Cold.test": b'{"site": "old.test", "rules": []}'}, {})  # as an older version stored it
    store.close()
    store = VerdictStore(tmp_path / "v")
    try:
        assert store.candidate_keys() == [("old.test", "")]
        cache = _SiteCache(store, "old.test", ttl_s=3600, retry_s=60)
        assert round_needed(store, cache, "old.test", "") == "new candidates"
    finally:
        store.close()


def test_the_timer_submits_only_owned_sites_whose_verdicts_expired(tmp_path):
    from dustbuster.agents.rounds import RoundRunner, partition_of
    from dustbuster.agents.validator import revalidate_due
    from dustbuster.stream.settings import Settings

    store = VerdictStore(tmp_path / "v")
    rules = [{"type": "substring", "display": '"/a" → "/b"'}]
    for site in ("decided.test", "due.test", "elsewhere.test"):
        doc = {"site": site, "window": 1, "rules": rules, "stats": {}, "params": {}, "test_urls": []}
        store.set_candidates(site, doc, candidates_key(cand(rules)))
    cache = _SiteCache(store, "decided.test", ttl_s=3600, retry_s=60)
    cache.put('"/a" → "/b"', {"valid": True})
    store.set_round("decided.test", {"key": candidates_key(cand(rules)), "verdicts": ['"/a" → "/b"']})
    ran: list[str] = []

    async def go():
        async def run(site, c):
            ran.append(site)

        runner = RoundRunner(run, partitions=8)
        runner.assigned({p for p in range(8) if p != partition_of("elsewhere.test", 8)})
        n = await revalidate_due(types.SimpleNamespace(verdicts=store, settings=Settings()), runner)
        await asyncio.gather(*runner.running.values())
        return n

    try:
        assert asyncio.run(go()) == 1 and ran == ["due.test"]
    finally:
        store.close()
