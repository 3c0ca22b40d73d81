"""Made samples (issue 23, reach; core/validation/madesamples.py): a remove-parameter rule whose parameter the
logs show on too few URLs is decided on test URLs the validator makes by adding the parameter to
other test URLs.  Unit tests of the maker, the decision on a fetch function, then a loopback site
with the validator's real fetcher: (a) a no-op tracking parameter logged on 3 URLs is published,
(b) a parameter meaningful on most pages but logged only on 3 pages where it is a no-op is refuted
by the made samples."""

from __future__ import annotations

import asyncio
import random

import pytest
from aiohttp import web
from tests.loopback import serve

from dustbuster.sitevalidation import SiteCandidates
from dustbuster.core.validation.round import Round
from dustbuster.core import ParamRule
from dustbuster.core.validation.identity import page_identity
from dustbuster.core.validation.madesamples import MIN_LOGGED, MadeSamples, lacks, logged_values, make_samples, with_param
from dustbuster.core.model.rules import SubstringRule
from dustbuster.core.model.scopedrules import QueryRule
from dustbuster.core.validation.sketch import sketch
from dustbuster.core.validation.validate import Fetched, RoundFetcher, apply_rule, validate_rule
from dustbuster.fetch.client import FetchPolicy
from dustbuster.sitevalidation import validate_site
from dustbuster.stream.settings import Settings

H = "http://s.test"
WORDS = "market election river concert festival bridge harbor season council rally orchestra theater".split()
ARTICLES = [f"{H}/a/{i}" for i in range(60)]
DOCS = [f"{H}/doc/{n}" for n in ("about", "contact", "help")]


def text(key: str) -> str:
    rnd = random.Random(key)
    return " ".join(rnd.choice(WORDS) + str(rnd.randrange(100)) for _ in range(200))


def page_key(path: str, params: dict[str, str]) -> str | None:
    """The tiny site: /a/<i> articles whose ``lang`` selects a translation; /doc/<name> pages that
    ignore ``lang``; every page ignores ``fbclid``; /doc/about changes with ``x``, no other page does."""
    if path.startswith("/a/") and path[3:].isdigit() and int(path[3:]) < 60:
        return path + "|" + params.get("lang", "en")
    if path in {d[len(H):] for d in DOCS}:
        return path + "|" + (params.get("x", "") if path == "/doc/about" else "")
    return None


def html_of(key: str) -> bytes:
    return f"<html><head><title>{key.split('|')[0]}</title></head><body><p>{text(key)}</p></body></html>".encode()


def remove(name: str, scope: str = "") -> ParamRule:
    return ParamRule(name, "remove", scope=scope)


# --- the maker -------------------------------------------------------------------------------

def test_helpers():
    assert logged_values([f"{H}/a?f=1", f"{H}/b?g=2&f=2", f"{H}/c?f=1", f"{H}/d?f"], "f") == ["1", "2"]
    assert lacks(f"{H}/a?g=1", "f") and not lacks(f"{H}/a?f", "f") and not lacks(f"{H}/a#x", "f")
    assert with_param(f"{H}/a", "f", "1") == f"{H}/a?f=1" and with_param(f"{H}/a?g=2", "f", "1") == f"{H}/a?g=2&f=1"


def test_made_urls_are_bounded_seeded_in_scope_and_rewrite_to_their_base():
    rule = remove("fbclid", "/a")
    logged = [f"{H}/a/1?fbclid=X1", f"{H}/a/2?fbclid=X2"]
    tests = [*ARTICLES, *DOCS, *logged, f"{H}/a/5?fbclid=X1"]
    rewrite = lambda u: apply_rule(rule, u)  # noqa: E731
    made = make_samples("fbclid", "/a", rewrite, tests, logged, 40, seed=3)
    assert len(made) == 40 and len(set(made)) == 40
    assert made == make_samples("fbclid", "/a", rewrite, tests, logged, 40, seed=3)  # deterministic
    assert made != make_samples("fbclid", "/a", rewrite, tests, logged, 40, seed=4)
    assert all(rewrite(u) in ARTICLES for u in made)  # the rule's scope, bases lacking the parameter
    assert {u.rsplit("=", 1)[1] for u in made} == {"X1", "X2"}  # the logged values, in turn
    assert f"{H}/a/5?fbclid=X1" not in made  # a logged URL is not made again
    assert len(make_samples("fbclid", "/a", rewrite, tests, logged, 7, seed=3)) == 7
    assert make_samples("fbclid", "/a", rewrite, tests, [], 40, seed=3) == []  # no value logged: none
    errors = set(ARTICLES[:50])
    assert all(rewrite(u) not in errors for u in make_samples("fbclid", "/a", rewrite, tests, logged, 40, 3, errors.__contains__))


