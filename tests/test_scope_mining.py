"""Mining query-parameter scopes (core/mining/qscope.py) and generalised sibling scopes (core/mining/siblings.py)
on small synthetic wiki-like URL lists (issue 28 items 2 and 3)."""

from __future__ import annotations

from dustbuster.core.mining.mine import mine
from dustbuster.core.params import DustParams
from dustbuster.core.model.rules import ParamRule
from dustbuster.core.mining.scoped import mine_scoped_param_rules
from dustbuster.core.model.scopedrules import QueryRule
from dustbuster.core.mining.siblings import generalise, parent_scope
from dustbuster.core.urls.urllist import URLList

H = "http://w.org/index.php?title="


def wiki(recent: int = 20) -> URLList:
    """The login page with 30 return-to targets (one page), ordinary pages, and a special page
    where returnto= does change the page (``recent`` of them)."""
    ul = URLList()
    ul.add(H + "Special:UserLogin", 200, 5000)
    for i in range(30):
        ul.add(f"{H}Special:UserLogin&returnto=Page_{i}", 200, 5000 + i % 3)
        ul.add(f"{H}Page_{i}", 200, 2000 + 300 * i)
    for i in range(recent):
        ul.add(f"{H}Special:Recent&returnto=Page_{i}", 200, 9000 + 700 * i)
    ul.add(H + "Special:Recent", 200, 700)
    return ul


def test_a_no_op_parameter_of_one_special_page_gets_a_query_scope():
    rules = mine_scoped_param_rules(wiki(), DustParams())
    assert [(r.text, r.support, r.disqualified) for r in rules] == [
        ("remove returnto=* where title=Special:UserLogin", 30, 0)]
    assert rules[0].scope == "?title=Special:UserLogin"
    assert rules[0].evidence["scope_key"] == "title=Special:UserLogin"


def test_where_a_path_scope_holds_the_query_scope_is_added_when_its_evidence_shows_one_selector():
    """Issue 23: the global rule holds, but every supporting URL has title=Special:UserLogin (one
    fixed selector value): the query-scoped rule is listed too (only it can be decided on one page)."""
    rules = mine_scoped_param_rules(wiki(recent=3), DustParams())
    assert [r.text for r in rules] == ["remove returnto=*", "remove returnto=* where title=Special:UserLogin"]


def test_where_the_supporting_urls_share_no_selector_no_query_scope_is_added():
    ul = wiki(recent=3)
    for i in range(30):  # the login page under another title too: the evidence fixes no title
        ul.add(f"{H}Special:Login2&returnto=Page_{i}", 200, 4000 + i % 3)
    ul.add(H + "Special:Login2", 200, 4000)
    rules = mine_scoped_param_rules(ul, DustParams())
    assert [r.text for r in rules] == ["remove returnto=*"]


def test_mine_counts_query_scoped_rules():
    result = mine(wiki())
    assert result.stats["query_scoped_rules"] == 1
    assert any(r.scope == "?title=Special:UserLogin" for r in result.param_rules())


def doku(refuting: int) -> URLList:
    """DokuWiki with namespaces as path segments (``/doku.php/pkg/<ns>/<page>?s=…``): the search
    highlight ``s=`` is a no-op under libs and misc; ``refuting`` comparisons where it is not under
    each of two other namespaces."""
    ul = URLList()
    for ns in ("libs", "misc"):
        for i in range(4):
            base = f"http://w.org/doku.php/pkg/{ns}/p{i}"
            ul.add(base, 200, 3000 + 500 * i)
            ul.add(base + f"?s=term{i}", 200, 3000 + 500 * i)
    for ns in ("utils", "net"):
        for i in range(refuting):
            base = f"http://w.org/doku.php/pkg/{ns}/p{i}"
            ul.add(base, 200, 1000)
            ul.add(base + f"?s=term{i}", 200, 8000 + 100 * i)
    return ul


def test_siblings_give_a_parent_candidate_and_stay():
    rules = mine_scoped_param_rules(doku(refuting=2), DustParams(), refuted=(refuted := {}))
    assert sorted(r.scope for r in rules) == ["/doku.php/pkg/libs", "/doku.php/pkg/misc"]
    parents = generalise(rules, refuted)
    assert [(r.text, r.support, r.disqualified) for r in parents] == [("remove s=* under /doku.php/pkg", 8, 0)]
    assert parents[0].evidence["generalised_from"] == ["/doku.php/pkg/libs", "/doku.php/pkg/misc"]
    result = mine(doku(refuting=2))
    assert [r.scope for r in result.param_rules() if r.name == "s"] == [
        "/doku.php/pkg", "/doku.php/pkg/libs", "/doku.php/pkg/misc"]  # the parent first, the siblings kept
    assert result.stats["generalised_scopes"] == 1


def test_a_refuted_sibling_blocks_the_parent():
    rules = mine_scoped_param_rules(doku(refuting=3), DustParams(), refuted=(refuted := {}))
    assert sorted(r.scope for r in rules) == ["/doku.php/pkg/libs", "/doku.php/pkg/misc"]
    assert "/doku.php/pkg/utils" in refuted[("parameter", "remove", "s", None)]
    assert generalise(rules, refuted) == []


