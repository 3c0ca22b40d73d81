"""Issue 23: what a refutation says, and what a redirect says (core/validation/narrow.py ``refuted_by``,
core/validation/fetched.py ``v_redirects_same_page``, core/validation/validate.py ``_one_page_again``).

The loopback wiki (as MediaWiki behaves on the quality harness' traffic):

* under /wiki campaign parameters (``utm_source``, ``ref``) do not matter;
* ``/wiki/Users?username=X&groups[]=Y`` lists other users for other values — the only negatives of
  "drop the query under /wiki", which never tested ``username`` nor ``groups[]`` on a positive;
* ``/wiki/?utm_source=feed`` shows the main page, and ``/wiki/`` redirects to it;
* the login page ``/w/index.php?title=Login&returnto=X`` and ``/w/?title=Login&returnto=X`` are one
  page, as every ``/w/index.php?title=`` and ``/w/?title=`` are.
"""

from __future__ import annotations

import asyncio
import random
from collections import Counter

from aiohttp import web
from tests.loopback import serve

from dustbuster.sitevalidation import SiteCandidates
from dustbuster.core.validation.round import Round
from dustbuster.core.validation.fetched import Fetched, compare_pages
from dustbuster.core.validation.narrow import keep_names, kept_after_refutation, raw_forms, refuted_by, restored, stale_keep
from dustbuster.core.validation.onepage import one_page_of
from dustbuster.core.model.rules import ParamRule, SubstringRule
from dustbuster.core.model.scopedrules import QueryRule
from dustbuster.core.validation.sketch import sketch
from dustbuster.core.urls.tokens import START
from dustbuster.core.validation.validate import Verdict, apply_rule
from dustbuster.fetch.client import FetchPolicy
from dustbuster.sitevalidation import validate_site
from dustbuster.stream.settings import Settings

HOST = "refute.test"
WORDS = ("alpha bravo charlie delta echo foxtrot golf hotel india juliet kilo lima mike november oscar papa "
         "quebec romeo sierra tango uniform victor whiskey xray yankee zulu amber basil cedar dune ember").split()


def _text(k: int, n: int = 120) -> str:
    rnd = random.Random(k)
    return " ".join(rnd.choice(WORDS) for _ in range(n))


def _html(title: str, k: int) -> str:
    return f"<html><head><title>{title}</title></head><body><p>{_text(k)}</p></body></html>"


async def _wiki(request: web.Request) -> web.StreamResponse:
    name = request.match_info["name"]
    if name == "":
        if request.query_string:
            return web.Response(text=_html("Main page", 1), content_type="text/html")
        raise web.HTTPMovedPermanently("/wiki/Main_page")
    if name == "Main_page":
        return web.Response(text=_html("Main page", 1), content_type="text/html")
    if name == "Users":  # another list for each user name and group
        who = request.query.get("username", "") + "|" + ",".join(request.query.getall("groups[]", []))
        k = 50_000 + sum(map(ord, who)) * 7 + len(who)
        return web.Response(text=_html("Users", k), content_type="text/html")
    if name.startswith("Page_") and name[5:].isdigit():
        return web.Response(text=_html(f"Page {name[5:]}", int(name[5:])), content_type="text/html")
    raise web.HTTPNotFound()


async def _index(request: web.Request) -> web.StreamResponse:
    title = request.query.get("title", "")
    if title == "Login":  # one page, whatever the return-to target
        return web.Response(text=_html("Log in", 7), content_type="text/html")
    if title.startswith("Page_") and title[5:].isdigit():
        return web.Response(text=_html(f"Page {title[5:]}", int(title[5:])), content_type="text/html")
    raise web.HTTPNotFound()


async def _start() -> tuple[web.AppRunner, int]:
    app = web.Application()
    app.router.add_get("/wiki/{name:.*}", _wiki)
    app.router.add_get("/w/index.php", _index)
    app.router.add_get("/w/", _index)
    return await serve(app)