def test_which_rule_types_make_samples():
    assert remove("fbclid").made_sample_param() == "fbclid"
    assert remove("fbclid", "/wiki").made_sample_param() == "fbclid"
    assert remove("returnto", "?title=Special:UserLogin").made_sample_param() is None  # one page's rule
    assert ParamRule("lang", "replace", "en").made_sample_param() is None  # maps values
    assert SubstringRule("/a/", "/b/").made_sample_param() is None
    assert QueryRule("/a", "drop").made_sample_param() is None


def test_a_rule_with_enough_logged_urls_makes_none():
    rule = remove("fbclid")
    logged = [f"{u}?fbclid=X" for u in ARTICLES[:45]]
    m = MadeSamples.for_rule(rule, lambda u: apply_rule(rule, u), [*ARTICLES, *logged], logged, 40, 0, lambda u: False)
    assert m.urls == []


# --- the decision on a fetch function --------------------------------------------------------

def make_fetch(seen: list[str] | None = None) -> RoundFetcher:
    async def fetch(url: str) -> Fetched:
        if seen is not None:
            seen.append(url)
        path, _, q = url[len(H):].partition("?")
        key = page_key(path, dict(kv.split("=", 1) for kv in q.split("&") if "=" in kv))
        if key is None:
            return Fetched(False, None, 404, reason="status_404")
        html = html_of(key)
        return Fetched(True, sketch(html, "text/html"), 200, identity=page_identity(url, url, [], 200, html, "text/html"))
    return RoundFetcher(fetch)


def decide(rule: ParamRule, logged: list[str], seen: list[str] | None = None):
    return asyncio.run(validate_rule(rule, Round.of([*ARTICLES, *DOCS, *logged], make_fetch(seen)), seed=1))


FBCLID = [f"{H}/a/3?fbclid=IwAR0x", f"{H}/a/7?fbclid=IwAR1y", f"{H}/doc/help?fbclid=IwAR0x"]
LANG = [f"{H}/doc/about?lang=de", f"{H}/doc/contact?lang=fr", f"{H}/doc/help?lang=de"]


def test_a_rare_no_op_parameter_is_confirmed_on_made_samples():
    seen: list[str] = []
    v = decide(remove("fbclid"), FBCLID, seen)
    assert v.valid is True and v.reason == "confirmed", (v.valid, v.reason, v.evidence())
    assert v.applicable == 3 and v.negatives == 0 and v.distinct_pages >= 3
    ev = v.evidence()
    assert ev["made_samples"] == v.positives - 3 and ev["made_skipped"] == 0
    assert all(u in seen for u in FBCLID)  # the logged u's are compared, first
    assert set(seen[:6:2]) == set(FBCLID)


def test_without_made_samples_it_was_undecided(monkeypatch):
    monkeypatch.setattr(ParamRule, "made_sample_param", lambda self: None)
    v = decide(remove("fbclid"), FBCLID)
    assert v.valid is None and v.reason == "too_few_samples" and "made_samples" not in v.evidence()


def test_made_samples_say_no_to_a_parameter_that_matters_on_most_pages():
    v = decide(remove("lang"), LANG)
    assert v.valid is False and v.negatives >= 2, (v.valid, v.reason, v.evidence())
    assert v.evidence()["made_samples"] >= 2