def test_generalise_rules():
    assert parent_scope("/a/b") == "/a" and parent_scope("/a") == "" and parent_scope("") is None
    assert parent_scope("/index.php?title=Special:UserLogin") == "/index.php"
    sibs = [QueryRule("/w/a", "drop", ("do",), 5, 0), QueryRule("/w/b", "drop", ("do", "idx"), 4, 1),
            ParamRule("s", "remove", scope="/w/a"), ParamRule("t", "remove", scope="/w/b")]
    out = generalise(sibs, {})
    assert [(r.text, r.support) for r in out] == [("drop the query but do, idx under /w", 9)]
    assert generalise(sibs, {("query", "drop"): ["/w/c"]}) == []
    assert generalise(sibs + [QueryRule("/w", "drop", ("do",))], {}) == []  # the parent is mined already
    qs = [ParamRule("returnto", "remove", scope="/i?title=A"), ParamRule("returnto", "remove", scope="/i?title=B")]
    assert [r.scope for r in generalise(qs, {})] == ["/i"]
    assert generalise(qs, {("parameter", "remove", "returnto", None): ["/i?title=C"]}) == []
    assert generalise(qs, {("parameter", "remove", "returnto", None): ["/i"]}) != []  # the parent itself: asked


def test_generalised_closed_lists_drop_what_some_sibling_dropped_and_none_keeps():
    sibs = [QueryRule("/w/a", "drop", ("do",), 5, 0, only=("idx", "rev")),
            QueryRule("/w/b", "drop", ("idx",), 4, 1, only=("do2", "rev"))]
    (parent,) = generalise(sibs, {})
    assert parent.scope == "/w" and parent.keep == ("do", "idx") and parent.only == ("do2", "rev")
    assert parent.text == "drop do2, rev from the query under /w"
    mixed = [sibs[0], QueryRule("/w/b", "drop", ("idx",), 4, 1)]
    assert generalise(mixed, {}) == []  # a closed and an open list: no parent


def test_one_rule_for_a_family_spread_over_several_parents():
    from dustbuster.core.mining.siblings import family_roots, least_general_scope

    fam = [ParamRule("hl", "remove", scope=s, support=4) for s in
           ("/doku.php/pkg/libs", "/doku.php/pkg/misc", "/doku.php/wiki/syntax", "/doku.php/wiki/start")]
    shape = ("parameter", "remove", "hl", None)
    assert [r.text for r in generalise(fam, {})] == ["remove hl=* under /doku.php/pkg", "remove hl=* under /doku.php/wiki"]
    (root,) = family_roots(fam + generalise(fam, {}), {})
    assert root.text == "remove hl=* under /doku.php" and root.support == 16
    assert root.evidence["family"] is True and root.evidence["members"] == 4
    # a pooled failure on the members' way up is asked; a region refuted on its own blocks the root
    assert family_roots(fam, {shape: ["/doku.php", "/doku.php/pkg"]}) != []
    assert family_roots(fam, {shape: ["/doku.php/user"]}) == []
    assert family_roots(fam + [ParamRule("hl", "remove", scope="/doku.php")], {}) == []  # covered already
    assert family_roots(fam[:2], {}) == []  # one parent: generalise's job
    assert least_general_scope(["/w/index.php?title=A", "/wiki/B", "/wiki/C/D"]) == ""


def test_mine_reports_its_family_rules():
    result = mine(doku(refuting=2))
    assert result.stats["family_rules"] == 0  # one parent only: the sibling rule says it


def test_an_empty_parameter_name_makes_no_drop_but_rule_and_no_crash():
    """A log with ``?=2&=1`` and stray ``&`` (what a hostile or broken client sends) is mined
    without an error: the query rule that would have to keep the empty name is not proposed."""
    from dustbuster.core.mining.mine import mine
    from dustbuster.core.urls.urllist import URLList

    ul = URLList()
    for u, size in (("http://h/a?&", 100), ("http://h/b?=2&=1", 200), ("http://h/a/x?=2&=2", 300), ("http://h/b", 100),
                    ("http://h/a", 300), ("http://h/a/x?a&a=1&=2&", 200), ("http://h/b?b&b&=2&", 200),
                    ("http://h/b?c&b=2", 100), ("http://h/a?b=&a=1&b&", 200)):
        ul.add(u, 200, size)
    result = mine(ul, DustParams(ms=1))
    assert all("''" not in r.text for r in result.general)


HOSTILE_NAMES = ("", "a", "b", "?", "a#", "%3D", "a b")


def _hostile_url(draw) -> str:
    from hypothesis import strategies as st

    items = []
    for _ in range(draw(st.integers(0, 3))):
        n = draw(st.sampled_from(HOSTILE_NAMES))
        items.append(n if draw(st.booleans()) and not draw(st.booleans()) else n + "=" + draw(st.sampled_from(("1", "2", "", "?", "/x"))))
    q = "&".join(items) + draw(st.sampled_from(("", "&")))
    return "http://h/" + draw(st.sampled_from(("a", "b", "a/x", "a%2F"))) + ("?" + q if q else "")


def test_hostile_query_names_never_crash_the_miner():
    """Empty names, a name "?" (``??=1``), names with ``#`` or a space, as the log reader passes
    them on (fragments stripped): every miner skips what no rule can name (Hypothesis)."""
    from hypothesis import given, settings, strategies as st

    from dustbuster.core.mining.mine import mine

    @settings(max_examples=150, deadline=None)
    @given(st.lists(st.tuples(st.composite(lambda draw: _hostile_url(draw))(), st.sampled_from((100, 200, 300))),
                    min_size=2, max_size=12))
    def check(rows):
        ul = URLList()
        for u, size in rows:
            ul.add(u, 200, size)
        mine(ul, DustParams(ms=1))

    check()