def _log(port: int) -> list[str]:
    base = f"http://{HOST}:{port}"
    urls = [f"{base}/wiki/Page_{k}?utm_source=feed{k % 3}" for k in range(2, 30)]
    urls += [f"{base}/wiki/Page_{k}?ref=r{k}" for k in range(2, 30, 2)]
    urls += [f"{base}/wiki/Page_{k}" for k in range(2, 30)]
    urls += [f"{base}/wiki/Users?username={n}&groups%5B%5D={g}" for n, g in (("Ann", "sysop"), ("Bob", "bot"))]
    urls += [f"{base}/wiki/?utm_source=feed", f"{base}/wiki/Main_page"]
    urls += [f"{base}/w/index.php?title=Login&returnto=Page_{k}" for k in range(2, 20)]
    urls += [f"{base}/w/?title=Login&returnto=Page_{k}" for k in (20, 21)]
    urls += [f"{base}/w/index.php?title=Page_{k}" for k in range(2, 30)]
    urls += [f"{base}/w/?title=Page_{k}" for k in range(2, 30)]
    return urls


async def _round(rules: list):
    runner, port = await _start()
    policy = FetchPolicy(origins=frozenset({f"http://{HOST}:{port}"}), allow_private=True,
                         resolve={HOST: "127.0.0.1"}, robots=False, rate_per_s=0, per_host_concurrency=8)
    pairs = [SubstringRule(f"{START}http://{HOST}:{port}/w/index.php?title=", f"{START}http://{HOST}:{port}/w/?title=")]
    try:
        return await validate_site(SiteCandidates([], [*rules, *pairs], _log(port)), policy, Settings())
    finally:
        await runner.cleanup()


def test_a_query_rule_refuted_on_untested_parameters_is_narrowed_and_published():
    sv = asyncio.run(_round([QueryRule("/wiki", "drop")]))
    (v,) = [v for v in sv.result.verdicts if v.rule.type == "query"]
    assert v.valid, (v.valid, v.reason, v.positives, v.negatives, v.samples, v.narrowing)
    # the refuted rule's negatives carried username and groups[]: kept, as they are written in the URLs
    assert {"username", "groups%5B%5D"} <= set(v.rule.keep), v.rule.text
    assert not {"utm_source", "ref"} & set(v.rule.keep)
    assert [x["parameter"] for x in v.untested if x.get("negatives")] == ["groups[]", "username"]
    signals = sv.stats(0)["identity_signals"]
    assert signals["narrowed_after_refutation:valid"] == 1 and "narrowed_after_refutation" not in signals
    # the published rule keeps two user lists apart, and still drops the campaign parameters
    rule = next(r for r in sv.rules if r.type == "query")
    assert rule.rewrite("http://h/wiki/Users?username=Ann&groups%5B%5D=sysop&utm_source=x") == \
        "http://h/wiki/Users?username=Ann&groups%5B%5D=sysop"
    assert rule.rewrite("http://h/wiki/Page_3?utm_source=x&ref=y") == "http://h/wiki/Page_3"
    # /wiki/?utm_source=feed → /wiki/ (a redirect to the page u shows): skipped, neither way
    assert signals.get("pairs_skipped:v_redirects_same_page", 0) >= 1
    # a cached verdict of the candidate gives the narrowed rule back
    assert restored(Verdict(QueryRule("/wiki", "drop"), True, untested=v.untested,
                            dropped_only=v.dropped_only)).rule == v.rule
    # published as the closed list its positives dropped: a name never seen is kept
    assert v.rule.only and not set(v.rule.only) & {"username", "groups%5B%5D"}
    assert rule.rewrite("http://h/wiki/Page_3?utm_source=x&diff=2") == "http://h/wiki/Page_3?diff=2"