def test_made_samples_never_outvote_a_logged_negative():
    """``x`` changes /doc/about (where it is logged once) and no other page: the made u's would all be
    positives; the logged comparisons (1 negative of 3) refute the rule."""
    logged = [f"{H}/doc/about?x=1", f"{H}/a/3?x=1", f"{H}/a/8?x=2"]
    v = asyncio.run(validate_rule(remove("x"), Round.of([*ARTICLES, *logged], make_fetch()), seed=1))  # no base on /doc
    assert v.valid is False and v.reason == "refuted_on_logged_samples", (v.valid, v.reason, v.evidence())
    assert v.evidence()["made_samples"] > 0


def test_a_made_url_that_fails_is_skipped_and_counted():
    """Made u's on pages that are gone (404): skipped, counted apart, never a negative."""
    gone = [f"{H}/a/{i}" for i in range(60, 100)]  # listed, but no page

    async def run():
        rf = make_fetch()
        v = await validate_rule(remove("fbclid"), Round.of([*gone, *FBCLID], rf), seed=1)
        return v, rf

    v, rf = asyncio.run(run())
    assert v.negatives == 0 and v.evidence()["made_skipped"] > 0
    assert rf.signals["made_samples_skipped"] == v.evidence()["made_skipped"]
    assert v.valid is not True  # 3 logged positives alone decide nothing


# --- a loopback site, the validator's real fetcher -------------------------------------------

async def _site_round():
    async def handler(request: web.Request) -> web.Response:
        key = page_key(request.path, dict(request.query))
        if key is None:
            return web.Response(status=404, text="not found " + text(request.path_qs), content_type="text/html")
        return web.Response(body=html_of(key), content_type="text/html")

    app = web.Application()
    app.router.add_get("/{tail:.*}", handler)
    runner, port = await serve(app)
    base = f"http://s.test:{port}"
    policy = FetchPolicy(origins=frozenset({base}), allow_private=True, resolve={"s.test": "127.0.0.1"},
                         robots=False, rate_per_s=0, per_host_concurrency=8)
    urls = [u.replace(H, base) for u in [*ARTICLES, *DOCS, *FBCLID, *LANG]]
    try:
        return await validate_site(SiteCandidates([], [remove("fbclid"), remove("lang")], urls), policy, Settings())
    finally:
        await runner.cleanup()


@pytest.fixture(scope="module")
def site_round():
    return asyncio.run(_site_round())


def test_on_a_loopback_site_the_tracking_parameter_is_published_and_the_trap_refuted(site_round):
    sv = site_round
    verdicts = {v.rule.text: v for v in sv.result.verdicts}
    fb, lang = verdicts["remove fbclid=*"], verdicts["remove lang=*"]
    assert fb.valid is True and fb.evidence()["made_samples"] > 0, (fb.reason, fb.evidence())
    assert lang.valid is False and lang.evidence()["made_samples"] > 0, (lang.reason, lang.evidence())
    assert [r.text for r in sv.rules] == ["remove fbclid=*"]  # no false merge: lang never published
    assert sv.setcheck.passed is not False
    stats = sv.stats(2)
    assert stats["made_samples"] == fb.evidence()["made_samples"] + lang.evidence()["made_samples"]


def test_dustbuster_rules_and_validate_say_the_made_samples(site_round, capsys):
    import io

    from dustbuster.cli.rules import _print_readable
    from dustbuster.cli.validate import _summary

    sv = site_round
    doc = {"site": "s", "version": 1, "created": 0, "rules": [r.to_json() for r in sv.rules], "stats": sv.stats(2)}
    _print_readable("s", doc)
    made = sv.rules[0].evidence["made_samples"]
    assert f"made samples (core/validation/madesamples.py): {made} compared, 0 skipped" in capsys.readouterr().out
    out = io.StringIO()
    _summary("s", doc | {"stats": doc["stats"] | {"urls": 69}}, None, out)
    assert f"{made} of them made" in out.getvalue() and "made URLs compared" in out.getvalue()


def test_a_parameter_logged_on_fewer_than_min_logged_urls_makes_none():
    rule = remove("fbclid")
    logged = FBCLID[:MIN_LOGGED - 1]
    m = MadeSamples.for_rule(rule, lambda u: apply_rule(rule, u), [*ARTICLES, *logged], logged, 40, 0, lambda u: False)
    assert m.urls == []
    v = decide(rule, logged)
    assert v.valid is None and v.reason == "too_few_samples" and "made_samples" not in v.evidence()
