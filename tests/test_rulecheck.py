"""Fetch-free checks of rules and rule sets (dustbuster.core.canon.rulecheck) and the direction rule of Figure 4
(the reverse direction only after a refutation)."""

from __future__ import annotations

import asyncio
from collections import Counter

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dustbuster.core.validation.round import Round
from dustbuster.core import ParamRule, SubstringRule
from dustbuster.core.canon.canonize import Canonizer, canonize
from dustbuster.core.model.pair import Pair
from dustbuster.core.canon.rulecheck import (check_static, drop_inverses, drop_non_converging, drop_unused, non_converging,
                            self_feeding, unobserved_output, unsafe_candidate)
from dustbuster.core.urls.tokens import END
from dustbuster.core.validation.validate import validate
from tests.test_canonizer import rule_list, url
from tests.test_validate import TEST_URLS, forum_site, make_fetch

R = SubstringRule.from_parts
H = "http://f.test"


@pytest.mark.parametrize("rule, feeds", [
    (R("", "?utm_source=feed0", anchor_end=True), True),      # "$" → "?utm_source=feed0$": the demo's garbage
    (R("", "x"), True),
    (R("", "x", True, True), True),                            # "^$" → "^x$"
    (R("/", "//"), True),                                      # α occurs in β
    (R("/a", "/a/b"), True),
    (R("/story?id=", "/story_"), False),
    (R("/index.html", "/", anchor_end=True), False),
    (R("http://www.", "http://", True), False),
    (R("/", ""), False),                                       # shrinks: cannot grow (admission catches non-URLs)
    (ParamRule("sid", "remove"), False),
    (ParamRule("sort", "replace", "asc"), False),
])
def test_self_feeding(rule, feeds):
    assert (self_feeding(rule) is not None) == feeds


def test_unobserved_output_needs_half_of_the_outputs_observed():
    urls = [f"{H}/story_{i}" for i in range(20)] + [f"{H}/story_{i}?utm_source=feed0" for i in range(3)]
    grow = R("", "?utm_source=feed0", anchor_end=True)
    assert "unobserved_output" in unobserved_output(grow, urls)       # 3 of 20 outputs were observed
    alias = R("/story_", "/story?id=")
    urls2 = [f"{H}/story_{i}" for i in range(10)] + [f"{H}/story?id={i}" for i in range(6)]
    assert unobserved_output(alias, urls2) is None                     # 6 of 10 observed
    assert "40%" in unobserved_output(alias, urls2[:14])               # 4 of 10
    assert unobserved_output(R("/nothing", "/x"), urls) is None        # applies to nothing


def test_inverse_pairs_keep_the_first():
    a, b = R("/story_", "/story?id="), R("/story?id=", "/story_")
    kept, dropped = drop_inverses([b, ParamRule("sid", "remove"), a])
    assert kept == [b, ParamRule("sid", "remove")] and dropped[0][0] == a and "undoes" in dropped[0][1]


def test_non_converging_cycle_drops_the_growing_rule():
    rules = [R("/a_", "/b_"), R("/b_", "/a_/x_")]        # a → b → a/x → b/x → ...: never a fixed point
    urls = [f"{H}/a_1", f"{H}/b_2", f"{H}/c"]
    assert non_converging(rules, urls) == urls[:2]
    kept, dropped = drop_non_converging(rules, urls)
    assert kept == rules[:1] and dropped[0][0] == rules[1] and "non_converging" in dropped[0][1]
    assert non_converging(kept, urls) == []


def test_subsumed_rules_are_dropped():
    rules = [ParamRule("sid", "remove"), ParamRule("sid", "replace", "02ec4e"), R("/story?id=", "/story_"),
             R("/story?id=5", "/story_5"), R("/lect", "/lecture")]
    urls = [f"{H}/story?id=5&sid=1", f"{H}/story?id=6", f"{H}/x?sid=2"]
    kept, dropped = drop_unused(rules, urls)
    assert kept == rules[:1] + rules[2:3]
    why = {r.text: w for r, w in dropped}
    assert why["sid=* → sid=02ec4e"].startswith("subsumed: remove sid=*")
    assert why['"/story?id=5" → "/story_5"'].startswith("subsumed: changes no test URL")   # the general rule ran first
    assert why['"/lect" → "/lecture"'].startswith("subsumed")                               # changes no test URL


@pytest.mark.parametrize("rule, unsafe", [
    (R("/", ""), "not a URL"),
    (R("", "?x=1", anchor_end=True), "self_feeding"),
    (R("/a/", "/b/"), "rewrites"),                          # every URL into forms never observed
    (R("/a/1", "/a/2"), None),
])
def test_unsafe_candidates(rule, unsafe):
    urls = [f"{H}/a/{i}" for i in range(40)]
    got = unsafe_candidate(rule, urls)
    assert (got is None) if unsafe is None else (unsafe in got), got


