"""Phase 2: Lemma 5.3 refinement and Figure 2 elimination."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dustbuster.core import DustParams, Pair, URLList, eliminate, mine, pair_refines, rule_refines
from dustbuster.core.mining.refine import elimination_order
from dustbuster.core.urls.tokens import END, START, tokenize

S_ = START


@pytest.mark.parametrize(
    "a2, b2, a1, b1, expect",
    [
        # §5.2: (".co.il/story?id=", ".co.il/story_") refines ("story?id=", "story_")
        (".co.il/story?id=", ".co.il/story_", "story?id=", "story_", True),
        ("story?id=", "story_", ".co.il/story?id=", ".co.il/story_", False),
        # thesis §6.2: http://www.cnn.com → http://cnn.com refines www.cnn → cnn and http://www → http://
        ("http://www.cnn.com", "http://cnn.com", "www.cnn", "cnn", True),
        ("http://www.cnn.com", "http://cnn.com", "http://www.", "http://", True),
        # the thesis writes "http://www" → "http://", which Lemma 5.3 does not allow: the dot stays
        ("http://www.cnn.com", "http://cnn.com", "http://www", "http://", False),
        ("www.cnn", "cnn", "http://www", "http://", False),
        ("http://www", "http://", "www.cnn", "cnn", False),
        # anchored refines unanchored, never the reverse
        (S_ + "http://www.", S_ + "http://", "www.", "", True),
        ("www.", "", S_ + "http://www.", S_ + "http://", False),
        ("/index.html" + END, END, "index.html", "", False),  # "/" + "" + "$" ≠ "$"
        ("/d/index.html" + END, "/d/" + END, "index.html" + END, END, True),
        # token alignment: "story" does not occur inside the token "mystory"
        ("/mystory_", "/my_", "story", "", False),
        # every occurrence is tried (the second one works)
        ("a/x/a", "a/x/b", "a", "b", True),
        # β' must keep its token boundaries: x/y → xy is not "/" → "" at token level
        ("x/y", "xy", "/", "", False),
        ("x/.y", "x.y", "/", "", True),
        # same pair
        ("ab", "cd", "ab", "cd", True),
    ],
)
def test_rule_refines_table(a2, b2, a1, b1, expect):
    assert rule_refines(a2, b2, a1, b1) is expect


def test_pair_refines_both_directions():
    assert pair_refines((".co.il/story_", ".co.il/story?id="), ("story?id=", "story_"))
    assert pair_refines((".co.il/story?id=", ".co.il/story_"), ("story_", "story?id="))


# -------- Definition 5.2 by enumeration: support(φ) ⊆ support(ψ) over a universe of contexts

def well_formed(p: str, mid: str, s: str) -> bool:
    return tokenize(p + mid + s) == tokenize(p) + tokenize(mid) + tokenize(s)


def is_instance(u1: str, u2: str, a: str, b: str) -> bool:
    """Definition 3.1 at token level, by brute force over all token-aligned splits of u1."""
    t1 = tokenize(u1)
    for i in range(len(t1) + 1):
        for j in range(i, len(t1) + 1):
            p, mid, s = "".join(t1[:i]), "".join(t1[i:j]), "".join(t1[j:])
            if mid == a and u2 == p + b + s and well_formed(p, b, s):
                return True
    return False


TOK = st.sampled_from(["a", "b", "ab", "1", "/", ".", "?", "=", "_"])
STR = st.lists(TOK, max_size=3).map("".join)
CONTEXTS = [("", ""), ("x/", ""), ("", "/y"), ("q.", ".z"), ("a", ""), ("", "b")]


@settings(max_examples=400, deadline=None)
@given(STR, STR, STR, STR, st.booleans(), st.booleans(), st.booleans())
def test_refines_equals_definition_by_enumeration(a1, b1, g, d, build, anchor_s, anchor_e):
    if build:  # often construct a true refinement candidate γαδ / γβδ
        a2, b2 = g + a1 + d, g + b1 + d
    else:
        a2, b2 = g + a1, d + b1
    pre, post = (START if anchor_s else ""), (END if anchor_e else "")
    a2, b2 = pre + a2 + post, pre + b2 + post
    if a1 == b1 or a2 == b2:
        return
    ctxs = [(p if not anchor_s else "", s if not anchor_e else "") for p, s in CONTEXTS]
    by_definition = all(
        is_instance(p + a2 + s, p + b2 + s, a1, b1)
        for p, s in ctxs
        if well_formed(p, a2, s) and well_formed(p, b2, s)
    )
    assert rule_refines(a2, b2, a1, b1) == by_definition


# -------- Figure 2

def P(a, b, sup, hi=None):
    return Pair(a, b, sup, hi if hi is not None else sup)


def test_eliminate_keeps_refinement_with_equal_support():
    """Same support: the refinement (full context) is kept, the broader rule is dropped (§5.2)."""
    pairs = elimination_order([P("story?id=", "story_", 10), P(".co.il/story?id=", ".co.il/story_", 10)])
    kept, why = eliminate(pairs)
    assert [(p.alpha, p.beta) for p in kept] == [(".co.il/story?id=", ".co.il/story_")]
    assert why[0][0].alpha == "story?id="


def test_eliminate_broader_rule_with_larger_support_survives():
    """The broader rule's support exceeds the window (max(MRD·s, MAD) = 1): both stay."""
    pairs = elimination_order([P("story?id=", "story_", 20), P(".co.il/story?id=", ".co.il/story_", 10)])
    kept, _ = eliminate(pairs)
    assert len(kept) == 2


