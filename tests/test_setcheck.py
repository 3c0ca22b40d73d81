"""Set-level validation (dustbuster.core.validation.setcheck): the composed canonicalizer is fetched and compared like
one rule, the rule behind a failure is found by bisection and dropped; and on the simulated forum
the validated set is a correct canonicalizer judged against the simulator's own pages."""

from __future__ import annotations

import asyncio
import re
from collections import Counter, defaultdict

from dustbuster.sitevalidation import SiteCandidates
from dustbuster.core.validation.round import Round
from dustbuster.core import DustParams, ParamRule, SubstringRule
from dustbuster.core.canon.canonize import Canonizer
from dustbuster.core.validation.setcheck import blame, check_rule_set
from dustbuster.core.validation.validate import RoundFetcher
from tests.test_validate import TEST_URLS, forum_site, make_fetch

R = SubstringRule.from_parts
GOOD = R("/story?id=", "/story_", status="valid")
BAD = R("/index.html", "/about.html", status="valid")   # /dK/index.html → /dK/about.html: no such page


def test_a_refuted_set_loses_the_rule_bisection_blames():
    rf = RoundFetcher(make_fetch(forum_site, Counter()))
    res = asyncio.run(check_rule_set([GOOD, BAD], Round.of(TEST_URLS, rf)))
    assert res.rules == [GOOD] and res.passed is True
    assert res.dropped[0][0] == BAD and res.dropped[0][1].startswith("set_check:")
    st = res.stats()
    assert st["rounds"] == 2 and st["negatives"] == 0 and st["positives"] >= (1 - DustParams().epsilon) * DustParams().n and st["fetches"] > 0
    assert st["dropped"][0]["rule"] == BAD.text


def test_bisection_finds_the_first_rule_that_changes_the_page():
    rf = RoundFetcher(make_fetch(forum_site, Counter()))
    u = "http://f.co.il/story?id=7"   # → /story_7 (the same page) → /lect7 (another page)
    rules = [GOOD, R("/story_", "/lect", status="valid")]
    assert asyncio.run(blame(u, rules, rf, 1.0, 10)) == 1
    assert asyncio.run(blame("http://f.co.il/nothing", rules, rf, 1.0, 10)) is None   # u itself fails


def test_an_outage_decides_nothing_and_keeps_the_set():
    async def down(url):
        from dustbuster.core.validation.validate import Fetched

        return Fetched(False, reason="site_down")

    res = asyncio.run(check_rule_set([GOOD, BAD], Round.of(TEST_URLS, RoundFetcher(down))))
    assert res.rules == [GOOD, BAD] and res.passed is None and res.stats()["reason"] == "u_unreachable"


def test_static_checks_run_first():
    grow = R("", "?utm_source=feed0", anchor_end=True, status="valid")
    rep = ParamRule("sid", "replace", "02ec4e", status="valid")
    rf = RoundFetcher(make_fetch(forum_site, Counter()))
    res = asyncio.run(check_rule_set([ParamRule("sid", "remove", status="valid"), rep, GOOD, grow], Round.of(TEST_URLS, rf)))
    assert GOOD in res.rules and grow not in res.rules and rep not in res.rules
    assert {why.split(":")[0] for _, why in res.dropped} >= {"self_feeding", "subsumed"}


# ------------------------------------------------------------------ the simulator's truth


