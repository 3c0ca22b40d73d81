"""Token-class rules generalised from families of likely pairs (core/mining/generalize.py)."""

from __future__ import annotations

import random

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from dustbuster.core.canon.canonize import canonize
from dustbuster.core.model.pair import Pair
from dustbuster.core.mining.generalize import generalize_pairs
from dustbuster.core.params import DEFAULT_MA, DustParams
from dustbuster.core.urls.tokens import END, START

P = DustParams()


def pairs(*rows, support=5):
    """Pairs from (α, β) rows written with ^ and $ for the sentinels."""
    conv = lambda s: s.replace("^", START).replace("$", END)  # noqa: E731
    return [Pair(conv(a), conv(b), support, support) for a, b in rows]


def texts(rules):
    return [r.text for r in rules]


def test_literal_family_becomes_one_rule():
    rules = generalize_pairs(pairs(("=50&", "=20&"), ("=100&", "=20&"), ("=30&", "=20&")), P)
    assert texts(rules) == ['"={digits}&" → "=20&"']
    r = rules[0]
    assert (r.support, r.members, r.placeholder) == (15, 3, "digits")
    assert r.evidence["examples"] == ['"=100&" → "=20&"', '"=30&" → "=20&"', '"=50&" → "=20&"']
    assert r.apply_internal(START + "/l?n=7&x=1" + END) == START + "/l?n=20&x=1" + END


def test_copy_family_copies_the_value():
    rules = generalize_pairs(pairs(("/a_1.html", "/b?id=1&"), ("/a_2.html", "/b?id=2&"), ("/a_37.html", "/b?id=37&")), P)
    assert texts(rules) == ['"/a_{digits}.html" → "/b?id={digits}&"']
    assert rules[0].apply_internal("/x/a_99.html") == "/x/b?id=99&"


def test_copy_family_with_one_side_shared_is_the_literal_rule_refined():
    # "/a_1/" → "/b_1/": "1/" is the same text after the token in α and β, so the rule only refines
    # the literal "/a_" → "/b_" (WWW 2007 §5.2); no pattern rule says it again
    rules = generalize_pairs(pairs(("/a_1/", "/b_1/"), ("/a_2/", "/b_2/"), ("/a_37/", "/b_37/")), P)
    assert texts(rules) == []


@pytest.mark.parametrize("values, cls", [
    (("5", "17", "300"), "digits"),
    (("3f", "a1", "9c0"), "hex"),
    (("3F", "A1", "9C0"), "hex"),
    (("3f", "17", "zz"), "word"),   # digits and hex: no narrower class covers both
    (("3F", "a1", "10"), "word"),   # hex of two cases
    (("ab", "cd", "ef"), "word"),   # letters only are not hex
])
def test_narrowest_class_covering_every_member(values, cls):
    rules = generalize_pairs(pairs(*((f"?id={v}&", "?") for v in values)), P)
    assert texts(rules) == [f'"?id={{{cls}}}&" → "?"']


@pytest.mark.parametrize("rows", [
    [(f"^http://h{i}/p", "^http://h/p") for i in (1, 2, 3)],             # the host
    [(f"^http://h{i}.example/", "^http://example/") for i in (1, 2, 3)],
    [(f"^http{i}://h/", "^http://h/") for i in (1, 2, 3)],               # the scheme
    [(f"://h{i}/x", "://h/x") for i in (1, 2, 3)],                       # unanchored authority
    [(f"^h{i}.ex/x", "^ex/x") for i in (1, 2, 3)],                       # anchored, before any path
    [(f"=s{i}:/", "=s:/") for i in (1, 2, 3)],                          # cut inside "://"
    [(f"^http://h/{i}/a_{i}/", "^http://h{i}/a_{i}/") for i in (1, 2, 3)],  # copy target in the host
])
def test_host_and_scheme_tokens_are_never_generalised(rows):
    assert generalize_pairs(pairs(*rows), P) == []


def test_path_token_after_the_host_is_generalised():
    rows = [(f"^http://h/p/{i}/x", "^http://h/x") for i in (1, 2, 3)]
    assert texts(generalize_pairs(pairs(*rows), P)) == ['"^http://h/p/{digits}/x" → "^http://h/x"']


@pytest.mark.parametrize("rows, expect", [
    ([("/50/", "/"), ("/60/", "/"), ("/70/", "/")], ['"/{digits}/" → "/"']),  # two separators: enough
    ([("p=5", "p"), ("p=6", "p"), ("p=7", "p")], ['"p={digits}" → "p"']),      # a literal word: enough
    ([("/50", "/"), ("/60", "/"), ("/70", "/")], []),                          # one separator: too bare
    ([("^50$", "^1$"), ("^60$", "^1$"), ("^70$", "^1$")], []),                 # anchors do not count
])
def test_alpha_keeps_some_literal_context(rows, expect):
    assert texts(generalize_pairs(pairs(*rows), P)) == expect


def test_fewer_than_min_members_gives_nothing():
    rows = pairs(("=50&", "=20&"), ("=100&", "=20&"))
    assert generalize_pairs(rows, P) == []
    assert texts(generalize_pairs(rows, P, min_members=2)) == ['"={digits}&" → "=20&"']
    assert generalize_pairs(rows + rows, P) == []  # repeated pairs are one member


def test_self_feeding_family_is_dropped():
    # β "a==1==" holds "1==", another instance of "{digits}==": the URL would grow forever
    rows = pairs(("5==", "a==1=="), ("6==", "a==1=="), ("7==", "a==1=="))
    assert generalize_pairs(rows, P) == []