@settings(max_examples=300, deadline=None)
@given(rule_list, st.lists(url, max_size=8))
def test_after_the_static_checks_every_test_url_converges_and_canon_is_idempotent(rules, urls):
    kept, dropped = check_static(rules, urls)
    assert len(kept) + len(dropped) == len(rules)
    assert all(self_feeding(r) is None for r in kept)
    canon = Canonizer(kept)
    for u in urls:
        c = canon.canonize(u)
        assert c.converged and c.iterations < 10
        assert canon(c.canonical) == c.canonical                                     # canon(canon(u)) = canon(u)
        assert canonize(c.canonical, kept).canonical == c.canonical


@settings(max_examples=300, deadline=None)
@given(rule_list, url)
def test_converged_means_fixed_point(rules, u):
    c = canonize(u, rules)
    if c.converged:
        assert canonize(c.canonical, rules).canonical == c.canonical


# ------------------------------------------------------------------ Figure 4's direction rule

def test_reverse_direction_only_after_a_refutation():
    """An undecided shrinking rule (too few URLs end in "&utm_source=feed0") must not lead to its
    reverse "$" → "&utm_source=feed0$", which applies to every URL (the demo's garbage)."""
    tests = [f"http://f.co.il/story?id={i}&utm_source=feed0" for i in range(3)] + list(TEST_URLS)
    pair = Pair("&utm_source=feed0" + END, END, 5, 5)
    calls = Counter()
    res = asyncio.run(validate(Round.of(tests, make_fetch(forum_site, calls)), [pair], []))
    assert [v.rule.text for v in res.verdicts] == ['"&utm_source=feed0$" → "$"']
    assert res.verdicts[0].valid is None and res.verdicts[0].reason == "too_few_samples"
    assert res.valid == []


def test_reverse_direction_after_a_refutation_needs_observed_outputs():
    """/new/X ≡ /old/X only for X < 10 here: "/new/" → "/old/" is refuted, so the reverse is
    tried, but the log has no /new/0../new/9: its outputs are inventions, invalid before a fetch."""
    res = asyncio.run(validate(Round.of(list(TEST_URLS), make_fetch(forum_site, Counter())), [Pair("/new/", "/old/", 5, 5)], []))
    (shrink, grow) = res.verdicts
    assert shrink.valid is False and shrink.fetches > 0
    assert grow.valid is False and grow.fetches == 0 and grow.reason.startswith("unobserved_output"), grow.reason
    assert res.valid == []


def test_a_self_feeding_reverse_is_invalid_without_a_fetch():
    res = asyncio.run(validate(Round.of(list(TEST_URLS), make_fetch(forum_site, Counter())), [Pair("/old/", "/", 5, 5)], []))
    (shrink, grow) = res.verdicts
    assert shrink.valid is False                                      # /old/1 → /1: no such page
    assert grow.rule.text == '"/" → "/old/"' and grow.valid is False and grow.fetches == 0
    assert grow.reason.startswith("self_feeding")


# ------------------------------------------------------------------ real logs

@pytest.mark.parametrize("name", ["monitorware", "semicomplete", "secrepo", "nasa", "netarchive", "cdx"])
def test_real_log_candidates_as_a_set_pass_checks_after_the_static_checks(name):
    """Worst case: every mined candidate of a real log taken as valid.  After the fetch-free checks
    the set converges and is idempotent on every URL of the log, never breaks a URL, and keeps at
    least the redundancy of the whole candidate list where that list broke no URL."""
    from dustbuster.core.canon.canonize import redundancy
    from dustbuster.core.mining.mine import mine
    from dustbuster.core.canon.rulecheck import breaks_urls
    from dustbuster.logs.reader import read_urllist
    from tests.realruns import LOGS, RUNS

    files, site = RUNS[name]
    ul, _ = read_urllist([LOGS / f for f in files], site=site)
    r = mine(ul)
    rules = r.param_rules() + r.substring_rules()
    urls = list(ul)
    kept, dropped = check_static(rules, urls)
    assert len(kept) + len(dropped) == len(rules)
    # kept unless every candidate strips TLS (the CDX sample's are all "^https://" → "^http://"
    # variants: consumers refuse such a set, so the set check drops them before publishing)
    assert kept or all(why.startswith("downgrade") for _, why in dropped), dropped
    canon = Canonizer(kept)
    for u in urls:
        c = canon.canonize(u)
        assert c.converged and canon(c.canonical) == c.canonical, (u, c)
        assert "://" not in u or "://" in c.canonical
    assert all(breaks_urls(x, urls) is None for x in kept)
    # the whole list less what strips TLS (never published: consumers refuse it) broke no URL:
    # nothing of its reach is lost
    allowed = [r for r in rules if not any(r is d and why.startswith("downgrade") for d, why in dropped)]
    everything = Canonizer(allowed)
    if all("://" in everything(u) for u in urls):
        assert redundancy(urls, kept).discovered_redundancy >= redundancy(urls, allowed).discovered_redundancy


