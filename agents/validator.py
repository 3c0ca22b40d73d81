"""The validator agent: candidate sets in, rules fetched and decided (Figures 3–4), versioned rule
sets out on the compacted rules topic (key = site).  A site's rule set changes only when a
verdict changes; verdicts are cached with a TTL (re-validated after it, at the next window)."""

from __future__ import annotations

import json
import logging
import secrets
import time

from dust.detect import Pair
from dust.errors import RuleError
from dust.rules import ParamRule, SubstringRule, rule_from_json
from dust.sketch import similar
from dust.validate import Fetched, RoundFetcher, validate
from state.verdicts import VerdictStore
from stream.fetcher import FetchPolicy, Fetcher
from stream.records import RuleSet

log = logging.getLogger(__name__)


def site_policy(settings, site: str) -> FetchPolicy | None:
    """The fetch policy of a configured site; None for a site nobody configured: such a site is
    never fetched (its origins, and whether loopback or private addresses are allowed, must be
    said explicitly in DUST_VALIDATOR_SITES)."""
    if not settings.validator_sites:
        return None
    conf = json.loads(settings.validator_sites.read_text()).get(site)
    if not conf or not conf.get("origins"):
        return None
    return FetchPolicy(origins=frozenset(FetchPolicy.origin_of(o) for o in conf["origins"]),
                       allow_private=bool(conf.get("allow_private", False)),
                       resolve={k.lower(): v for k, v in (conf.get("resolve") or {}).items()},
                       robots=bool(conf.get("robots", True)),
                       rate_per_s=float(conf.get("rate_per_s", 10.0)),
                       per_host_concurrency=int(conf.get("concurrency", 4)))


class SoftErrorAware:
    """Pages that look like the site's answer to a path that cannot exist are failures."""

    def __init__(self, fetcher: Fetcher, min_equal: float) -> None:
        self.fetcher = fetcher
        self.min_equal = min_equal
        self.probes: dict[str, Fetched] = {}

    async def __call__(self, url: str) -> Fetched:
        got = await self.fetcher.fetch(url)
        if not got.ok:
            return got
        origin = FetchPolicy.origin_of(url)
        if origin not in self.probes:
            self.probes[origin] = await self.fetcher.fetch(f"{origin}/dustbuster-probe-{secrets.token_hex(8)}")
        probe = self.probes[origin]
        if probe.ok and probe.sketch and got.sketch and similar(got.sketch, probe.sketch, self.min_equal):
            self.fetcher.counts["soft_error"] += 1
            return Fetched(False, None, got.status, "soft_error")
        return got


class _SiteCache:
    def __init__(self, store: VerdictStore, site: str, ttl_s: float) -> None:
        self.store, self.site, self.ttl = store, site, ttl_s

    def get(self, key: str) -> dict | None:
        return self.store.get(self.site, key, self.ttl)

    def put(self, key: str, verdict: dict) -> None:
        self.store.put(self.site, key, verdict)


def register(app, settings, topics, stores) -> None:
    verdicts = VerdictStore(settings.data_dir / "verdicts")
    app.dust_validator_stats = vstats = {"rounds": 0, "fetches": 0, "published": 0}

    @app.timer(max(settings.verdict_ttl_s / 4, settings.window_s), name="dust-revalidate")
    async def revalidate() -> None:
        """Rules are re-validated on a schedule even when a site sends no new candidates: the
        verdicts past their TTL are fetched again, and a rule that stopped holding is dropped."""
        from stream.records import CandidateSet

        for site, raw in verdicts.all_candidates():
            try:
                await round_for(site, CandidateSet.from_data(raw))
            except Exception:
                log.exception("re-validation of %s failed", site)

    @app.agent(topics.candidates, name="dust-validator")
    async def validator(stream):
        async for cand in stream:
            site = cand.site if hasattr(cand, "site") else cand["site"]
            try:
                await round_for(site, cand)
            except Exception:  # a bad round must not stop the agent; the next window retries
                log.exception("validation round of %s failed", site)


    async def publish(site: str, value) -> None:
        await topics.rules.send(key=site.encode(), value=value)

    async def round_for(site: str, cand) -> None:
        await validation_round(site, cand, settings, verdicts, publish, vstats, app.dust_metrics)


