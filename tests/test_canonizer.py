"""The compiled canonizer (Aho–Corasick prefilter) = thesis Figure 5.5's canonize, the RFC 3986
normalization step, and the rule book (site lookup, versions, tombstones)."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dustbuster.core import Canonizer, DustParams, ParamRule, RuleError, SubstringRule, canonize, mine
from dustbuster.core.urls.normalize import normalize, normalize_or_keep
from dustbuster.core.canon.rulebook import RuleBook, _host
from tests.test_canonize import dusty_list

R = SubstringRule.from_parts

TOK = st.sampled_from(["a", "b", "www", "index", "html", "1", "id", "sid", "story", "x", ""])
SEPS = st.sampled_from(["/", "?", "=", "&", ".", "_", ":", "//", "-"])
FRAG = st.lists(st.tuples(SEPS, TOK), max_size=5).map(lambda xs: "".join(a + b for a, b in xs))


@st.composite
def substring_rule(draw):
    a, b = draw(FRAG), draw(FRAG)
    s, e = draw(st.booleans()), draw(st.booleans())
    if a == b:
        b = b + "/z"
    return R(a, b, s, e)


param_rule = st.builds(
    lambda n, act, v: ParamRule(n, act, v if act == "replace" else None),
    st.sampled_from(["id", "sid", "a", "x", "b"]), st.sampled_from(["remove", "replace"]), st.sampled_from(["1", "", "z"]))
rule_list = st.lists(st.one_of(substring_rule(), param_rule), max_size=12)
url = st.one_of(FRAG.map(lambda p: "http://www.h.com" + p), st.text(max_size=40))


@settings(max_examples=500, deadline=None)
@given(rule_list, url, st.integers(1, 10))
def test_compiled_equals_figure_5_5(rules, u, ma):
    assert Canonizer(rules, ma).canonize(u) == canonize(u, rules, ma)


@settings(max_examples=300, deadline=None)
@given(st.text(max_size=80))
def test_never_raises_and_stops_within_ma(s):
    rules = [R("", "x"), R("/", "", anchor_end=True), R("a", "aa"), ParamRule("sid", "remove"), R("www.", "", True)]
    res = Canonizer(rules, 10).canonize(s)
    assert res.iterations <= 10
    book = RuleBook()
    with pytest.raises(RuleError):  # such a set is never admitted: "" → "x" and "a" → "aa" feed themselves
        book.update("h.com", {"version": 1, "rules": [r.to_json() | {"status": "valid"} for r in rules]})
    admissible = [R("/", "", anchor_end=True, status="valid"), ParamRule("sid", "remove", status="valid"),
                  R("http://www.", "http://", True, status="valid")]
    book.update("h.com", {"version": 1, "rules": [r.to_json() for r in admissible]})
    for u in (s, "http://h.com/" + s, "http://www.h.com/" + s):
        out = book.canonize(u)
        assert isinstance(out.canonical, str) and out.url == u


@settings(max_examples=40, deadline=None)
@given(dusty_list())
def test_canonical_url_maps_to_itself_with_engine_rules(ul):
    result = mine(ul, DustParams(S=8))
    rules = [r for r in result.param_rules() + result.substring_rules() if r.direction != "growing"]
    c = Canonizer(rules)
    for u in ul:
        res = c.canonize(u)
        assert res.iterations <= 10
        if res.converged:
            again = c.canonize(res.canonical)
            assert again.canonical == res.canonical and not again.applied


# ------------------------------------------------------------------------- normalization

@pytest.mark.parametrize("raw, want", [
    ("HTTP://WWW.Example.COM/a", "http://www.example.com/a"),           # scheme, host case
    ("http://example.com:80/a", "http://example.com/a"),                # default port
    ("https://example.com:443/a", "https://example.com/a"),
    ("http://example.com:8080/a", "http://example.com:8080/a"),         # other ports kept
    ("http://example.com", "http://example.com/"),                      # empty path
    ("http://example.com?a=1", "http://example.com/?a=1"),
    ("http://example.com/a/./b/../c", "http://example.com/a/c"),        # dot segments
    ("http://example.com/../../a", "http://example.com/a"),
    ("http://example.com/%7euser/%41", "http://example.com/~user/A"),   # unreserved decoded
    ("http://example.com/a%2fb", "http://example.com/a%2Fb"),           # reserved kept, upper hex
    ("http://example.com/a%zz", "http://example.com/a%25zz"),           # stray % encoded
    ("http://example.com/p?q=%26%3D%2B", "http://example.com/p?q=%26%3D%2B"),  # separators kept
    ("http://example.com/p?a=1#top", "http://example.com/p?a=1"),       # fragment dropped
    ("http://example.com/p?", "http://example.com/p"),                  # empty query
    ("http://example.com/A/B", "http://example.com/A/B"),               # path case kept
    ("http://bücher.de/x", "http://xn--bcher-kva.de/x"),                # IDNA
    ("http://[::1]:80/x", "http://[::1]/x"),
    ("http://example.com/p?b=2&a=1", "http://example.com/p?b=2&a=1"),   # no parameter sorting
])
def test_normalize_case_table(raw, want):
    assert normalize(raw) == want
    assert normalize(want) == want  # idempotent


@pytest.mark.parametrize("bad", ["http://h:port/", "http://h:99999999/"])
def test_normalize_unparseable_is_kept(bad):
    assert normalize_or_keep(bad) == (bad, False)


@settings(max_examples=300, deadline=None)
@given(st.text(max_size=60))
def test_normalize_never_raises_unexpectedly(s):
    out, ok = normalize_or_keep("http://h.com/" + s)
    assert isinstance(out, str)
    if ok:
        assert normalize_or_keep(out)[0] == out


# ------------------------------------------------------------------------- rule book

DOC = {"site": "forum.test", "version": 3, "rules": [
    ParamRule("sid", "remove", status="valid").to_json(),
    R("http://www.", "http://", True, status="valid").to_json(),
    R("/story?id=", "/story_", status="valid").to_json(),
]}


def test_rulebook_site_lookup_versions_and_tombstones():
    book = RuleBook()
    book.update("Forum.Test", DOC)
    r = book.canonize("HTTP://WWW.Forum.test:80/story?id=5&sid=abc#x")
    assert r.canonical == "http://forum.test/story_5"
    assert r.site == "forum.test" and r.version == 3
    assert r.rules == ("remove sid=*", '"^http://www." → "^http://"', '"/story?id=" → "/story_"')
    invalid = R("/index.html", "/", anchor_end=True, status="invalid").to_json()
    with pytest.raises(RuleError, match="unvalidated_rule"):  # a set with a rule that is not valid: not applied
        book.update("forum.test", DOC | {"version": 4, "rules": DOC["rules"] + [invalid]})
    assert book.canonize("http://forum.test/d/index.html").canonical == "http://forum.test/d/index.html"
    assert book.canonize("http://a.b.forum.test/story?id=1").site == "forum.test"      # parent domain
    assert book.canonize("http://other.test/story?id=1").version is None               # unknown site
    assert book.canonize("http://other.test/story?id=1", site="forum.test").canonical == "http://other.test/story_1"
    assert book.canonize("http://forum.test/p?sid=1", normalize=False).canonical == "http://forum.test/p"
    with pytest.raises(RuleError):
        book.update("forum.test", {"version": 4, "rules": [{"type": "nope"}]})
    assert book.sites["forum.test"].version == 3 and book.bad == 2                         # kept
    assert book.rejected == {"unvalidated_rule": 1, "bad_rule": 1}
    book.update("forum.test", None)
    assert book.canonize("http://forum.test/story?id=1").canonical == "http://forum.test/story?id=1"


@pytest.mark.parametrize("u, host", [
    ("http://User:pw@WWW.H.com:8080/x?y#z", "www.h.com"), ("https://h.com", "h.com"), ("h.com/x", ""),
    ("http://[::1]:80/", "[::1]"), ("http://h.com?x=/", "h.com"),
])
def test_host(u, host):
    assert _host(u) == host


PLAINISH = st.text(alphabet="abcxyzABZ019-._~!$&'()*+,;=:@/?%# ", max_size=30)
HOSTS = st.sampled_from(["h.com", "www.h.com", "a-b.h.com", "xn--bcher-kva.de", "h..com", "-h.com", "h.com.", "1.2.3.4", "h"])


@settings(max_examples=2000, deadline=None)
@given(st.sampled_from(["http", "https", "HTTP"]), HOSTS, PLAINISH)
def test_fast_path_only_skips_urls_yarl_leaves_unchanged(scheme, host, rest):
    from dustbuster.core.urls.normalize import _normalize, already_normal

    u = f"{scheme}://{host}/{rest}"
    if already_normal(u):
        assert _normalize(u) == u