# ------------------------------------------------------------------ the rule types beyond the papers

from dustbuster.core.model.pattern import PatternRule  # noqa: E402
from dustbuster.core.model.scopedrules import CaseRule, QueryRule  # noqa: E402
from tests.test_dustcanon import mixed_rules, url2  # noqa: E402

P = PatternRule


@pytest.mark.parametrize("rule, feeds", [
    (P("={digits}&", "=20&"), False),            # β matches α, but a match reading as β is stepped over
    (P("/{digits}/print", "/{digits}"), False),
    (P("/p{digits}/", "/{digits}/"), False),
    (P("/{digits}/", "/{digits}/x/"), True),     # /7/ → /7/x/: "/7/" matches again and rewrites again
    (P("/{word}", "/{word}/a"), True),
    (P("/{digits}", "/1/2"), True),              # literal β holding a match that is not β itself
    (P("={hex}&", "=0a&=3F&"), True),
    (P("\x02{word}://", "\x02https://"), False),  # https:// reads as β: stepped over
    (QueryRule("/a", "drop"), False), (QueryRule("", "sort"), False), (CaseRule("/w"), False),
    (ParamRule("sid", "remove", scope="/a"), False),
])
def test_self_feeding_new_types(rule, feeds):
    assert (self_feeding(rule) is not None) == feeds
    u = "http://h.com/7/a=0a&?k=1"
    grows = not canonize(u + "/1/2/", [rule]).converged
    assert not grows or feeds                    # a rule said not to feed itself converges here


@settings(max_examples=200, deadline=None)
@given(st.lists(url2, max_size=5))
def test_a_pattern_rule_that_does_not_feed_itself_reaches_a_fixed_point(urls):
    """One application per match at most (the rule steps over matches reading as β)."""
    for rule in (P("={digits}&", "=20&"), P("/{digits}/print", "/{digits}"), P("/{word}/", "/x/")):
        assert self_feeding(rule) is None
        for u in urls:
            c = canonize(u, [rule], ma=20)
            assert c.converged and canonize(c.canonical, [rule], ma=1).canonical == c.canonical


@pytest.mark.parametrize("replace_scope, remove_scope, subsumed", [
    ("", "", True), ("/wiki", "", True), ("/wiki", "/wiki", True), ("/wiki/a", "/wiki", True),
    ("", "/wiki", False), ("/wiki", "/wiki/a", False), ("/wikipedia", "/wiki", False), ("/w", "/wiki", False),
])
def test_a_replace_rule_is_subsumed_only_by_a_removal_whose_scope_covers_it(replace_scope, remove_scope, subsumed):
    rem, rep = ParamRule("sid", "remove", scope=remove_scope), ParamRule("sid", "replace", "1", scope=replace_scope)
    urls = [f"{H}{replace_scope or '/x'}/p?sid=5", f"{H}{remove_scope or '/y'}/q?sid=6"]
    kept, dropped = drop_unused([rem, rep], urls)
    assert (rep not in kept) == subsumed, dropped
    if subsumed:
        assert dropped[0] == (rep, f"subsumed: {rem.text} is in the set")


def test_pattern_inverses_keep_the_first():
    a, b = P("/{digits}/print", "/{digits}/p"), P("/{digits}/p", "/{digits}/print")
    kept, dropped = drop_inverses([a, QueryRule("/s", "drop"), b])
    assert kept == [a, QueryRule("/s", "drop")] and dropped[0][0] == b


@settings(max_examples=200, deadline=None)
@given(mixed_rules, st.lists(url2, max_size=6))
def test_static_checks_and_unsafe_candidate_take_every_type(rules, urls):
    for r in rules:
        unsafe_candidate(r, urls)                # never raises
    kept, dropped = check_static(rules, urls)
    assert len(kept) + len(dropped) == len(rules)
    canon = Canonizer(kept)
    for u in urls:
        c = canon.canonize(u)
        assert c.converged and canon(c.canonical) == c.canonical
