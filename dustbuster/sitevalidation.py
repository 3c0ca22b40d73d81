"""One site's validation without Kafka: its fetch policy from the sites file, Figure 4's verdicts
over its candidates (dustbuster.core.validation.validate), then the set-level checks of the result
(dustbuster.core.validation.setcheck).  The validator agent (dustbuster.agents.validator) runs it once per
round; ``dustbuster validate`` and ``dustbuster truth`` use it without loading the worker (no
Faust, no Kafka client).

A shop on loopback whose ``sid`` parameter changes nothing, its URLs mined, then decided by
fetching (the sites file names the origins that may be fetched; ``resolve`` pins the host):

>>> import asyncio
>>> from aiohttp import web
>>> from dustbuster.core.mining.mine import mine
>>> from dustbuster.core.urls.urllist import URLList
>>> from dustbuster.core.validation.siteconfig import parse_sites
>>> async def item(request):   # an item's page, whatever the session id
...     words = f"words of item {request.query['id']} " * 40
...     return web.Response(text=f"<title>item {request.query['id']}</title><p>{words}", content_type="text/html")
>>> async def example():
...     app = web.Application()
...     app.router.add_get("/item", item)
...     runner = web.AppRunner(app)
...     await runner.setup()
...     await web.TCPSite(runner, "127.0.0.1", 0).start()
...     port = runner.addresses[0][1]
...     ul = URLList()
...     for i in range(60):
...         for sid in (i, i + 1000):
...             ul.add(f"http://shop.test:{port}/item?id={i}&sid={sid}", size=900 + i)
...     found = mine(ul)
...     sites = parse_sites('{"shop.test": {"origins": ["http://shop.test:%d"], "allow_private": true, '
...                         '"resolve": {"shop.test": "127.0.0.1"}, "robots": false, "rate_per_s": 1000}}' % port)
...     cands = SiteCandidates(found.kept, found.param_rules(), ul.test_urls())
...     sv = await validate_site(cands, policy_of(sites, "shop.test", "example"), Settings())
...     await runner.cleanup()
...     return sv
>>> [r.text for r in asyncio.run(example()).rules]
['remove sid=* under /item']
"""

from __future__ import annotations

import dataclasses
import logging
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Mapping, Sequence

from dustbuster.core.model.pair import Pair
from dustbuster.core.errors import ConfigError
from dustbuster.core.model.ruleversion import carried_over
from dustbuster.core.model.rules import Rule, SubstringRule
from dustbuster.core.mining.hostalias import alias_target
from dustbuster.core.model.hostrules import host_rule_hosts
from dustbuster.core.validation.aliases import alias_round, onto_targets, pointed_origins
from dustbuster.core.validation.implied import one_rule_per_alias, through_substrings
from dustbuster.core.model.ruletypes.querypath import QueryPathRule
from dustbuster.core.validation.setcheck import SUBSUMED, SetCheck, check_rule_set
from dustbuster.core.validation.siteconfig import SiteConfig
from dustbuster.core.validation.validate import Round, RoundFetcher, ValidationResult, canonization_order, validate
from dustbuster.fetch.client import FetchPolicy, Fetcher, fetch_policy
from dustbuster.fetch.pacer import SitePacer
from dustbuster.fetch.softerrors import SoftErrorAware
from dustbuster.declared import declared_round
from dustbuster.stream.settings import Settings, read_sites

log = logging.getLogger(__name__)


def policy_of(sites: Mapping[str, SiteConfig], site: str, source: object) -> FetchPolicy | None:
    """The fetch policy of ``site`` in the parsed sites file ``sites`` (read from ``source``);
    None for a site nobody configured or that names no origin: such a site is never fetched (its
    origins, and whether loopback or private addresses are allowed, must be said explicitly).
    ConfigError naming the file and the site when its policy cannot be made."""
    conf = sites.get(site)
    if conf is None or not conf.fetchable:
        return None
    try:
        return fetch_policy(conf)
    except (ValueError, TypeError) as exc:
        raise ConfigError(f"{source}: site {site!r}: {exc}") from None


def site_policy(settings: Settings, site: str) -> FetchPolicy | None:
    """The fetch policy of ``site`` in DUST_VALIDATOR_SITES (:func:`policy_of`)."""
    return policy_of(settings.sites, site, settings.validator_sites)


