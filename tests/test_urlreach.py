"""The fetch-free candidate checks in one pass over the URLs (core/canon/urlreach.py, issue 25) give what
the per-candidate checks gave (tests/oracle.py keeps them): the same UNSAFE flags and reasons with
the same example URLs, the same unobserved-output and URL-breaking reasons, the same covered
candidates and the same applicable URLs of Figure 3 — on the real logs and on generated rules."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dustbuster.core.validation.round import Round
from dustbuster.core.canon.coverage import Coverage
from dustbuster.core.mining.mine import mine, unsafe_flags
from dustbuster.core.canon.rulecheck import breaks_urls, unobserved_output, unsafe_candidate, unsafe_candidates
from dustbuster.core.model.rules import SubstringRule
from dustbuster.core.urls.tokens import END, START
from dustbuster.core.canon.urlreach import URLReach
from dustbuster.core.canon.urlreach import round_reach
from dustbuster.logs.reader import read_urllist
from tests.conftest import DATA
from tests.oracle import (breaks_urls_plain, changed_plain, covered_by_plain, unobserved_output_plain,
                          unsafe_candidate_plain, unsafe_flags_plain)
from tests.test_canonizer import FRAG, rule_list, url

LOGS = DATA / "logs"
REAL = {
    "semicomplete": (["semicomplete-apache/apache_logs"], "semicomplete.com"),
    "secrepo": (["secrepo-selflogs/access.log.2018-12-15", "secrepo-selflogs/access.log.2021-10-22_to_2021-10-27",
                 "secrepo-selflogs/access.log.2022-12-22"], "www.secrepo.com"),
    "monitorware": (["monitorware-twiki/access_log"], "www.example.com"),
    "nasa": (["nasa-ksc-1995-tsv-sample/nasa_19950701.tsv"], "ksc.nasa.gov"),
    "heritrix": ([p.relative_to(LOGS).as_posix() for p in sorted((LOGS / "netarchivesuite-heritrix-crawllogs").glob("*"))
                  if not p.name.endswith(".md")], None),
}


@pytest.fixture(scope="module", params=sorted(REAL))
def mined(request):
    files, site = REAL[request.param]
    ul, _ = read_urllist([str(LOGS / f) for f in files], site=site)
    return mine(ul), sorted(ul)


def candidates(result, pairs: int = 150) -> list:
    """The rules a validation round may decide: both directions of the first pairs (detected, so
    more than survive elimination), the parameter rules and the general ones."""
    both = [SubstringRule(a, b) for p in result.detected[:pairs] for a, b in ((p.alpha, p.beta), (p.beta, p.alpha))]
    return [*result.param_rules(), *result.general, *both]


def test_unsafe_flags_equal_the_per_candidate_check_on_real_logs(mined):
    result, urls = mined
    assert unsafe_flags(result, urls) == unsafe_flags_plain(result, urls)
    rules, sample = candidates(result), urls[:3000]
    assert unsafe_candidates(rules, sample) == {r.text: w for r in rules if (w := unsafe_candidate_plain(r, sample))}


def test_pre_fetch_checks_equal_the_per_candidate_ones_on_real_logs(mined):
    result, urls = mined
    rules, tests = candidates(result, 100), urls[:1500]
    reach = round_reach(tests, result.detected[:100], [*result.param_rules(), *result.general])
    valid = [*result.param_rules(), *result.general][:3] + [SubstringRule(p.alpha, p.beta) for p in result.kept[:3]]
    cover = Coverage(tests, reach)
    seen = frozenset(tests)
    for r in rules:
        assert reach.changed(r) == changed_plain(r, tests), r.text
        assert unobserved_output(r, tests, seen, reach=reach) == unobserved_output_plain(r, tests, seen), r.text
        assert breaks_urls(r, tests, reach) == breaks_urls_plain(r, tests), r.text
        assert cover(r, valid) == covered_by_plain(r, valid, tests), r.text


urls = st.lists(st.one_of(url, FRAG.map(lambda p: "http://h.com" + p), st.just(f"http://h.com/{START}x{END}")),
                max_size=30)


@settings(max_examples=300, deadline=None)
@given(rule_list, urls, rule_list)
def test_one_pass_equals_per_candidate_on_generated_rules(rules, tests, valid):
    reach = URLReach(tests, rules[: len(rules) // 2])  # the other half's keys are indexed when met
    cover = Coverage(tests, reach)
    assert unsafe_candidates(rules, tests) == {r.text: w for r in rules if (w := unsafe_candidate_plain(r, tests))}
    for r in rules:
        assert unsafe_candidate(r, tests) == unsafe_candidate_plain(r, tests)
        assert reach.changed(r) == changed_plain(r, tests)
        assert unobserved_output(r, tests, reach=reach) == unobserved_output_plain(r, tests)
        assert breaks_urls(r, tests, reach) == breaks_urls_plain(r, tests)
        assert cover(r, valid) == covered_by_plain(r, valid, tests)


def test_keys_met_later_and_empty_keys():
    tests = ["http://h.com/a/b", "http://h.com/b", "http://h.com/a/b", f"http://h.com/{START}a"]
    reach = URLReach(tests)
    assert reach.urls == tests[:2] + tests[3:]  # each URL once, in order
    assert list(reach.positions(SubstringRule.from_parts("/a/", "/"))) == [0]  # indexed on first use
    assert list(reach.positions(SubstringRule.from_parts("", "x"))) == [0, 1]  # no key: every URL but the sentinel one
    assert reach.changed(SubstringRule.from_parts("/b", "/c", anchor_end=True)) == tests[:2]


def test_figure_3_verdicts_equal_with_the_round_index():
    """validate_rule with the round's index draws the same URLs, fetches the same pages and gives
    the same verdict as without it (the applicable URLs and outputs found once, by key)."""
    import asyncio
    from collections import Counter

    from dustbuster.core.validation.validate import RoundFetcher, validate_rule
    from tests.test_validate import TEST_URLS, forum_site, make_fetch

    R = SubstringRule.from_parts
    rules = [R("/story_", "/story?id="), R("/story?id=", "/story_"), R("/index.html", "/", anchor_end=True),
             R("/", "/index.html", anchor_end=True), R("/lect", "/lecture"), R("/old/", "/new/"), R("/nothing", "/x")]
    reach = URLReach(TEST_URLS, rules[:3])
    for seed, r in enumerate(rules):
        calls_a, calls_b = Counter(), Counter()
        a = asyncio.run(validate_rule(r, Round.of(TEST_URLS, RoundFetcher(make_fetch(forum_site, calls_a))), seed=seed))
        b = asyncio.run(validate_rule(r, Round.of(TEST_URLS, RoundFetcher(make_fetch(forum_site, calls_b)), reach=reach), seed=seed))
        assert a == b and calls_a == calls_b, r.text
