"""Rules implied by a valid set (core/validation/implied.py): one host rule per alias in place of
chains, reversed and per-path host literals; query-to-path mappings carried through the substring
rules that rewrite their scope.  Each rewrite is checked by canonizing: every URL's canonical form
under the new set equals or improves on its form under the old one, and no two URLs the old set
kept apart and the host rules do not join are merged."""

from __future__ import annotations

import itertools

from hypothesis import given, settings, strategies as st

from dustbuster.core.canon.canonize import Canonizer
from dustbuster.core.model.hostrules import host_rule_hosts
from dustbuster.core.model.rules import ParamRule, SubstringRule
from dustbuster.core.model.ruletypes.querypath import QueryPathRule
from dustbuster.core.validation.implied import one_rule_per_alias, through_substrings
from dustbuster.core.validation.validate import canonization_order

T, T2, W, W2 = ("http://wiki.test:4000", "http://wiki.test:5000", "http://www.wiki.test:4000",
                "http://www.wiki.test:5000")


def host(a: str, b: str, slash: str = "/") -> SubstringRule:
    return SubstringRule.from_parts(a + slash, b + slash, anchor_start=True, status="valid")


#: what a validator published for one wiki under four origins (a real run's shape): the alias
#: round's rules, a log-mined chain toward the alias port, a port literal without the slash, and
#: a per-path literal for the second port
MESSY = [host(W, T2), host(W2, W, slash=""), host(W, T), host(T2, T),
         SubstringRule.from_parts("wiki.test:5000/w/", "wiki.test:4000/w/", status="valid"),
         ParamRule("utm_source", "remove", status="valid")]


def test_one_rule_per_alias_toward_the_declared_target():
    out = one_rule_per_alias(MESSY, T)
    assert [r.text for r in out] == [f'"^{T2}/" → "^{T}/"', f'"^{W}/" → "^{T}/"', f'"^{W2}/" → "^{T}/"',
                                     "remove utm_source=*"]
    assert all(host_rule_hosts(r) is not None for r in out[:3])  # the form every consumer reads as a host rule
    assert out[2].evidence["implied_by"] and out[2].status == "valid"  # made from the closure, says so
    assert out[0] is MESSY[3] and out[1] is MESSY[2]  # the valid rules in that form stay as they were


def test_every_url_of_every_origin_reaches_one_form():
    before, after = Canonizer(canonization_order(MESSY)), Canonizer(canonization_order(one_rule_per_alias(MESSY, T)))
    for origin, path in itertools.product((T, T2, W, W2), ("/", "/w/index.php?title=A", "/wiki/B?utm_source=x")):
        want = after(T + path)
        assert after(origin + path) == want, origin + path
        assert before(origin + path) in (want, before(origin + path))  # the same pages as before, in one form


def test_without_a_declared_target_the_group_points_where_its_rules_do():
    out = one_rule_per_alias([host(W, T), host(T2, T)])
    assert [r.text for r in out] == [f'"^{T2}/" → "^{T}/"', f'"^{W}/" → "^{T}/"']  # one per alias, in order
    reversed_ = one_rule_per_alias([host(T, W)], T)  # the site declares the bare host: the rule turns round
    assert [r.text for r in reversed_] == [f'"^{W}/" → "^{T}/"']


def test_rules_of_other_hosts_and_sets_without_host_rules_stay():
    other = SubstringRule.from_parts("http://x.test:1/a/", "http://x.test:2/a/", status="valid")
    lone = [other, ParamRule("sid", "remove", status="valid")]
    assert one_rule_per_alias(lone, T) == lone
    kept = one_rule_per_alias([host(W, T), other], T)
    assert other in kept  # its origins are not joined by any host rule


ORIGINS = st.sampled_from((T, T2, W, W2))


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(ORIGINS, ORIGINS).filter(lambda p: p[0] != p[1]), min_size=1, max_size=5),
       st.sampled_from(("/", "/a?b=1", "/w/x")))
def test_the_group_is_one_form_whatever_the_valid_host_rules(pairs, path):
    """Any valid host rules (any directions, chains, cycles) become rules under which the two
    origins of each of them give one canonical form, an origin's own URL (the target's where it
    is joined), and one rule per alias."""
    rules = [host(a, b) for a, b in pairs]
    new = one_rule_per_alias(rules, T)
    out = Canonizer(new)
    for a, b in pairs:
        assert out(a + path) == out(b + path)
        assert out(a + path).endswith(path) and (out(a + path) == T + path or T not in {o for p in pairs for o in p}
                                                 or not _joined(pairs, a, T))
    assert all(host_rule_hosts(r) for r in new)
    assert len(new) == len({r.alpha for r in new})  # one rule per alias origin