def check_site_policies(settings: Settings) -> None:
    """Read the sites file and make every configured site's fetch policy: ConfigError at start-up otherwise."""
    for site in settings.sites:
        site_policy(settings, site)


def configured_policy(sites: Path, site: str) -> FetchPolicy:
    """The fetch policy of ``site`` in the sites file ``sites`` (read once) for the offline
    commands (``validate``, ``truth``); ConfigError with a message a person can act on otherwise."""
    policy = policy_of(read_sites(Path(sites)), site, sites)
    if policy is None:
        raise ConfigError(f"{sites} has no origins for site {site!r}: nothing may be fetched")
    return policy


@dataclass
class SiteValidation:
    """One site's validation: Figure 4's verdicts, then the set-level checks of the result."""

    rules: list[Rule]  #: what passed every check, in canonization order
    result: ValidationResult
    setcheck: SetCheck
    fetch_outcomes: dict[str, int]
    seconds: float
    probes: int = 0  #: soft-error probes fetched (dustbuster.fetch.softerrors)
    signals: dict = None  # type: ignore[assignment]  #: what the identity signals decided
    #: the same-origin links of the pages fetched this round (RoundFetcher.links): the
    #: validator agent sends them as listed URLs of the site; not in :meth:`stats` (nor `validate`'s output)
    links: tuple[str, ...] = ()
    links_over_cap: int = 0  #: links left out: the round already held core.fetched.MAX_ROUND_LINKS

    @property
    def fetches(self) -> int:
        return self.result.fetches + self.setcheck.fetches + self.probes

    def stats(self, candidates: int) -> dict:
        decided = sum(1 for v in self.result.verdicts if v.valid is not None and v.reason != "cached")
        return {"candidates": candidates, "valid": len(self.rules), "fetches": self.fetches, "decided": decided,
                "cached": sum(1 for v in self.result.verdicts if v.reason == "cached"),
                "fetches_per_decided_rule": round(self.fetches / decided, 1) if decided else None,
                "fetch_outcomes": self.fetch_outcomes, "dropped_refinements": len(self.result.dropped_refinements),
                "covered": len(self.result.covered),
                "undecided": sum(1 for v in self.result.verdicts if v.valid is None),
                "partial_evidence": self.partial_evidence(), "identity_signals": self.signals or {},
                **self.made_samples(),
                "set_check": self.setcheck.stats(), "seconds": round(self.seconds, 3)}

    def made_samples(self) -> dict[str, int]:
        """The made u's this round compared and skipped (core/validation/madesamples.py), over its verdicts."""
        fresh = [v.made for v in self.result.verdicts if v.reason != "cached"]
        return {k: sum(m.get(k, 0) for m in fresh) for k in ("made_samples", "made_skipped")}

    def partial_evidence(self) -> list[dict]:
        """The rules left undecided because part of the site showed too few positives
        (failing families, a tripped circuit breaker): each with those families, their positives and
        why their pages failed (``status_500``, ``timeout``, ``site_down``, …)."""
        return [{"rule": v.rule.text, "type": v.rule.type, "positives": v.positives, "skipped": v.skipped,
                 "families": [f for f in v.families if f.get("short")]}
                for v in self.result.verdicts if v.reason == "partial_evidence"]


@dataclass
class SiteCandidates:
    """What one round of one site decides: the candidates mined from its log (Figure 1's pairs or
    the substring rules they became, and the other rules), the test URLs they are judged on, the
    candidates from elsewhere (``validate --candidates``: decided last, never at the mined rules'
    expense, :func:`with_extras`), the rules published before (a rule whose verdict is now undecided
    is kept: only a refutation removes a rule) and the URLs logged only with status >= 400 (a
    rule's parameters changed there and never tested are kept, core/validation/narrow.py)."""

    pairs: Sequence[Pair | SubstringRule]
    rules: Sequence[Rule]
    test_urls: list[str]
    extra: Sequence[Rule] = ()
    previous: Sequence[Rule] = ()
    logged_errors: Sequence[str] = ()


