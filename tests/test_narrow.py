"""Issue 23: a whole-query rule must not drop a parameter it never tested (core/validation/narrow.py).

The loopback site: under /wiki campaign parameters do not matter, while ``target=`` on
/wiki/Links selects another page — whose listing, for every target the log holds, is empty and
looks like the site's error page (the "empty listings" trap).  The published rule keeps target."""

from __future__ import annotations

import asyncio
import random
from collections import Counter
from types import SimpleNamespace

from aiohttp import web
from tests.loopback import serve

from dustbuster.sitevalidation import SiteCandidates
from dustbuster.core.validation.narrow import narrow_verdict, narrowed, restored, untested
from dustbuster.core.model.rules import SubstringRule
from dustbuster.core.model.scopedrules import QueryRule
from dustbuster.core.validation.validate import Verdict
from dustbuster.fetch.client import FetchPolicy
from dustbuster.sitevalidation import validate_site
from dustbuster.stream.settings import Settings

HOST = "keep.test"
EMPTY = ("<html><head><title>Nothing found</title></head><body><h1>Nothing found</h1><p>No pages match "
         "this request on the keep test wiki. Try another search, browse the index of all pages, or go back "
         "to the main page and follow a link from there. Pages listed here change as the wiki grows.</p>"
         "</body></html>")
WORDS = ("alpha bravo charlie delta echo foxtrot golf hotel india juliet kilo lima mike november oscar papa "
         "quebec romeo sierra tango uniform victor whiskey xray yankee zulu amber basil cedar dune ember").split()


def _page(k: int) -> str:
    rnd = random.Random(k)
    text = " ".join(rnd.choice(WORDS) for _ in range(120))
    return f"<html><head><title>Page {WORDS[k % len(WORDS)]} {k}</title></head><body><p>{text}</p></body></html>"


async def _wiki(request: web.Request) -> web.Response:
    name = request.match_info["name"]
    if name == "Links":  # the backlinks of a page: empty for every target in the log
        target = request.query.get("target", "")
        if target == "Page_1":
            return web.Response(text=_page(10_000), content_type="text/html")
        return web.Response(text=EMPTY if target else _page(20_000), content_type="text/html")
    if name.startswith("Page_") and name[5:].isdigit():
        return web.Response(text=_page(int(name[5:])), content_type="text/html")
    return web.Response(text=EMPTY, content_type="text/html")


async def _missing(request: web.Request) -> web.Response:
    return web.Response(text=EMPTY, content_type="text/html")


async def _start() -> tuple[web.AppRunner, int]:
    app = web.Application()
    app.router.add_get("/wiki/{name}", _wiki)
    app.router.add_get("/{tail:.*}", _missing)
    return await serve(app)


def _log(port: int) -> list[str]:
    base = f"http://{HOST}:{port}/wiki/"
    urls = [f"{base}Page_{k}" for k in range(2, 40)]
    urls += [f"{base}Page_{k}?utm_source=feed{k % 3}&ref=r{k}" for k in range(2, 40)]
    urls += [f"{base}Page_{k}?utm_medium=mail" for k in range(2, 40, 2)]
    urls += [f"{base}Links?target=Page_{k}&namespace={k % 4}" for k in range(50, 56)]
    return urls


async def _round():
    runner, port = await _start()
    policy = FetchPolicy(origins=frozenset({f"http://{HOST}:{port}"}), allow_private=True,
                         resolve={HOST: "127.0.0.1"}, robots=False, rate_per_s=0, per_host_concurrency=8)
    try:
        return await validate_site(SiteCandidates([], [QueryRule("/wiki", "drop")], _log(port)), policy, Settings())
    finally:
        await runner.cleanup()