def test_a_login_scope_of_two_spellings_is_one_page_once_they_are_one_form():
    returnto = ParamRule("returnto", "remove", scope="?title=Login")
    sv = asyncio.run(_round([returnto]))
    verdicts = {v.rule.text: v for v in sv.result.verdicts}
    pair = next(t for t in verdicts if "/w/index.php?title=" in t)
    assert verdicts[pair].valid
    v = verdicts[returnto.text]
    assert v.valid and v.reason == "confirmed_on_one_page", (v.valid, v.reason, v.one_page)
    assert sv.stats(0)["identity_signals"]["one_page_after_canonical_forms:valid"] == 1
    assert returnto.text in {r.text for r in sv.rules}


def test_refuted_by_names_only_untested_parameters_of_every_negative():
    rule = QueryRule("/w", "drop")
    refuted = Verdict(rule, False, positives=7, negatives=2, reason="refuted")
    negs = ["http://h/w/u?user=a", "http://h/w/u?user=b&grp=x"]
    assert refuted_by(refuted, negs, rule.rewrite, Counter({"utm": 3})) == {"grp": 1, "user": 2}
    # a negative pinned on tested parameters only: a real refutation
    assert refuted_by(refuted, [*negs, "http://h/w/p?utm=2"], rule.rewrite, Counter({"utm": 3})) == {}
    # nor one that changes a tested parameter beside an untested one: the narrowed rule would still
    # change that u (drop sort, keep sid) and its negative would stand
    mixed = ["http://h/list?sort=desc&sid=1", "http://h/list?sort=desc&sid=2"]
    assert refuted_by(refuted, mixed, rule.rewrite, Counter({"sort": 36})) == {}
    # a nameless parameter (?=x) cannot be kept: nothing to narrow
    assert refuted_by(refuted, ["http://h/w/u?=x"], rule.rewrite, Counter({"utm": 3})) == {}
    # no positive at all, a rule that cannot keep a parameter, a verdict not refuted: nothing
    assert refuted_by(Verdict(rule, False, negatives=2), negs, rule.rewrite, Counter()) == {}
    sub = SubstringRule("?user=", "?")
    assert refuted_by(Verdict(sub, False, positives=5, negatives=2), negs, lambda u: apply_rule(sub, u), Counter()) == {}
    assert refuted_by(Verdict(rule, None, positives=5, negatives=1), negs, rule.rewrite, Counter()) == {}


def test_kept_names_are_the_forms_written_in_the_urls():
    urls = ["http://h/w/u?groups%5B%5D=a&groups[]=b&x=1", "http://h/w/u?a+b=1"]
    assert raw_forms(urls, ["groups[]", "a b", "absent"]) == {
        "groups[]": ["groups%5B%5D", "groups[]"], "a b": ["a+b"], "absent": ["absent"]}
    kept = kept_after_refutation({"groups[]": 1}, urls[:1])
    assert keep_names(kept) == ["groups%5B%5D", "groups[]"]
    narrowed = restored(Verdict(QueryRule("/w", "drop"), True, untested=kept)).rule
    assert narrowed.rewrite("http://h/w/u?groups%5B%5D=a&utm=1") == "http://h/w/u?groups%5B%5D=a"
    # entries written before the raw forms were kept: the name itself, and the cache decides them again
    assert keep_names([{"parameter": "target", "kept": True}]) == ["target"]
    assert stale_keep([{"parameter": "groups[]", "kept": True}]) and not stale_keep(kept)


def _fetched(text: str, redirected: bool = False) -> Fetched:
    return Fetched(True, sketch(text.encode()), 200, redirected=redirected)


def test_a_redirecting_v_is_no_evidence_when_it_ends_on_u_page():
    page, other = _text(1, 300), _text(2, 300)
    assert compare_pages(_fetched(page), _fetched(page, redirected=True), 1.0) == "v_redirects_same_page"
    assert compare_pages(_fetched(page), _fetched(other, redirected=True), 1.0) == "v_redirects"
    assert compare_pages(_fetched(page), _fetched(page), 1.0) == "similar"