async def validation_round(site: str, cand, settings, verdicts: VerdictStore, publish, vstats: dict | None = None,
                           metrics=None):
    """One validation round of a site's candidate set; ``publish(site, RuleSet | None)`` sends a
    new version (or a tombstone) when the list of valid rules changed.  Returns what was sent."""
    vstats = vstats if vstats is not None else {"rounds": 0, "fetches": 0, "published": 0}
    t0 = time.perf_counter()
    pairs, params = [], []
    for rj in cand.rules:
        try:
            r = rule_from_json(rj)
        except RuleError as exc:
            log.warning("skipping a bad candidate rule of %s: %s", site, exc)
            continue
        if isinstance(r, SubstringRule):
            pairs.append(Pair(r.alpha, r.beta, r.support, r.support_high))
    for rj in cand.param_rules:
        try:
            r = rule_from_json(rj)
        except RuleError:
            continue
        if isinstance(r, ParamRule):
            params.append(r)
    policy = site_policy(settings, site)
    if policy is None:
        vstats["unconfigured"] = vstats.get("unconfigured", 0) + 1
        log.info("%s: not in DUST_VALIDATOR_SITES: not validated (nothing fetched)", site)
        return "unconfigured"
    async with Fetcher(policy) as fetcher:
        # an outage decides nothing: if no origin answers its front page, keep the rule set as it is
        fronts = [await fetcher.fetch(o + "/") for o in sorted(policy.origins)[:4]]
        if not any(f.ok or (f.status or 0) == 404 for f in fronts):
            log.warning("%s: site unreachable (%s); rule set kept", site, sorted({f.reason for f in fronts}))
            return "unchanged"
        rf = RoundFetcher(SoftErrorAware(fetcher, settings.sketch_min_equal))
        res = await validate(pairs, params, list(cand.test_urls), rf, settings.params,
                             min_equal=settings.sketch_min_equal, cache=_SiteCache(verdicts, site, settings.verdict_ttl_s))
        counts = dict(fetcher.counts)
    if metrics is not None:
        for outcome, n in counts.items():
            metrics.fetches.labels(outcome).inc(n)
        for v in res.verdicts:
            if v.reason != "cached":
                metrics.validations.labels("undecided" if v.valid is None else "valid" if v.valid else "invalid").inc()
    vstats["rounds"] += 1
    vstats["fetches"] += res.fetches
    verdicts.set_candidates(site, cand.to_representation() if hasattr(cand, "to_representation") else dict(cand))
    rules = [r.to_json() | {"validated_at": round(time.time(), 3)} for r in res.valid]
    prev = verdicts.ruleset(site)
    # a rule valid before whose verdict is now undecided (an outage, too few URLs) is kept as it was:
    # only a refutation removes a rule
    undecided = {v.rule.text for v in res.verdicts if v.valid is None}
    have = {r["display"] for r in rules}
    kept = [r for r in (prev or {}).get("rules", []) if r["display"] in undecided and r["display"] not in have]
    if kept:
        rules = ([r for r in rules + kept if r["type"] == "parameter"]
                 + [r for r in rules + kept if r["type"] != "parameter"])
    sig = [(r["display"]) for r in rules]
    if prev is not None and prev["sig"] == sig:
        log.info("%s: rule set unchanged (%s rules)", site, len(rules))
        return "unchanged"
    version = (prev["version"] + 1) if prev else 1
    decided = sum(1 for v in res.verdicts if v.valid is not None and v.reason != "cached")
    if not rules and prev is not None:  # the site has no valid rule any more: remove it
        await publish(site, None)
        if metrics is not None:
            metrics.rules_published.inc()
        verdicts.set_ruleset(site, {"version": version, "sig": sig, "rules": []})
        log.warning("%s: no valid rules any more: tombstone published", site)
        return None
    stats = {"candidates": len(pairs) + len(params), "valid": len(rules), "fetches": res.fetches,
             "decided": decided, "fetches_per_decided_rule": round(res.fetches / decided, 1) if decided else None,
             "fetch_outcomes": counts, "dropped_refinements": len(res.dropped_refinements),
             "undecided": sum(1 for v in res.verdicts if v.valid is None),
             "seconds": round(time.perf_counter() - t0, 3), "window": cand.window}
    rs = RuleSet(site=site, version=version, created=time.time(), rules=rules, stats=stats)
    await publish(site, rs)
    verdicts.set_ruleset(site, {"version": version, "sig": sig, "rules": rules})
    vstats["published"] += 1
    if metrics is not None:
        metrics.rules_published.inc()
    log.warning("%s: published rule set v%s: %s valid rules (%s fetches)", site, version, len(rules), res.fetches)
    return rs