def _joined(pairs, a, b) -> bool:
    seen, todo = {a}, [a]
    while todo:
        x = todo.pop()
        for p, q in pairs:
            for y in ((q,) if p == x else (p,) if q == x else ()):
                if y not in seen:
                    seen.add(y)
                    todo.append(y)
    return b in seen


# --- query-to-path mappings through the substring rules -----------------------------------------

MAP = QueryPathRule("/w/index.php", "title", "/wiki/", status="valid")
SCRIPT = SubstringRule.from_parts(T + "/w/index.php?title=", T + "/w/?title=", anchor_start=True, status="valid")


def test_a_mapping_whose_scope_a_substring_rule_rewrites_is_also_stated_for_the_rewritten_scope():
    rules = canonization_order([host(W, T), SCRIPT, MAP])
    before = Canonizer(rules)
    assert before(T + "/w/index.php?title=A") == T + "/w/?title=A"  # the mapping never saw it
    out = through_substrings(rules, [T, W])
    moved = [r for r in out if isinstance(r, QueryPathRule) and r.scope == "/w/"]
    assert len(moved) == 1 and moved[0].evidence["moved_from"] == MAP.text and MAP in out
    after = Canonizer(canonization_order(out))
    for url in ("/w/index.php?title=A", "/w/?title=A", "/wiki/A"):
        assert after(T + url) == after(W + url) == T + "/wiki/A", url
    # the original still maps what the substring rule does not match
    assert after(T + "/w/index.php?action=history&title=A") == T + "/wiki/A?action=history"


def test_a_mapping_no_rule_rewrites_is_left_alone():
    rules = [host(W, T), MAP, ParamRule("utm_source", "remove", status="valid")]
    assert through_substrings(rules, [T, W]) == rules
    glued = SubstringRule("/w/index.php?title=", "/wiki/", status="valid")  # not a query of one item: no scope
    assert through_substrings([glued, MAP], [T]) == [glued, MAP]


def test_a_scoped_parameter_rule_is_also_stated_for_the_path_the_substring_rules_give_its_scope():
    from dustbuster.core.model.scopedrules import QueryRule

    html = SubstringRule(".html", "", status="valid")  # MultiViews: /search.html is /search
    q = ParamRule("q", "remove", scope="/search.html", status="valid")
    out = through_substrings([q, html], [T])
    assert [r.text for r in out] == ["remove q=* under /search.html", "remove q=* under /search", html.text]
    canon = Canonizer(canonization_order(out))
    assert canon(T + "/search?q=x") == canon(T + "/search.html?q=x") == T + "/search"
    assert canon(T + "/other?q=x") == T + "/other?q=x"  # nowhere else
    # a rewrite that does not carry what lies below the scope carries no rule
    only = SubstringRule.from_parts("/search.html", "/search", anchor_end=True, status="valid")
    assert through_substrings([q, only], [T]) == [q, only]
    # nor one that would make it every URL's (the front page's scope is the whole site's)
    index = SubstringRule("/index.html", "/", status="valid")
    front = QueryRule("/index.html", "drop", status="valid")
    assert through_substrings([front, index], [T]) == [front, index]


def test_a_carried_rule_stays_where_no_test_url_spells_its_scope_yet():
    from dustbuster.core.canon.rulecheck import check_static

    html = SubstringRule(".html", "", status="valid")
    q = ParamRule("q", "remove", scope="/search.html", status="valid")
    rules = canonization_order(through_substrings([q, html], [T]))
    urls = [T + "/search.html?q=a", T + "/a.html"]  # the log spells the script with its suffix only
    kept, dropped = check_static(rules, urls)
    assert [r.text for r in kept] == [r.text for r in rules] and not dropped
    # a rule that is not carried and changes no test URL is still dropped as subsumed
    idle = ParamRule("sid", "remove", status="valid")
    kept, dropped = check_static(canonization_order([*rules, idle]), urls)
    assert [r.text for r, _ in dropped] == [idle.text]
