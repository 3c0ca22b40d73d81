"""Query-parameter scopes (issue 28): membership, the rule JSON, canonization, dustcanon equality."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import dustcanon
from dustbuster.core.validation.round import Round
from dustbuster.core.canon.canonize import canonize as core_canonize
from dustbuster.core.report.crawlerexport import skipped
from dustbuster.core.errors import RuleError
from dustbuster.core.report.export import to_clearurls, to_nutch_xml
from dustbuster.core.model.rules import ParamRule, rule_from_json, rules_from_document
from dustbuster.core.urls.scope import check_scope, scope_ancestors, scope_covers, scope_text, url_in_scope
from dustbuster.core.model.scopedrules import CaseRule, QueryRule

LOGIN = "/index.php?title=Special:UserLogin"

MEMBERSHIP = [
    ("http://w.org/index.php?title=Special:UserLogin&returnto=Main", LOGIN, True),
    ("http://w.org/index.php?returnto=Main&title=Special:UserLogin", LOGIN, True),
    ("http://w.org/index.php?title=Special:UserLogin", LOGIN, True),
    ("http://w.org/index.php?title=Special:UserLogin#top", LOGIN, True),
    ("http://w.org/index.php?title=Special:Search&returnto=Main", LOGIN, False),
    ("http://w.org/index.php?title=Special:UserLoginX", LOGIN, False),
    ("http://w.org/index.php?title=Special:UserLogin&title=Main", LOGIN, False),  # two values: neither
    ("http://w.org/index.php?title=Special:UserLogin&title=Special:UserLogin", LOGIN, True),
    ("http://w.org/index.php", LOGIN, False),
    ("http://w.org/other.php?title=Special:UserLogin", LOGIN, False),
    ("http://w.org/index.php/x?title=Special:UserLogin", LOGIN, True),  # the path part covers below it
    ("http://w.org/doku.php?id=a:b&do=edit", "?do=edit", True),
    ("http://w.org/x/y?do=edit&s=1", "?do=edit", True),
    ("http://w.org/x/y?do=editx", "?do=edit", False),
    ("http://w.org/x/y?do", "?do=edit", False),
    ("http://w.org/w?action=history&uselang=en", "/w?action=history&uselang=en", True),
    ("http://w.org/w?action=history", "/w?action=history&uselang=en", False),
]


@pytest.mark.parametrize("url, scope, inside", MEMBERSHIP)
def test_membership(url, scope, inside):
    assert url_in_scope(url, check_scope(scope)) is inside
    assert dustcanon._in_scope(url, scope) is inside


def test_path_scopes_are_unchanged():
    assert url_in_scope("http://h/wiki/A?x=1", "/wiki") and not url_in_scope("http://h/wikipedia", "/wiki")
    assert url_in_scope("anything", "")


@pytest.mark.parametrize("bad", ["?", "?do", "?=x", "/a/?do=x", "?b=1&a=2", "?a=1&a=2", "?a=1#x", "a?do=x",
                                 "?a=x?y", "?a=1&"])
def test_bad_query_scopes_are_refused(bad):
    with pytest.raises(RuleError):
        check_scope(bad)
    with pytest.raises(ValueError):
        dustcanon._scope({"scope": bad})


def test_cover_ancestors_and_display():
    assert scope_covers("/index.php", LOGIN) and scope_covers("", LOGIN) and scope_covers(LOGIN, LOGIN)
    assert not scope_covers(LOGIN, "/index.php") and scope_covers("?do=edit", "/a?do=edit&id=1")
    assert scope_ancestors("/a/b?do=x") == ["?do=x", "/a?do=x", "/a/b?do=x"]
    assert scope_text("?do=edit") == " where do=edit" and scope_text(LOGIN) == f" under {LOGIN}"


def test_rules_that_would_change_their_own_scope_are_refused():
    with pytest.raises(RuleError):
        ParamRule("title", "remove", scope=LOGIN)
    with pytest.raises(RuleError):
        QueryRule("?do=edit", "drop", ("id",))  # would drop do= itself
    with pytest.raises(RuleError):
        CaseRule("/a?do=edit")
    assert QueryRule("?do=edit", "drop", ("do", "id")).rewrite("http://h/d?id=1&do=edit&s=x") == "http://h/d?id=1&do=edit"


def test_json_round_trip_and_old_documents():
    rule = ParamRule("returnto", "remove", scope=LOGIN, status="valid")
    doc = rule.to_json()
    assert doc["scope"] == LOGIN and doc["display"] == f"remove returnto=* under {LOGIN}"
    assert rule_from_json(json.loads(json.dumps(doc))) == rule
    old = {"type": "parameter", "name": "sid", "action": "remove", "status": "valid"}  # no scope at all
    assert rule_from_json(old).scope == ""
    assert rules_from_document({"rules": [old, doc]})[1].scope == LOGIN


def test_canonization_and_dustcanon():
    rules = [ParamRule("returnto", "remove", scope=LOGIN, status="valid"),
             QueryRule("/doku.php?do=edit", "drop", ("do", "id"), status="valid")]
    doc = {"site": "w.org", "version": 1, "rules": [r.to_json() for r in rules]}
    rs = dustcanon.RuleSet(doc)
    for u, want in [("http://w.org/index.php?title=Special:UserLogin&returnto=Foo",
                     "http://w.org/index.php?title=Special:UserLogin"),
                    ("http://w.org/index.php?title=Main&returnto=Foo", "http://w.org/index.php?title=Main&returnto=Foo"),
                    ("http://w.org/doku.php?id=a:b&do=edit&rev=5&s=q", "http://w.org/doku.php?id=a:b&do=edit"),
                    ("http://w.org/doku.php?id=a:b&do=show&rev=5", "http://w.org/doku.php?id=a:b&do=show&rev=5")]:
        assert core_canonize(u, rules).canonical == want
        assert rs.canonize(u) == want


def test_exports_skip_query_scoped_rules_and_say_so():
    rules = [ParamRule("returnto", "remove", scope=LOGIN, status="valid"),
             ParamRule("sid", "remove", scope="/index.php", status="valid")]
    xml = to_nutch_xml("w.org", rules)
    assert "skipped: remove returnto=*" in xml and "sid" in xml
    cu = to_clearurls("w.org", rules)
    assert cu["x-dustbuster"]["skipped"] == [rules[0].text]
    for fmt in ("heritrix", "stormcrawler", "clean-param"):
        assert [r for r, _ in skipped(rules, fmt)] == [rules[0]], fmt


NAMES = st.sampled_from(["id", "sid", "a", "do", "title"])
VALUES = st.sampled_from(["1", "edit", "x", ""])
QSCOPES = st.builds(lambda p, fixed: p + "?" + "&".join(f"{n}={v}" for n, v in sorted(dict(fixed).items())),
                    st.sampled_from(["", "/a", "/a/b"]), st.lists(st.tuples(NAMES, VALUES), min_size=1, max_size=2))


def _param(name, action, value, scope):
    if name in {i.split("=")[0] for i in scope.split("?")[1].split("&")}:
        name = "zz"
    return ParamRule(name, action, value if action == "replace" else None, scope=scope)


def _query(scope, keep, action):
    fixed = [i.split("=")[0] for i in scope.split("?")[1].split("&")]
    return QueryRule(scope, "drop", tuple(dict.fromkeys([*fixed, *keep]))) if action == "drop" else QueryRule(scope, "sort")


RULES = st.lists(st.one_of(
    st.builds(_param, NAMES, st.sampled_from(["remove", "replace"]), VALUES, QSCOPES),
    st.builds(_query, QSCOPES, st.lists(NAMES, max_size=2), st.sampled_from(["drop", "sort"]))), max_size=5)
ITEM = st.tuples(NAMES, st.one_of(st.none(), VALUES)).map(lambda nv: nv[0] if nv[1] is None else f"{nv[0]}={nv[1]}")
URLS = st.builds(lambda p, items, frag: p + ("?" + "&".join(items) if items is not None else "") + frag,
                 st.sampled_from(["http://h.com", "http://h.com/a", "http://h.com/a/b/c", "http://h.com/ab", "/a"]),
                 st.one_of(st.none(), st.lists(ITEM, max_size=4)), st.sampled_from(["", "#f", "#do=1"]))


@settings(max_examples=300, deadline=None)
@given(RULES, st.lists(URLS, max_size=5))
def test_dustcanon_equals_the_core_with_query_scopes(rules, urls):
    mine = [dustcanon._rule(json.loads(json.dumps(r.to_json()))) for r in rules]
    for u in urls:
        want = core_canonize(u, rules, 10)
        assert dustcanon._run(mine, u, 10) == (want.canonical, want.converged), (u, [r.text for r in rules])
        for r in rules:
            assert (r.apply_internal("\x02" + u + "\x03") != "\x02" + u + "\x03") <= url_in_scope(u, r.scope)


def test_the_schema_takes_query_parameter_scopes():
    jsonschema = pytest.importorskip("jsonschema")
    from dustbuster.core.model.rules import ruleset_document

    from tests.conftest import ROOT

    schema = json.loads((ROOT / "docs" / "ruleset.schema.json").read_text(encoding="utf-8"))
    for scope in ("", "/wiki", LOGIN, "?do=edit"):
        doc = ruleset_document("w.org", 1, [ParamRule("returnto", "remove", scope=scope, status="valid").to_json()], created=1.0)
        jsonschema.validate(doc, schema)
    bad = ruleset_document("w.org", 1, [ParamRule("returnto", "remove", status="valid").to_json() | {"scope": "/a/"}], created=1.0)
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(bad, schema)


def test_the_validator_samples_inside_the_scope_only():
    """``remove s=* where do=edit`` on a site where s= matters unless do=edit: the rule changes only
    URLs in its scope, so Figure 3 draws there, and finds it valid."""
    import asyncio
    import random

    from dustbuster.core.validation.sketch import sketch
    from dustbuster.core.validation.validate import Fetched, validate_rule

    def page(key: str) -> Fetched:
        rnd = random.Random(key)
        return Fetched(True, sketch(" ".join(rnd.choice("abcdefghij") * 4 for _ in range(300)).encode(), "text/html"), 200)

    async def fetch(url: str) -> Fetched:
        q = dict(i.split("=", 1) for i in url.split("?", 1)[1].split("&")) if "?" in url else {}
        if q.get("do") == "edit":
            q.pop("s", None)
        return page(repr(sorted(q.items())))

    urls = [f"http://w.org/doku.php?id=p{i}&do={do}&s=t{i}" for i in range(60) for do in ("edit", "show")]
    rule = ParamRule("s", "remove", scope="?do=edit")
    from dustbuster.core.validation.validate import RoundFetcher

    v = asyncio.run(validate_rule(rule, Round.of(urls, RoundFetcher(fetch))))
    assert v.valid and v.applicable == 60
    assert all("do=edit" in u for u, _, _ in v.samples)
    assert not asyncio.run(validate_rule(ParamRule("s", "remove"), Round.of(urls, RoundFetcher(fetch)))).valid


@settings(max_examples=150, deadline=None)
@given(RULES, st.lists(URLS, max_size=3))
def test_query_scoped_sets_are_admitted_as_by_the_service(rules, urls):
    from dustbuster.core.canon.rulebook import RuleBook

    doc = {"site": "h.com", "version": 2, "rules": [r.to_json() | {"status": "valid"} for r in rules]}
    book, mod = RuleBook(normalize=False), dustcanon.RuleBook()
    try:
        book.update("h.com", doc)
    except RuleError as exc:
        with pytest.raises(dustcanon.Rejected) as got:
            mod.update("h.com", json.loads(json.dumps(doc)))
        assert got.value.reason == exc.reason, (got.value, exc)
        return
    mod.update("h.com", json.loads(json.dumps(doc)))
    for u in urls:
        assert mod.canonize(u) == book.canonize(u).canonical
