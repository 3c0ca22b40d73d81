"""The dependency-free crawler module dustcanon.py gives the service's canonical URLs."""

from __future__ import annotations

import json
import subprocess
import sys

from hypothesis import given, settings
from hypothesis import strategies as st

import pytest

import dustcanon
from dustbuster.core.errors import RuleError
from dustbuster.core.urls.normalize import normalize
from dustbuster.core.canon.rulebook import RuleBook
from tests.test_canonizer import rule_list, url

from tests.conftest import ROOT


@settings(max_examples=400, deadline=None)
@given(rule_list, st.lists(url, max_size=5), st.sampled_from(["valid", "likely", "invalid"]))
def test_same_as_service(rules, urls, status):
    doc = {"site": "www.h.com", "version": 2, "rules": [r.to_json() | {"status": status} for r in rules]}
    book = RuleBook(normalize=False)
    mod = dustcanon.RuleBook()
    try:  # both admit the set, or both reject it (docs/canonizer.md "Admission")
        book.update("www.h.com", doc)
    except RuleError as exc:
        with pytest.raises(dustcanon.Rejected):
            mod.update("www.h.com", json.loads(json.dumps(doc)))
        assert status != "valid" or exc.reason != "unvalidated_rule"
        return
    mod.update("www.h.com", json.loads(json.dumps(doc)))
    assert status == "valid" or not rules
    rs = dustcanon.RuleSet(doc)
    for u in urls:
        want = book.canonize(u).canonical
        assert mod.canonize(u) == want
        assert rs.canonize(u) == book.canonize(u, site="www.h.com").canonical


def test_normalize_hook_and_mine_documents(tmp_path):
    doc = {"param_rules": [{"type": "parameter", "name": "sid", "action": "remove"}],
           "rules": [{"type": "substring", "alpha": "http://www.", "beta": "http://", "anchor_start": True}]}
    p = tmp_path / "r.json"
    p.write_text(json.dumps(doc))
    with pytest.raises(dustcanon.Rejected, match="unvalidated_rule"):  # mine's candidates: only when asked
        dustcanon.load(p, normalize=normalize)
    rs = dustcanon.load(p, normalize=normalize, unvalidated=True)
    assert rs("HTTP://WWW.H.COM:80/a/../b?sid=1#f") == "http://h.com/b"
    assert dustcanon.canonize("http://www.h.com/?sid=2", doc, unvalidated=True) == "http://h.com/"


def test_admission_like_the_service():
    ok = {"type": "parameter", "name": "sid", "action": "remove", "status": "valid"}
    book = dustcanon.RuleBook()
    book.update("d4.test", {"version": 2, "rules": [ok]})
    bad = [({"version": 3, "rules": [{"type": "substring", "alpha": "http://d4.test/", "beta": "http://evil.example/",
                                      "anchor_start": True, "status": "valid"}]}, "off_site"),
           ({"version": 3, "rules": [{"type": "substring", "alpha": "/", "beta": "", "status": "valid"}]}, "not_a_url"),
           ({"version": 3, "rules": [{"type": "substring", "alpha": "", "beta": "x", "status": "valid"}]}, "self_feeding"),
           ({"version": 1, "rules": [ok]}, "stale_version"), ({"version": float("inf"), "rules": []}, "bad_version"),
           ({"version": 3, "rules": [dict(ok, status="likely")]}, "unvalidated_rule"), ({"version": 3, "rules": 5}, "bad_record")]
    for doc, reason in bad:
        with pytest.raises(dustcanon.Rejected) as got:
            book.update("d4.test", doc)
        assert got.value.reason == reason
        service = RuleBook()
        service.update("d4.test", {"version": 2, "rules": [ok]})
        with pytest.raises(RuleError) as want:
            service.update("d4.test", doc)
        assert want.value.reason == reason
    assert book.sites["d4.test"].version == 2 and book.canonize("http://d4.test/?sid=1") == "http://d4.test/"


