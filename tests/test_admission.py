"""Rule-set admission at every consumer (dustbuster.core.canon.admission through the rule book; dustcanon.py the
same): the schema-valid but harmful sets of the reliability issue are refused, counted by reason,
and the previous set stays."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import dustcanon
from dustbuster.core import ParamRule, SubstringRule
from dustbuster.core.model.pattern import PatternRule
from dustbuster.core.model.scopedrules import CaseRule, QueryRule
from dustbuster.core.canon.admission import MAX_RULES, admit_rules, probe_urls
from dustbuster.core.errors import RuleError
from dustbuster.core.canon.rulebook import RuleBook
from dustbuster.stream.rulesview import TopicFollower

R = SubstringRule.from_parts
SITE = "d4.test"
GOOD = {"site": SITE, "version": 3, "rules": [ParamRule("sid", "remove", status="valid").to_json(),
                                              R("http://www.", "http://", True, status="valid").to_json()]}


def sub(alpha, beta, start=False, end=False, status="valid"):
    return R(alpha, beta, start, end, status=status).to_json()


HARMFUL = [
    ("off_site", {"version": 4, "rules": [sub("http://d4.test/", "http://evil.example/", start=True)]}),
    ("off_site", {"version": 4, "rules": [sub("http://www.d4.test/", "http://www.evil.example/", start=True)]}),
    ("downgrade", {"version": 4, "rules": [sub("https://", "http://", start=True)]}),   # TLS stripped from a crawl
    ("downgrade", {"version": 4, "rules": [sub("https://www.", "http://", start=True)]}),
    ("not_a_url", {"version": 4, "rules": [sub("/", "")]}),
    ("not_a_url", {"version": 4, "rules": [sub("http://", "", start=True)]}),
    ("self_feeding", {"version": 4, "rules": [sub("", "x")]}),
    ("self_feeding", {"version": 4, "rules": [sub("", "?utm_source=feed0", end=True)]}),
    ("non_converging", {"version": 4, "rules": [sub("/a/", "/b/"), sub("/b/", "/a/c/")]}),   # /a/ → /b/ → /a/c/ → …
    ("stale_version", {"version": 2, "rules": GOOD["rules"]}),
    ("bad_version", {"version": -5, "rules": GOOD["rules"]}),
    ("unvalidated_rule", {"version": 4, "rules": [ParamRule("sid", "remove").to_json()]}),   # status likely
    ("unvalidated_rule", {"version": 4, "rules": [sub("/x", "/y", status="invalid")]}),
    ("too_many_rules", {"version": 4, "rules": [sub(f"/a{i}/", "/b/") for i in range(MAX_RULES + 1)]}),
]


@pytest.mark.parametrize("reason, doc", HARMFUL, ids=[f"{r}-{i}" for i, (r, _) in enumerate(HARMFUL)])
def test_a_harmful_set_is_refused_and_the_previous_set_stays(reason, doc):
    book = RuleBook()
    book.update(SITE, GOOD)
    with pytest.raises(RuleError) as got:
        book.update(SITE, doc)
    assert got.value.reason == reason, got.value
    assert book.sites[SITE].version == 3 and book.rejected == {reason: 1}
    assert book.canonize("http://www.d4.test/a/?sid=1").canonical == "http://d4.test/a/"
    mod = dustcanon.RuleBook()
    mod.update(SITE, GOOD)
    with pytest.raises(dustcanon.Rejected) as also:
        mod.update(SITE, json.loads(json.dumps(doc)))
    assert also.value.reason == reason


def test_through_the_rules_follower_a_refused_set_is_counted_by_reason():
    book = RuleBook()
    seen = []
    f = TopicFollower("127.0.0.1:1", "t", book.update, on_reject=lambda reason, site: seen.append(reason))
    f.apply(SITE.encode(), json.dumps(GOOD).encode())
    for _, doc in HARMFUL:
        f.apply(SITE.encode(), json.dumps(doc).encode())
    assert seen == [r for r, _ in HARMFUL] and book.sites[SITE].version == 3
    f.apply(SITE.encode(), json.dumps(GOOD).encode())                      # the same version again: no error
    assert f.bad == len(HARMFUL)
    f.apply(SITE.encode(), json.dumps(GOOD | {"version": 4}).encode())     # a newer good one applies
    assert book.sites[SITE].version == 4


def test_probe_list_includes_the_sets_own_sample_urls():
    rule = R("/story?id=", "/story_", status="valid", evidence={"samples": [["http://x.d4.test/story?id=1", "v", "similar"]]})
    urls = probe_urls(SITE, {}, [rule])
    assert "http://x.d4.test/story?id=1" in urls and f"https://www.{SITE}/a/b/" in urls


URLS = st.sampled_from(["http://d4.test/", "http://www.d4.test/a/b?x=1", "https://d4.test/story?id=3&sid=z"])


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(["/", "http://", "www.", "d4.test", "/a", "?x=", "", "story", "_"]),
                          st.sampled_from(["/", "", "evil.example", "/b", "x", "story_", "www."]),
                          st.booleans(), st.booleans()), max_size=4), st.lists(URLS, max_size=3))
def test_an_admitted_set_never_leaves_the_site_nor_breaks_a_probe(parts, urls):
    rules = []
    for a, b, s, e in parts:
        if a != b:
            rules.append(sub(a, b, s, e))
    try:
        got = admit_rules(SITE, {"version": 1, "rules": rules})
    except RuleError:
        return
    from dustbuster.core.canon.canonize import Canonizer

    canon = Canonizer(list(got[1]))
    for u in probe_urls(SITE, {}, []) + urls:
        c = canon.canonize(u)
        assert c.converged and "://" in c.canonical
        host = c.canonical.split("://", 1)[1].split("/", 1)[0].split("?", 1)[0].split(":", 1)[0]
        assert host == SITE or host.endswith("." + SITE), (u, c.canonical, rules)


# ------------------------------------------------------------------ the rule types beyond the papers

def pat(alpha, beta, start=False, end=False, status="valid"):
    return PatternRule(("\x02" if start else "") + alpha + ("\x03" if end else ""),
                       ("\x02" if start else "") + beta + ("\x03" if end else ""), status=status).to_json()


MIXED = {"site": SITE, "version": 3, "rules": [
    ParamRule("sid", "remove", status="valid", scope="/forum").to_json(),
    QueryRule("/static", "drop", status="valid").to_json(),
    QueryRule("/search", "drop", ("q",), status="valid").to_json(),
    QueryRule("/list", "sort", status="valid").to_json(),
    CaseRule("/wiki", status="valid").to_json(),
    R("http://www.", "http://", True, status="valid").to_json(),
    pat("page={digits}&", "page=1&"),
    pat("/story/{digits}/print", "/story/{digits}")]}


def test_a_good_mixed_set_with_every_type_is_admitted_alike():
    got = admit_rules(SITE, MIXED)
    assert got is not None and [r.type for r in got[1]] == ["parameter", "query", "query", "query", "case", "substring",
                                                            "pattern", "pattern"]
    book, mod = RuleBook(normalize=False), dustcanon.RuleBook()
    book.update(SITE, MIXED)
    mod.update(SITE, json.loads(json.dumps(MIXED)))
    for u, want in [("http://www.d4.test/forum/t?sid=1&p=2", "http://d4.test/forum/t?p=2"),
                    ("http://d4.test/forumx?sid=1", "http://d4.test/forumx?sid=1"),
                    ("http://d4.test/static/a.css?v=9", "http://d4.test/static/a.css"),
                    ("http://d4.test/search?x=1&q=dust&page=5&y", "http://d4.test/search?q=dust"),
                    ("http://d4.test/list?page=7&b=2&a=1", "http://d4.test/list?a=1&b=2&page=7"),  # no & after 7
                    ("http://d4.test/list?page=7&a=1", "http://d4.test/list?a=1&page=7"),
                    ("http://d4.test/x?page=7&a=1", "http://d4.test/x?page=1&a=1"),
                    ("http://d4.test/wiki/Main_Page", "http://d4.test/wiki/main_page"),
                    ("http://d4.test/Wiki/Main_Page", "http://d4.test/Wiki/Main_Page"),
                    ("http://d4.test/story/12/print", "http://d4.test/story/12")]:
        assert book.canonize(u).canonical == want and mod.canonize(u) == want, u


HARMFUL_NEW = [
    # a pattern rule that rewrites the host away from the site: the probe check catches it as for substrings
    ("off_site", {"version": 4, "rules": [pat("http://{word}.test/", "http://evil.example/", start=True)]}),
    ("not_a_url", {"version": 4, "rules": [pat("{word}://", "", start=True)]}),          # drops the scheme
    ("self_feeding", {"version": 4, "rules": [pat("/{digits}/", "/{digits}/x/")]}),       # /1/ → /1/x/ → /1/x/x/ …
    # /1/ → /1_/ → /1/a/ → /1_/a/ → /1/a/a/ …: each rule alone is fine, together they grow the URL forever
    ("non_converging", {"version": 4, "rules": [pat("/{digits}/", "/{digits}_/"), pat("/{digits}_/", "/{digits}/a/")]}),
    ("unvalidated_rule", {"version": 4, "rules": [QueryRule("/a", "drop").to_json()]}),   # status likely
    ("bad_rule", {"version": 4, "rules": [{"type": "query", "scope": "/a/", "action": "drop", "status": "valid"}]}),
    ("bad_rule", {"version": 4, "rules": [{"type": "regex", "pattern": ".*", "status": "valid"}]}),  # unknown type
    ("bad_rule", {"version": 4, "rules": [{"type": "pattern", "alpha": "/a/", "beta": "/b/", "status": "valid"}]}),
]


@pytest.mark.parametrize("reason, doc", HARMFUL_NEW, ids=[f"{r}-{i}" for i, (r, _) in enumerate(HARMFUL_NEW)])
def test_a_harmful_set_of_the_new_types_is_refused_alike(reason, doc):
    book = RuleBook()
    book.update(SITE, MIXED)
    with pytest.raises(RuleError) as got:
        book.update(SITE, doc)
    assert got.value.reason == reason, got.value
    assert book.sites[SITE].version == 3
    mod = dustcanon.RuleBook()
    mod.update(SITE, json.loads(json.dumps(MIXED)))
    with pytest.raises(dustcanon.Rejected) as also:
        mod.update(SITE, json.loads(json.dumps(doc)))
    assert also.value.reason == reason, also.value
    assert mod.sites[SITE].version == 3