def test_eliminate_window_mad_and_mrd():
    # s = 40: slack = max(0.05·40, 1) = 2 → a refinement with support 38 is in the window, 37 is not
    broad = P("b", "a", 40)
    assert len(eliminate(elimination_order([broad, P("/b", "/a", 38)]))[0]) == 1
    assert len(eliminate(elimination_order([broad, P("/b", "/a", 37)]))[0]) == 2
    # s = 10: slack = max(0.5, MAD=1) = 1
    assert len(eliminate(elimination_order([P("b", "a", 10), P("/b", "/a", 9)]))[0]) == 1
    assert len(eliminate(elimination_order([P("b", "a", 10), P("/b", "/a", 8)]))[0]) == 2
    assert len(eliminate(elimination_order([P("b", "a", 10), P("/b", "/a", 8)]), DustParams(mad=2))[0]) == 1


def test_eliminate_window_size_mw():
    # the refinement sits 3 places below the broad rule, behind two unrelated pairs
    rows = [P("b", "a", 10), P("x1", "y", 10), P("x2", "y", 10), P("/b", "/a", 10)]
    assert len(eliminate(rows, DustParams(mw=3))[0]) == 3
    assert len(eliminate(rows, DustParams(mw=2))[0]) == 4


def test_eliminate_uses_t_high_sizes():
    """§5.2: elimination compares T_high supports; T_low supports may differ."""
    rows = elimination_order([P("b", "a", 3, 10), P("/b", "/a", 9, 10)])
    assert [(p.alpha, p.beta) for p in eliminate(rows)[0]] == [("/b", "/a")]


def test_mine_on_forum_keeps_the_widest_context():
    ul = URLList()
    for i in range(8):
        ul.add(f"http://www.forum.co.il/story_{i}", 200, 1000 + 50 * i)
        ul.add(f"http://www.forum.co.il/story?id={i}", 200, 1000 + 50 * i)
    r = mine(ul)
    assert [(p.alpha, p.beta) for p in r.kept] == [
        (START + "http://www.forum.co.il/story?id=", START + "http://www.forum.co.il/story_")
    ]
    assert len(r.detected) > 10  # "numerous pairs of substrings of these" (§5.2)