async def validate_site(cands: SiteCandidates, policy: FetchPolicy, settings: Settings, cache=None, on_verdict=None,
                        track=None, pacer: SitePacer | None = None,
                        remine: Callable[[Sequence[Rule]], SiteCandidates | None] | None = None) -> SiteValidation | None:
    """Figure 4 over the candidates, the previous rules whose verdict is now undecided kept, then the
    set-level checks (dustbuster.core.validation.setcheck).  None when the site does not answer at
    all (an outage decides nothing).  The validator agent and ``dustbuster validate`` both run this.
    ``cache``: the verdicts decided before; ``on_verdict``: called after each decision; ``track``
    (the dashboard's LiveRound) follows the fetch counts and verdicts live; ``pacer``: the site's
    rate and fetch budget, shared across rounds (fetch/pacer.py; by default this round's own).
    ``remine``: the candidates mined again from the URL list canonized by the valid set
    (:func:`canonical_round`; ``dustbuster validate`` passes it, it holds the URL list)."""
    t0 = time.perf_counter()
    threshold = settings.params.sketch_threshold
    async with Fetcher(policy, pacer) as fetcher:
        if track is not None:
            track.watch(fetcher.counts)
            on_verdict = track.chain(on_verdict)
        # an outage decides nothing: if no origin answers its front page, keep the rule set as it is
        front_of = {o: await fetcher.fetch(o + "/") for o in sorted(policy.origins)[:4]}
        fronts = list(front_of.values())
        if not any(f.ok or (f.status or 0) == 404 for f in fronts):
            log.warning("site unreachable (%s)", sorted({f.reason for f in fronts}))  # fetch_budget: spent for now
            return None
        soft = SoftErrorAware(fetcher.fetch, threshold, cands.test_urls, counts=fetcher.counts)
        rf = RoundFetcher(soft)
        rf.logged_errors = tuple(cands.logged_errors)
        for f in fronts:  # the front pages' links too (a site's front page links to most of it)
            rf.take_links(f)
        rnd = Round(cands.test_urls, rf, settings.params, threshold, cache=cache, on_verdict=on_verdict)
        res = await validate(rnd, cands.pairs, cands.rules, extra=cands.extra)
        declared = await declared_round(res, rnd)
        aliases, alias_urls = await alias_round(res, rnd, sorted(policy.origins), pointed_origins(front_of))
        declared += aliases
        kept = carried_over(cands.previous, (v.rule.text for v in res.verdicts if v.valid is None), res.valid)
        keys = {(r.type, r.text) for r in [*cands.extra, *declared]}
        mined = [r for r in res.valid if (r.type, r.text) not in keys]
        sc = await check_rule_set(canonization_order(mined + kept), rnd)
        wide = rnd
        if len(mined) < len(res.valid):  # the aliases' made URLs too: the log may name no alias host
            wide = dataclasses.replace(rnd, test_urls=[*rnd.test_urls, *alias_urls], reach=None) if alias_urls else rnd
            sc = await with_extras(sc, [r for r in res.valid if (r.type, r.text) in keys], wide)
        origins = sorted(policy.origins)
        target = alias_target(origins, pointed_origins(front_of)) if len(origins) > 1 else None
        sc = await with_implied(sc, wide, target, origins)
        if remine is not None and sc.rules:
            sc = await canonical_round(sc, res, rnd, remine)
        counts = dict(fetcher.counts)
    signals = dict(rf.signals) | soft.stats() | {"declared_pairs": len(rf.declared), "declared_candidates": len(declared)}
    for r, why in sc.dropped:
        log.debug("set-level check dropped %s: %s", r.text, why)
    return SiteValidation(sc.rules, res, sc, counts, time.perf_counter() - t0, soft.probes, signals, rf.links,
                          rf.links_over_cap)