def test_validated_set_on_the_simulator_is_a_correct_canonicalizer(tmp_path):
    from dustbuster.agents.validator import candidate_rules
    from dustbuster.sitevalidation import site_policy, validate_site
    from dustbuster.sim.site import SimSite, start
    from dustbuster.stream.settings import Settings
    from tests.test_validator_rounds import candidates, sim_sites

    async def go():
        sim = SimSite()
        runner, port = await start(sim)
        conf = sim_sites(tmp_path / "sites.json", port)
        cand = candidates(sim, port)
        settings = Settings(validator_sites=conf)
        pairs, params = candidate_rules("forum.test", cand)
        sv = await validate_site(SiteCandidates(pairs, params, list(cand.test_urls)), site_policy(settings, "forum.test"), settings)
        await runner.cleanup()
        return sim, port, cand, sv

    sim, port, cand, sv = asyncio.run(go())
    rules = sv.rules
    texts = [r.text for r in rules]
    assert sv.setcheck.passed is True and rules, texts
    canon = Canonizer(rules)
    # 1-5: no self-feeding or expanding-into-nothing rule survives; every test URL converges,
    # canon(canon(u)) = canon(u); nothing appends a parameter
    for u in cand.test_urls:
        c = canon.canonize(u)
        assert c.converged and canon(c.canonical) == c.canonical, (u, c, texts)
        assert len(c.canonical) <= len(u) + 3, (u, c.canonical, texts)   # only www. → '' style moves, never growth
    # 0 false merges against the simulator's own pages (served content, no comment growth)
    groups = defaultdict(set)
    for u in cand.test_urls:
        groups[canon(u)].add(u)
    false_merges = []
    for c, members in groups.items():
        pages = {sim.page_of(m) for m in members}
        if len(members) > 1 and len(pages - {None}) > 1:
            false_merges.append((c, sorted(members)[:4]))
    assert false_merges == [], (false_merges[:5], texts)
    merged = sum(len(m) - 1 for m in groups.values())
    assert merged >= 0.3 * len(cand.test_urls), (merged, len(cand.test_urls), texts)   # it does find the DUST
    # the demo's frontier (deploy/demo.sh): story_N on one host, no added parameters
    w, f, pol = f"http://www.forum.test:{port}", f"http://forum.test:{port}", f"http://politics.forum.test:{port}"
    one = {canon(u) for u in (f"{w}/story?id=101&sid=42", f"{w}/story_101", f"{f}/story.php3?id=101")}
    two = {canon(u) for u in (f"{w}/story?id=102&LastView=&Close=", f"{f}/story_102?utm_source=feed1")}
    assert len(one) == 1 and re.fullmatch(rf"http://(www\.)?forum\.test:{port}/story_101", one.pop()), texts
    assert len(two) == 1 and re.fullmatch(rf"http://(www\.)?forum\.test:{port}/story_102", two.pop()), texts
    assert canon(f"{pol}/story_101") == f"{pol}/story_101"
    assert canon(f"{w}/thread?rep=7&sid=1") in (f"{w}/thread?rep=7", f"{f}/thread?rep=7")
    # evidence kept with every published rule
    for r in rules:
        assert r.status == "valid" and r.evidence["positives"] >= 10 and r.evidence["applicable"] > 0
        assert r.evidence["samples"] and all(len(s) == 3 for s in r.evidence["samples"])


# ------------------------------------------------------------------ extra candidates (issue 15)

def test_an_extra_candidate_never_costs_the_set_a_rule():
    from dustbuster.sitevalidation import with_extras

    rf = RoundFetcher(make_fetch(forum_site, Counter()))
    base = asyncio.run(check_rule_set([GOOD], Round.of(TEST_URLS, rf)))
    assert base.rules == [GOOD]
    # a bad extra that passed its own sample: the set with it is refuted, the base set stands
    rf = RoundFetcher(make_fetch(forum_site, Counter()))
    got = asyncio.run(with_extras(base, [BAD], Round.of(TEST_URLS, rf, DustParams(), threshold=1.0)))
    assert got.rules == [GOOD] and any(r == BAD for r, _ in got.dropped)
    # an extra the static checks drop (it changes no test URL) leaves the base set as it was
    ok = ParamRule("sid", "remove", status="valid")
    got = asyncio.run(with_extras(asyncio.run(check_rule_set([GOOD], Round.of(TEST_URLS, rf))), [ok],
                                  Round.of(TEST_URLS, rf, DustParams(), threshold=1.0)))
    assert got.rules == [GOOD] and got.passed is True


def test_an_extra_candidate_that_does_a_base_rule_s_work_replaces_it():
    """``remove sid=*`` mined again joins the set; the base set's narrower rule for one story's sid
    then changes no test URL after it (subsumed): the set keeps its reach, with the general rule."""
    from dustbuster.core.model.scopedrules import QueryRule
    from dustbuster.sitevalidation import with_extras

    def site(url: str):
        return forum_site(re.sub(r"[?&]sid=\w+$", "", url))

    urls = TEST_URLS + [f"http://f.co.il/story_{i}?sid={i}a" for i in range(40)]
    narrow = QueryRule("/story_7", "drop", only=("sid",), status="valid")
    rf = RoundFetcher(make_fetch(site, Counter()))
    base = asyncio.run(check_rule_set([GOOD, narrow], Round.of(urls, rf)))
    assert base.rules == [GOOD, narrow], base.dropped
    general = ParamRule("sid", "remove", status="valid")
    got = asyncio.run(with_extras(base, [general], Round.of(urls, rf, DustParams(), threshold=1.0)))
    assert general in got.rules and narrow not in got.rules and GOOD in got.rules
    assert any(r == narrow and why.startswith("subsumed") for r, why in got.dropped)


def test_an_extra_candidate_decided_as_a_mined_one_is_not_tried_again():
    from dustbuster.core.validation.validate import validate

    rf = RoundFetcher(make_fetch(forum_site, Counter()))
    bad = SubstringRule.from_parts("/index.html", "/about.html")
    res = asyncio.run(validate(Round.of(TEST_URLS, rf), [], [bad], extra=[bad, GOOD]))
    texts = [v.rule.text for v in res.verdicts]
    assert texts.count(bad.text) == 1 and bad not in res.valid