def test_published_query_rule_keeps_the_parameter_it_never_tested():
    sv = asyncio.run(_round())
    assert sv is not None
    (v,) = [v for v in sv.result.verdicts if v.rule.type == "query"]
    assert v.valid, (v.valid, v.reason, v.positives, v.negatives, v.parameters)
    assert {x["parameter"] for x in v.untested} >= {"target"} and all(x["kept"] for x in v.untested)
    published = [r for r in sv.rules if r.type == "query"]
    assert len(published) == 1 and "target" in published[0].keep, [r.text for r in sv.rules]
    assert not {"utm_source", "ref", "utm_medium"} & set(published[0].keep)
    assert published[0].evidence["untested"] == v.untested
    # the published rule no longer merges two targets; campaign parameters still go
    rule = published[0]
    assert rule.rewrite("http://h/wiki/Links?target=A&utm_source=x") == "http://h/wiki/Links?target=A"
    assert rule.rewrite("http://h/wiki/Page_3?utm_source=x&ref=y") == "http://h/wiki/Page_3"


def _par(tested: Counter, positive_urls: list[str]) -> SimpleNamespace:
    return SimpleNamespace(tested=tested, positive_urls=positive_urls)


def _verdict(rule, positives: int) -> Verdict:
    return Verdict(rule, True, positives=positives, reason="confirmed")


def test_narrowing_keeps_untested_names_and_the_evidence():
    rule = QueryRule("/w", "drop")
    appl = ["http://h/w/a?utm=1", "http://h/w/b?utm=2", "http://h/w/c?utm=4", "http://h/w/l?target=x&utm=3",
            "http://h/w/l?target=y"]
    tested = Counter({"utm": 3})
    assert untested(appl, rule.rewrite, tested) == {"target": 2}
    v = _verdict(rule, 3)
    narrow_verdict(v, appl, rule.rewrite, _par(tested, appl[:3]), 3)
    assert v.valid and v.rule.keep == ("target",) and v.positives == 3 and v.reason == "confirmed"
    # published as the closed list of what its positives dropped
    assert v.rule.only == ("utm",) and v.dropped_only == ["utm"]
    assert v.rule.text == "drop utm from the query under /w"
    assert v.untested == [{"parameter": "target", "urls": 2, "kept": True, "keep": ["target"]}]
    # each positive's rewrite is the same under the narrowed rule
    assert all(v.rule.rewrite(u) == rule.rewrite(u) for u in appl[:3])
    # a name no test URL carried is kept
    assert v.rule.rewrite("http://h/w/a?utm=1&diff=3") == "http://h/w/a?diff=3"
    # a cached verdict (the original rule text as key) gives the narrowed, closed rule back
    again = restored(Verdict(rule, True, untested=v.untested, dropped_only=v.dropped_only))
    assert again.rule == v.rule


def test_a_positive_carrying_a_kept_name_is_recounted():
    rule = QueryRule("/w", "drop")
    appl = ["http://h/w/a?utm=1", "http://h/w/l?target=x&utm=3"]
    v = _verdict(rule, 2)  # a positive on target=x but "target" counted untested: recount, require the rest
    narrow_verdict(v, appl, rule.rewrite, _par(Counter({"utm": 2}), appl), 2)
    assert v.valid is None and v.reason == "untested_parameter" and v.positives == 1
    v = _verdict(rule, 2)
    narrow_verdict(v, appl, rule.rewrite, _par(Counter({"utm": 3}), appl), 1)
    assert v.valid and v.rule.keep == ("target",) and v.rule.only == ("utm",) and v.positives == 1
    # a name dropped on fewer than PARAM_MIN_POSITIVES positives is not listed; none left: undecided
    v = _verdict(rule, 2)
    narrow_verdict(v, appl, rule.rewrite, _par(Counter({"utm": 2}), appl), 1)
    assert v.valid is None and v.reason == "untested_value"