def test_one_page_named_by_canonical_forms():
    rule = ParamRule("returnto", "remove", scope="?title=Login")
    urls = ["http://h/w/index.php?title=Login&returnto=P%d" % k for k in range(6)] + ["http://h/w/?title=Login&returnto=Q"]
    rewrite = lambda u: apply_rule(rule, u)  # noqa: E731
    assert one_page_of(rule, rewrite, urls) is None  # two paths: two pages, as far as the URLs say
    canon = lambda u: u.replace("/w/index.php?", "/w/?")  # noqa: E731
    assert one_page_of(rule, rewrite, urls, canon) == "/w/?title=Login"
    # a canonical form that leaves the scope names nothing: the URL is named as it is
    away = lambda u: u.replace("title=Login", "title=Other")  # noqa: E731
    assert one_page_of(rule, rewrite, urls, away) is None


def test_dustbuster_rules_says_why_a_parameter_is_kept(capsys):
    from dustbuster.cli.rules import _print_readable

    rule = QueryRule("/wiki", "drop", keep=("groups%5B%5D", "target"), status="valid",
                     evidence={"positives": 14, "negatives": 0, "applicable": 15, "untested": [
                         {"parameter": "groups[]", "urls": 2, "kept": True, "keep": ["groups%5B%5D"], "negatives": 2},
                         {"parameter": "target", "urls": 3, "kept": True, "keep": ["target"]}]})
    _print_readable("wiki.test", {"site": "wiki.test", "version": 1, "created": 0, "rules": [rule.to_json()]})
    out = capsys.readouterr().out
    assert "kept, the refuted rule's negatives carried them (core/validation/narrow.py): groups[] (2 negatives)" in out
    assert "kept, never tested (core/validation/narrow.py): target" in out


def test_dustbuster_validate_says_what_was_decided_again():
    import io

    from dustbuster.cli.validate import _summary

    stats = {"urls": 100, "candidates": 9, "valid": 3, "fetches": 80, "fetches_per_decided_rule": 8.9, "undecided": 1,
             "seconds": 2.0, "set_check": {"passed": True, "positives": 38, "negatives": 0, "dropped": []},
             "identity_signals": {"narrowed_after_refutation:valid": 1, "one_page_after_canonical_forms:valid": 1,
                                  "pairs_skipped:v_redirects_same_page": 3}}
    out = io.StringIO()
    _summary("s", {"site": "s", "rules": [], "stats": stats}, None, out)
    assert ("decided again: 1 refuted query rules narrowed to keep the parameters their negatives carried (1 valid), "
            "1 one-page rules under the valid rules' canonical forms (1 valid)") in out.getvalue()
    assert "3 pairs skipped as no evidence" in out.getvalue()


def test_outputs_that_redirect_to_their_input_send_figure_4_to_the_reverse():
    """``/story_N`` → ``/s/N`` whose every output answers 301 → ``/story_N``: no evidence either way
    pair by pair, but the inputs are the pages, so the reverse ``/s/`` → ``/story_`` is tried (and holds)."""
    from dustbuster.core.model.pair import Pair
    from dustbuster.core.validation.validate import validate

    pages = {k: sketch(_html(f"Story {k}", k).encode()) for k in range(60)}

    async def fetch(url: str) -> Fetched:
        k = int(url.rsplit("_", 1)[-1] if "story_" in url else url.rsplit("/", 1)[-1])
        return Fetched(True, pages[k], 200, redirected="/s/" in url)

    urls = [f"http://h/story_{k}" for k in range(60)] + [f"http://h/s/{k}" for k in range(60)]
    res = asyncio.run(validate(Round.of(urls, fetch), [Pair("/story_", "/s/", 30, 30)], []))
    shrinking, reverse = res.verdicts
    assert shrinking.valid is None and shrinking.reason == "outputs_redirect" and shrinking.positives == 0
    assert reverse.valid and [r.text for r in res.valid] == [reverse.rule.text] and "/s/" in reverse.rule.text.split("→")[0]