def test_literal_beta_that_is_an_instance_is_fine():
    rows = pairs(("=50&", "=2&"), ("=100&", "=2&"), ("=30&", "=2&"))
    (rule,) = generalize_pairs(rows, P)
    assert canonize("/x?a=2&b=9&c=1", [rule]).canonical == "/x?a=2&b=2&c=1"


def test_overlapping_families_keep_most_members():
    big = [(f"={v}&", "=20&") for v in (50, 60, 70, 80)]
    other = [(f"={v}&", "=30&") for v in (51, 61, 71)]  # same α: the two rules would cycle
    rules = generalize_pairs(pairs(*big, *other), P)
    assert texts(rules) == ['"={digits}&" → "=20&"']
    assert rules[0].members == 4


def test_shared_members_go_to_one_family_only():
    # "/a_1/" → "/b_1/" ... join the copy family; "/a_1/" → "/c/" ... only their literal one
    rows = pairs(*[(f"/a_{i}/", f"/b_{i}/") for i in (1, 2, 3)], *[(f"/a_{i}/", "/c/") for i in (1, 2, 3, 4)])
    rules = generalize_pairs(rows, P)
    assert texts(rules) == ['"/a_{digits}/" → "/c/"']  # four members beat three; the copy family shares them


def test_sorted_by_support_then_text():
    rows = (pairs(*[(f"?p={i}&", "?") for i in (1, 2, 3)], support=2)
            + pairs(*[(f"/s/{i}/", "/s/") for i in (1, 2, 3)], support=9))
    assert texts(generalize_pairs(rows, P)) == ['"/s/{digits}/" → "/s/"', '"?p={digits}&" → "?"']


def test_deterministic_whatever_the_input_order():
    rows = pairs(*[(f"={v}&", "=20&") for v in (50, 60, 70)], *[(f"/a_{i}.html", f"/b?id={i}&") for i in (1, 2, 3)],
                 *[(f"?id={v}&", "?") for v in ("3f", "a1", "9c0")])
    want = [r.to_json() for r in generalize_pairs(rows, P)]
    assert len(want) == 3
    for seed in range(5):
        shuffled = list(rows)
        random.Random(seed).shuffle(shuffled)
        assert [r.to_json() for r in generalize_pairs(shuffled, P)] == want


# --- property: the mined rules converge ------------------------------------------------------

VALUES = st.sampled_from(["1", "20", "300", "3f", "a1", "ff", "x", "Zz9", "0"])
TEMPLATES = [("=", "&", "=20&"), ("/a_", "/", None), ("?id=", "&", "?"), ("/p/", "/", "/p/"),
             ("=", "&", "=1&=1&"), ("x", "/", "/")]
PIECES = st.text(alphabet="ab12=&/_?x", min_size=0, max_size=6)


@st.composite
def families(draw):
    out = []
    for left, right, beta in draw(st.lists(st.sampled_from(TEMPLATES), min_size=1, max_size=4)):
        for v in draw(st.lists(VALUES, min_size=2, max_size=5, unique=True)):
            b = f"/b_{v}/" if beta is None else beta
            if left + v + right != b:
                out.append(Pair(left + v + right, b, draw(st.integers(1, 9)), 1))
    noise = draw(st.lists(st.tuples(PIECES, PIECES), max_size=6))
    out += [Pair(a, b, 1, 1) for a, b in noise if a != b]
    return out


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(families(), st.data())
def test_rules_converge_on_urls_built_from_the_inputs(pairs_, data):
    rules = generalize_pairs(pairs_, P, min_members=2)
    parts = [s.replace(START, "").replace(END, "") for p in pairs_ for s in (p.alpha, p.beta)]
    picked = data.draw(st.lists(st.sampled_from(parts) | PIECES, min_size=1, max_size=8))
    url = "http://h/" + "".join(picked)
    # each iteration rewrites one occurrence per rule (Figure 5.5): a URL with more occurrences than
    # MA needs more iterations without any cycle, so the budget grows with the URL; a cycle (a rule
    # undoing another, or one that grows the URL) never converges within any budget
    assert canonize(url, rules, ma=max(DEFAULT_MA, 2 * len(url))).converged


def test_more_occurrences_than_ma_is_a_budget_not_a_cycle():
    """The case Hypothesis found: ten ``=1&`` under ``={digits}&`` → ``=20&``.  One occurrence
    changes per iteration (Figure 5.5), so MA = 10 iterations end one short of the fixed point;
    one more budget reaches it, and the form is the one every spelling gets."""
    rows = pairs(("=1&", "=20&"), ("=300&", "=20&"))
    rules = generalize_pairs(rows, P, min_members=2)
    url = "http://h/" + "=1&" * 10
    assert not canonize(url, rules).converged  # the paper's MA stops it
    done = canonize(url, rules, ma=DEFAULT_MA + 1)
    assert done.converged and done.canonical == "http://h/" + "=20&" * 10


def test_family_that_would_cycle_with_a_taken_rule_is_dropped():
    # hand-made (phase 1 orients pairs one way): the second family undoes the first
    rows = pairs(*[(f"/a_{i}.html", f"/b?id={i}&") for i in (1, 2, 3, 4)],
                 *[(f"/b?id={i}&", f"/a_{i}.html") for i in (5, 6, 7)])
    assert texts(generalize_pairs(rows, P)) == ['"/a_{digits}.html" → "/b?id={digits}&"']