def test_a_rule_that_cannot_keep_a_parameter_is_undecided():
    rule = SubstringRule("?", "?x=1&")
    assert narrowed(rule, ["target"]) is None
    appl = ["http://h/p?target=a", "http://h/p?utm=1"]
    rewrite = lambda u: u.split("?")[0]  # noqa: E731  drops every parameter
    v = _verdict(rule, 5)
    narrow_verdict(v, appl, rewrite, _par(Counter({"utm": 5}), [appl[1]] * 5), 3)
    assert v.valid is None and v.reason == "untested_parameter" and v.untested[0]["kept"] is False


def test_nothing_changes_when_every_parameter_was_tested():
    rule = QueryRule("/w", "drop", keep=("title",))
    appl = ["http://h/w/a?title=A&utm=1"]
    v = _verdict(rule, 3)
    narrow_verdict(v, appl, rule.rewrite, _par(Counter({"utm": 3}), appl), 3)
    # nothing narrowed; published as what its positives dropped
    assert v.valid and v.rule.keep == rule.keep and v.untested == [] and v.rule.only == ("utm",)
    assert v.rule.rewrite(appl[0]) == rule.rewrite(appl[0])


def test_urls_logged_with_an_error_status_count_too():
    rule = QueryRule("/w", "drop")
    appl = ["http://h/w/a?utm=1"]
    v = _verdict(rule, 3)  # target= only in a URL the log holds with 404: it never was a test URL
    narrow_verdict(v, appl, rule.rewrite, _par(Counter({"utm": 3}), appl), 3,
                   ["http://h/w/l?target=x", "http://h/other?target=y", "http://h/w/l"])
    assert v.valid and v.rule.keep == ("target",) and v.untested == [{"parameter": "target", "urls": 1, "kept": True, "keep": ["target"]}]


def test_the_log_reader_keeps_the_urls_logged_with_an_error_status(tmp_path):
    from dustbuster.logs.reader import read_urllist

    log = tmp_path / "access.log"
    line = '127.0.0.1 - - [27/Nov/2026:02:21:46 +0000] "GET {} HTTP/1.1" {} 100 "-" "ua"\n'
    log.write_text(line.format("/wiki/A?utm=1", 200) + line.format("/wiki/L?target=x", 404) * 2)
    for bulk in (True, False):
        ul, stats = read_urllist([log], site="h.test", bulk=bulk)
        assert list(ul.errors) == ["http://h.test/wiki/L?target=x"], bulk
        assert "http://h.test/wiki/L?target=x" not in ul.test_urls() and stats.dropped_status == 2


def test_a_closed_list_leaves_out_a_name_whose_values_the_positives_did_not_cover():
    """Positives on ``action=view`` under /wiki say nothing of ``action=info`` (held by test URLs of
    the script, which a query-to-path mapping moves under /wiki): ``action`` is not listed; names
    never seen stay, too.  A positive that dropped it no longer counts."""
    rule = QueryRule("/wiki", "drop")
    pos = [f"http://h/wiki/P{k}?ref=x{k}" for k in range(6)] + ["http://h/wiki/A?action=view&ref=y"]
    tests = pos + ["http://h/w/index.php?title=A&action=info", "http://h/w/index.php?title=B&action=info",
                   "http://h/w/index.php?title=C&action=view"]
    v = _verdict(rule, len(pos))
    narrow_verdict(v, pos, rule.rewrite, _par(Counter({"ref": 7, "action": 1}), pos), 5, test_urls=tests)
    assert v.valid and v.rule.only == ("ref",) and v.positives == 6
    assert v.rule.rewrite("http://h/wiki/A?action=info&ref=z") == "http://h/wiki/A?action=info"
    assert v.rule.rewrite("http://h/wiki/A?diff=2&oldid=1&ref=z") == "http://h/wiki/A?diff=2&oldid=1"
    # too few positives left: undecided, never the open rule
    v = _verdict(rule, len(pos))
    narrow_verdict(v, pos, rule.rewrite, _par(Counter({"ref": 7, "action": 1}), pos), 7, test_urls=tests)
    assert v.valid is None and v.reason == "untested_value"