def test_module_imports_nothing_outside_the_standard_library():
    code = ("import sys; sys.path.insert(0, '.'); import dustcanon; bad = [m for m in sys.modules if m.split('.')[0] in "
            "('dustbuster','yarl','ahocorasick','numpy','faust','aiohttp')]; print(bad)")
    out = subprocess.run([sys.executable, "-I", "-c", code], cwd=ROOT, capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


# ------------------------------------------------------------------ the rule types beyond the papers

from dustbuster.core import ParamRule  # noqa: E402
from dustbuster.core.canon.canonize import canonize as core_canonize  # noqa: E402
from dustbuster.core.model.pattern import PatternRule  # noqa: E402
from dustbuster.core.model.scopedrules import CaseRule, QueryRule  # noqa: E402
from dustbuster.core.model.ruletype import REGISTRY  # noqa: E402
from tests.test_canonizer import SEPS, param_rule, substring_rule  # noqa: E402

TOK2 = st.sampled_from(["a", "b", "A", "Story", "www", "id", "sid", "x", "1", "12", "0a1b", "FF", "3f", "p", ""])
FRAG2 = st.lists(st.tuples(SEPS, TOK2), max_size=5).map(lambda xs: "".join(a + b for a, b in xs))
SCOPES = st.sampled_from(["", "/a", "/a/b", "/A", "/p"])
NAMES = st.sampled_from(["id", "sid", "a", "x", "b"])
scoped_param = st.builds(lambda n, act, v, s: ParamRule(n, act, v if act == "replace" else None, scope=s),
                         NAMES, st.sampled_from(["remove", "replace"]), st.sampled_from(["1", "", "z"]), SCOPES)
def _closed(scope, only):
    """A drop rule published as its closed list (None where the scope itself names one of them)."""
    try:
        return QueryRule(scope, "drop", (), only=tuple(dict.fromkeys(only)))
    except RuleError:
        return None


query_rule = st.one_of(st.builds(lambda s, k: QueryRule(s, "drop", tuple(dict.fromkeys(k))), SCOPES, st.lists(NAMES, max_size=2)),
                       st.builds(_closed, SCOPES, st.lists(NAMES, min_size=1, max_size=3)).filter(bool),
                       st.builds(lambda s: QueryRule(s, "sort"), SCOPES))
case_rule = st.builds(CaseRule, SCOPES)
SAMPLE = {"digits": ["1", "12"], "hex": ["0a1b", "FF", "3f"], "word": ["a", "Story", "1"]}


@st.composite
def pattern_rule(draw):
    """α with one placeholder between two fragments; β literal (sometimes α with a value of the class,
    a match the rule steps over), or copying the placeholder."""
    cls = draw(st.sampled_from(sorted(SAMPLE)))
    pre, post = draw(FRAG2), draw(FRAG2)
    how = draw(st.sampled_from(["literal", "same", "copy"]))
    if how == "same":
        beta = pre + draw(st.sampled_from(SAMPLE[cls])) + post
    else:
        beta = draw(FRAG2) + ("{%s}" % cls if how == "copy" else "") + draw(FRAG2)
    s, e = draw(st.booleans()), draw(st.booleans())
    wrap = lambda x: ("\x02" if s else "") + x + ("\x03" if e else "")  # noqa: E731
    try:
        return PatternRule(wrap(pre + "{%s}" % cls + post), wrap(beta))
    except RuleError:
        return None


pattern_rules = pattern_rule().filter(lambda r: r is not None)
#: the rules of the types beyond the core's (dustbuster.core.model.ruletypes): each type's own samples
REGISTERED = [r for cls in REGISTRY.values() for r in cls.samples()]
new_rule = st.one_of(scoped_param, query_rule, case_rule, pattern_rules, *([st.sampled_from(REGISTERED)] if REGISTERED else []))
mixed_rules = st.lists(st.one_of(substring_rule(), param_rule, new_rule), max_size=8)
url2 = st.one_of(FRAG2.map(lambda p: "http://www.h.com" + p), FRAG2.map(lambda p: "http://www.h.com/a" + p),
                 FRAG2.map(lambda p: "https://h.com/A/b" + p), st.text(max_size=30))


def mod_rules(rules):
    return [dustcanon._rule(json.loads(json.dumps(r.to_json()))) for r in rules]


@settings(max_examples=400, deadline=None)
@given(mixed_rules, st.lists(url2, max_size=6), st.integers(1, 10))
def test_every_type_canonizes_as_the_core(rules, urls, ma):
    """Figure 5.5 with any mix of rule types, admitted or not: the same result, converged or not."""
    mine = mod_rules(rules)
    for u in urls:
        if "\x02" in u or "\x03" in u:
            continue
        want = core_canonize(u, rules, ma)
        assert dustcanon._run(mine, u, ma) == (want.canonical, want.converged), (u, [r.text for r in rules])


@settings(max_examples=200, deadline=None)
@given(mixed_rules, st.lists(url2, max_size=4))
def test_every_type_is_admitted_as_by_the_service(rules, urls):
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


def doc_of(*rules):
    return {"site": "h.com", "version": 1, "rules": [r.to_json() | {"status": "valid"} for r in rules]}


CASES = [
    # parameter rules with a scope: only URLs whose path is the scope or below it
    (ParamRule("sid", "remove", scope="/a"), [("http://h.com/a?sid=1&x=2", "http://h.com/a?x=2"),
                                              ("http://h.com/a/b?sid=1", "http://h.com/a/b"),
                                              ("http://h.com/ab?sid=1", "http://h.com/ab?sid=1"),
                                              ("http://h.com/?sid=1", "http://h.com/?sid=1")]),
    (ParamRule("o", "replace", "1", scope="/a/b"), [("http://h.com/a/b/c?o=5", "http://h.com/a/b/c?o=1"),
                                                    ("http://h.com/a?o=5", "http://h.com/a?o=5")]),
    # query rules: drop (keeping some), sort
    (QueryRule("/s", "drop"), [("http://h.com/s/x?a=1&b", "http://h.com/s/x"), ("http://h.com/s?", "http://h.com/s"),
                               ("http://h.com/t?a=1", "http://h.com/t?a=1")]),
    (QueryRule("", "drop", ("q", "p")), [("http://h.com/x?z=1&p=2&q&q=3", "http://h.com/x?p=2&q&q=3"),
                                         ("http://h.com/x?z=1", "http://h.com/x")]),
    (QueryRule("", "drop", (), only=("q", "p")), [("http://h.com/x?z=1&p=2&q&q=3", "http://h.com/x?z=1"),
                                                  ("http://h.com/x?p=1", "http://h.com/x")]),  # a closed list: z stays
    (QueryRule("/l", "sort"), [("http://h.com/l?b=2&a=1&a", "http://h.com/l?a=1&a&b=2"),
                               ("http://h.com/m?b=2&a=1", "http://h.com/m?b=2&a=1")]),
    # case rules: the path below the scope, never the host, scheme, scope or query
    (CaseRule("/Wiki"), [("http://H.com/Wiki/Main_Page?X=1", "http://H.com/Wiki/main_page?X=1"),
                         ("http://h.com/wiki/Main", "http://h.com/wiki/Main")]),
    (CaseRule(""), [("http://h.com/A/B", "http://h.com/a/b")]),
    # pattern rules: literal β (a match already reading as β is stepped over) and copying β
    (PatternRule("={digits}&", "=20&"), [("http://h.com/x?n=20&m=5&", "http://h.com/x?n=20&m=20&"),
                                         ("http://h.com/x?n=a5&", "http://h.com/x?n=a5&")]),
    (PatternRule("/item/{hex}/print", "/item/{hex}"), [("http://h.com/item/0a1b/print", "http://h.com/item/0a1b"),
                                                       ("http://h.com/item/0A1b/print", "http://h.com/item/0A1b/print")]),
    (PatternRule("\x02http://{word}.h.com/", "\x02http://h.com/"), [("http://www.h.com/a", "http://h.com/a")]),
]


@pytest.mark.parametrize("rule, cases", CASES, ids=[r.text for r, _ in CASES])
def test_new_type_cases(rule, cases):
    rs = dustcanon.RuleSet(doc_of(rule))
    for u, want in cases:
        assert rs.canonize(u) == want == core_canonize(u, [rule]).canonical, u


def test_unknown_rule_types_are_refused_clearly():
    for bad in ({"type": "regex", "pattern": ".*"}, {"type": "regex", "alpha": "a", "beta": "b"}):
        with pytest.raises(dustcanon.Rejected, match="unknown rule type 'regex'") as got:
            dustcanon.RuleSet({"rules": [bad | {"status": "valid"}]})
        assert got.value.reason == "bad_rule"
    with pytest.raises(dustcanon.Rejected, match="bad_rule"):
        dustcanon.RuleSet({"rules": [{"type": "case", "scope": "wiki", "status": "valid"}]})


def test_a_mine_document_is_put_in_canonization_order():
    doc = {"param_rules": [ParamRule("sid", "remove").to_json()], "general_rules": [CaseRule("").to_json()],
           "rules": [PatternRule("/{digits}/x", "/{digits}").to_json(), {"type": "substring", "alpha": "/A/", "beta": "/b/"}]}
    rs = dustcanon.RuleSet(doc, unvalidated=True)
    assert [r.kind for r in rs.rules] == ["parameter", "case", "substring", "pattern"]
    assert rs("http://h.com/A/7/x?sid=1") == "http://h.com/a/7"    # case first: "/A/" is "/a/" already


def test_pattern_matches_may_overlap_as_in_the_core():
    import dustcanon
    from dustbuster.core.canon.canonize import canonical
    from dustbuster.core.model.pattern import PatternRule

    rule = PatternRule("/{digits}/", "/1/", status="valid")
    doc = {"schema": "dustbuster/ruleset@1", "site": "h.com", "version": 1, "rules": [rule.to_json()]}
    for url in ("http://h.com/1/5/x", "http://h.com/5/1/x", "http://h.com/1/2/3/"):
        assert dustcanon.canonize(url, doc) == canonical(url, [rule]) == "http://h.com/" + url.split("/", 3)[3].replace("5", "1").replace("2", "1").replace("3", "1")
