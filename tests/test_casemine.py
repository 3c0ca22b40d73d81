"""Mining case rules from URLs that differ only in the case of their path (core/mining/casemine.py)."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dustbuster.core.canon.canonize import canonize
from dustbuster.core.mining.casemine import case_groups, mine_case_rules
from dustbuster.core.params import DustParams
from dustbuster.core.model.scopedrules import CaseRule
from dustbuster.core.urls.urllist import URLList

P = DustParams()


def urllist(*rows):
    """URLs with sizes: (url, size) rows."""
    ul = URLList()
    for url, size in rows:
        ul.add(url, 200, size)
    return ul


def case_pairs(prefix, names, similar=True, base=1000):
    """For each name, its spelling and its lower-cased spelling under ``prefix``; the two have
    the same size when ``similar``, sizes far apart (twice as large) otherwise."""
    rows = []
    for k, name in enumerate(names):
        size = base + 100 * k
        rows += [(f"http://w{prefix}/{name}", size), (f"http://w{prefix}/{name.lower()}", size if similar else 2 * size)]
    return rows


WIKI = ["Main_Page", "Help", "FAQ"]
API = ["Users", "Items", "Orders"]


def scopes(rules):
    return [(r.scope, r.support, r.disqualified) for r in rules]


@pytest.mark.parametrize("rows, params, expect", [
    # only /wiki gives evidence: the whole site holds, the rule is stated where it was seen
    (case_pairs("/wiki", WIKI), P, [("/wiki", 3, 0)]),
    # /api spellings are different pages: the site-wide scope fails its ratio, /wiki holds
    (case_pairs("/wiki", WIKI) + case_pairs("/api", API, similar=False, base=5000), P, [("/wiki", 3, 0)]),
    # 3 similar + 1 not: ratio 0.75 holds; 3 + 2: 0.6 does not (then /wiki still holds)
    (case_pairs("/wiki", WIKI) + case_pairs("/api", ["X"], similar=False, base=5000), P, [("/wiki", 3, 0)]),
    (case_pairs("/wiki", WIKI) + case_pairs("/api", ["X", "Y"], similar=False, base=5000), P, [("/wiki", 3, 0)]),
    # not similar at all: nothing
    (case_pairs("/wiki", WIKI, similar=False), P, []),
    # too little support
    (case_pairs("/wiki", WIKI[:2]), P, []),
    (case_pairs("/wiki", WIKI[:2]), P.with_(ms=2), [("/wiki", 2, 0)]),
    # the spellings differ inside the first segment: only the site-wide scope has a shared literal
    ([(f"http://w/{n}/x", 900 + k) for k, n in enumerate(["Wiki", "wiki", "WIKI"])], P, [("", 3, 0)]),
])
def test_scopes(rows, params, expect):
    assert scopes(mine_case_rules(urllist(*rows), params)) == expect


def test_scope_is_the_shared_literal():
    # the pairs differ below /Docs/Guide: "", /Docs and /Docs/Guide all count them; two
    # different pages under /Docs/Api and two under /other leave /Docs (3 of 5) and "" (3 of 7)
    # below the ratio, so the narrowest scope is the widest that holds
    rows = case_pairs("/Docs/Guide", ["Intro", "Setup", "Use"])
    rows += case_pairs("/other", ["A", "B"], similar=False, base=7000)
    rows += case_pairs("/Docs/Api", ["A", "B"], similar=False, base=9000)
    assert scopes(mine_case_rules(urllist(*rows), P)) == [("/Docs/Guide", 3, 0)]


@pytest.mark.parametrize("rows", [
    [(f"http://w/wiki/{n}?x=1", 1000) for n in WIKI] + [(f"http://w/wiki/{n.lower()}?x=2", 1000) for n in WIKI],
    [(f"http://w/wiki/{n}", 1000) for n in WIKI] + [(f"http://W/wiki/{n.lower()}", 1000) for n in WIKI],
    [(f"/wiki/{n}", 1000) for n in WIKI] + [(f"/wiki/{n.lower()}", 1000) for n in WIKI],  # no host
    [(f"http://w/wiki/{n}", 1000) for n in WIKI] + [(f"http://w/wiki/{n}x", 1000) for n in WIKI],
])
def test_pairs_that_differ_in_more_than_path_case_are_ignored(rows):
    ul = urllist(*rows)
    assert case_groups(ul) == [] and mine_case_rules(ul, P) == []


def test_evidence_and_groups_of_three_spellings():
    rows = [(u, 1000) for u in ("http://w/wiki/FAQ", "http://w/wiki/Faq", "http://w/wiki/faq")]
    ul = urllist(*rows)
    assert case_groups(ul) == [["http://w/wiki/FAQ", "http://w/wiki/Faq", "http://w/wiki/faq"]]
    (rule,) = mine_case_rules(ul, P)
    assert rule == CaseRule("/wiki", 3, 0)
    assert rule.evidence == {"pairs": 3, "examples": ["http://w/wiki/FAQ", "http://w/wiki/Faq"]}
    assert canonize("http://w/wiki/FAQ", [rule]).canonical == "http://w/wiki/faq"


def test_deterministic_whatever_the_insertion_order():
    rows = case_pairs("/wiki", WIKI) + case_pairs("/api", API, similar=False, base=5000)
    want = [r.to_json() for r in mine_case_rules(urllist(*rows), P)]
    assert [r.to_json() for r in mine_case_rules(urllist(*reversed(rows)), P)] == want


# --- property: the mined rules converge ------------------------------------------------------

SEGMENTS = st.text(alphabet="aAbBzZ1_", min_size=1, max_size=5)


@settings(max_examples=100, deadline=None)
@given(st.lists(st.tuples(st.lists(SEGMENTS, min_size=1, max_size=3), st.booleans()), min_size=1, max_size=8),
       st.data())
def test_rules_converge_on_urls_built_from_the_inputs(paths, data):
    rows = []
    for k, (segs, similar) in enumerate(paths):
        path = "/" + "/".join(segs)
        rows += [(f"http://w{path}", 100 * k), (f"http://w{path.swapcase()}", 100 * k + (0 if similar else 10_000))]
    rules = mine_case_rules(urllist(*rows), P.with_(ms=1))
    for url, _ in rows:
        segs = data.draw(st.lists(SEGMENTS, max_size=2))
        assert canonize(url + "".join("/" + s for s in segs), rules).converged