async def with_implied(base: SetCheck, rnd: Round, target: str | None, origins: Sequence[str]) -> SetCheck:
    """The set with the rules its own rules imply put in place of the literals that say the same
    law, checked again as a whole: one host rule per alias toward ``target``
    (core/validation/implied.py ``one_rule_per_alias``), the rules anchored on an alias moved onto
    its target (core/validation/aliases.py ``onto_targets``: they then fire on URLs entered by
    either host), the query-to-path mappings also stated for the scopes the substring rules
    rewrite theirs into (``through_substrings``, probed under ``origins``).  It stands when the
    check does not refute it and keeps every host rule and every rule of ``base`` it holds (only an
    implied rule may be dropped), else ``base`` stands."""
    # a mapping the substring rules before it hide was dropped as subsumed: it is carried too
    hidden = [r for r, why in base.dropped if why.startswith(SUBSUMED) and isinstance(r, QueryPathRule)]
    hosts = one_rule_per_alias(canonization_order([*base.rules, *hidden]) if hidden else base.rules, target)
    new = through_substrings(onto_targets(hosts), origins)
    if hidden:
        new = [r for r in new if not any(r is h for h in hidden)]
    if [(r.type, r.text) for r in new] == [(r.type, r.text) for r in base.rules]:
        return base
    sc = await check_rule_set(canonization_order(new), rnd)
    had = {r.text for r in base.rules} | {r.text for r in new if host_rule_hosts(r) is not None}
    need = {r.text for r in new} & had
    if sc.passed is False or not need <= {r.text for r in sc.rules}:
        log.debug("the set with its implied rules was refuted or lost a rule: kept as it was")
        base.fetches += sc.fetches
        return base
    sc.dropped, sc.fetches = base.dropped + sc.dropped, base.fetches + sc.fetches
    return sc


def _key(rule: object) -> tuple:
    """What one candidate is, whether a pair or the rule it became."""
    if isinstance(rule, (Pair, SubstringRule)):
        return ("substring", rule.alpha, rule.beta)
    return (getattr(rule, "type", ""), getattr(rule, "text", ""))


async def canonical_round(base: SetCheck, res: ValidationResult, rnd: Round,
                          remine: Callable[[Sequence[Rule]], SiteCandidates | None]) -> SetCheck:
    """The candidates mined again from the URL list canonized by the set (``remine``;
    core/canon/canonlist.py: what the log shows only once the valid rules have run), those not
    decided before decided by Figure 4 on the canonical forms of the test URLs (the valid set
    covering them as in one round), and the valid ones added to the set as extra candidates
    (:func:`with_extras`: checked with the whole set on the round's test URLs, never at a rule's
    expense).  Ours, beyond the papers; docs/validation.md "Mining again under the valid rules"."""
    again = remine(base.rules)
    if again is None:
        return base
    seen = ({_key(v.rule) for v in res.verdicts} | {_key(r) for r in res.covered}
            | {_key(p) for p, _ in res.dropped_refinements} | {_key(r) for r in base.rules})
    pairs = [p for p in again.pairs if _key(p) not in seen]
    rules = [r for r in again.rules if _key(r) not in seen]
    if not pairs and not rules:
        return base
    sub = dataclasses.replace(rnd, test_urls=list(again.test_urls), reach=None)
    more = await validate(sub, pairs, rules, seed=50_000, valid_before=base.rules)
    res.verdicts += more.verdicts
    res.covered += more.covered
    res.fetches = rnd.fetch.fetches
    res.outcomes = dict(rnd.fetch.outcomes)
    new = [r for r in more.valid if _key(r) not in seen]
    log.info("mined again under %s valid rules: %s new candidates, %s valid", len(base.rules),
             len(pairs) + len(rules), len(new))
    if not new:
        return base
    return await with_extras(base, new, rnd)


async def with_extras(base: SetCheck, extras: list[Rule], rnd: Round) -> SetCheck:
    """The set-level checks again with the valid extra candidates added to what passed them without
    any: the result stands only when it is not refuted and keeps every rule of ``base`` — or
    drops it as subsumed, the extras doing its work (a one-page "drop utm_medium, … from the
    query" once ``remove utm_medium=*`` joins); else ``base`` stands and the extras are dropped: an
    extra candidate never costs the set a rule's reach."""
    sc = await check_rule_set(canonization_order(base.rules + extras), rnd)
    keys = {(r.type, r.text) for r in sc.rules}
    keys |= {(r.type, r.text) for r, why in sc.dropped if why.startswith(SUBSUMED)}
    if sc.passed is not False and all((r.type, r.text) in keys for r in base.rules):
        sc.dropped, sc.fetches = base.dropped + sc.dropped, base.fetches + sc.fetches
        return sc
    base.dropped += [(r, "set_check: with the extra candidates the set lost a rule or was refuted") for r in extras]
    base.fetches += sc.fetches
    return base


__all__ = ["SiteValidation", "SoftErrorAware", "check_site_policies", "configured_policy",
           "policy_of", "site_policy", "canonical_round", "validate_site", "with_extras", "with_implied"]
