"""The validator agent: candidate sets in, rules fetched and decided (Figures 3–4), versioned rule
sets out on the compacted rules topic (key = site).  A site's rule set changes only when a
verdict changes (dustbuster.core.ruleversion decides); verdicts are cached with a TTL
(re-validated after it, at the next window)."""

from __future__ import annotations

import logging
import secrets
import time
from dataclasses import dataclass
from pathlib import Path

from dustbuster.core.detect import Pair
from dustbuster.core.errors import ConfigError, RuleError
from dustbuster.core.rules import ParamRule, Rule, SubstringRule, rule_from_json
from dustbuster.core.ruleversion import TOMBSTONE, UNCHANGED, Published, VersionDecision, carried_over, decide_version
from dustbuster.core.setcheck import SetCheck, check_rule_set
from dustbuster.core.siteconfig import SiteConfig
from dustbuster.core.sketch import similar
from dustbuster.core.validate import Fetched, RoundFetcher, ValidationResult, validate
from dustbuster.fetch.client import FetchPolicy, Fetcher
from dustbuster.state.verdicts import VerdictStore
from dustbuster.stream.records import CandidateSet, RuleSet
from dustbuster.stream.settings import Settings, read_sites

from .context import WorkerContext

log = logging.getLogger(__name__)

_told_unconfigured: set[str] = set()  #: sites whose candidates were said to wait unvalidated (once per site)


def fetch_policy(conf: SiteConfig) -> FetchPolicy:
    """The fetcher's policy of a configured site (each origin reduced to scheme://host[:port])."""
    return FetchPolicy(origins=frozenset(FetchPolicy.origin_of(o) for o in conf.origins),
                       allow_private=conf.allow_private, resolve=dict(conf.resolve), robots=conf.robots,
                       rate_per_s=conf.rate_per_s, per_host_concurrency=conf.concurrency)


def site_policy(settings: Settings, site: str) -> FetchPolicy | None:
    """The fetch policy of a configured site; None for a site nobody configured: such a site is
    never fetched (its origins, and whether loopback or private addresses are allowed, must be
    said explicitly in DUST_VALIDATOR_SITES)."""
    conf = settings.sites.get(site)
    return fetch_policy(conf) if conf is not None and conf.fetchable else None


def check_site_policies(settings: Settings) -> None:
    """Every configured site's fetch policy can be made: ConfigError at start-up otherwise."""
    for site in settings.sites:
        try:
            site_policy(settings, site)
        except (ValueError, TypeError) as exc:
            raise ConfigError(f"{settings.validator_sites}: site {site!r}: {exc}") from None


def configured_policy(sites: Path, site: str) -> FetchPolicy:
    """The fetch policy of ``site`` in the sites file ``sites`` for the offline commands
    (``validate``, ``truth``); ConfigError with a message a person can act on otherwise."""
    conf = read_sites(Path(sites)).get(site)
    try:
        policy = fetch_policy(conf) if conf is not None and conf.fetchable else None
    except (ValueError, TypeError) as exc:
        raise ConfigError(f"{sites}: {exc}") from None
    if policy is None:
        raise ConfigError(f"{sites} has no origins for site {site!r}: nothing may be fetched")
    return policy


class SoftErrorAware:
    """Pages that look like the site's answer to a path that cannot exist are failures."""

    def __init__(self, fetcher: Fetcher, threshold: float) -> None:
        self.fetcher = fetcher
        self.threshold = threshold  #: fraction of min-hashes that must agree (Settings.sketch_threshold)
        self.probes: dict[str, Fetched] = {}

    async def __call__(self, url: str) -> Fetched:
        got = await self.fetcher.fetch(url)
        if not got.ok:
            return got
        origin = FetchPolicy.origin_of(url)
        if origin not in self.probes:
            self.probes[origin] = await self.fetcher.fetch(f"{origin}/dustbuster-probe-{secrets.token_hex(8)}")
        probe = self.probes[origin]
        if probe.ok and probe.sketch and got.sketch and similar(got.sketch, probe.sketch, self.threshold):
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


def register(ctx: WorkerContext) -> None:
    """The ``dust-validator`` agent on the candidates topic, and the ``dust-revalidate`` timer."""
    check_site_policies(ctx.settings)
    assert ctx.verdicts is not None, "the validator needs DUST_VALIDATE"

    @ctx.app.timer(max(ctx.settings.verdict_ttl_s / 4, ctx.settings.window_s), name="dust-revalidate")
    async def revalidate() -> None:
        """Rules are re-validated on a schedule even when a site sends no new candidates: the
        verdicts past their TTL are fetched again, and a rule that stopped holding is dropped."""
        for site, raw in ctx.verdicts.all_candidates():
            try:
                await run_round(ctx, site, CandidateSet.from_data(raw))
            except Exception:
                log.exception("re-validation of %s failed", site)

    @ctx.app.agent(ctx.topics.candidates, name="dust-validator")
    @ctx.health.agent("dust-validator")
    async def validator(stream):
        async for cand in ctx.health.track("dust-validator", stream):
            site = cand.site if hasattr(cand, "site") else cand["site"]
            try:
                await run_round(ctx, site, cand)
            except Exception:  # a bad round must not stop the agent; the next window retries
                log.exception("validation round of %s failed", site)


async def run_round(ctx: WorkerContext, site: str, cand) -> None:
    """One round in the worker: its rule sets go to the rules topic, its progress to the dashboard."""
    async def publish(site: str, value: RuleSet | None) -> None:
        await ctx.topics.rules.send(key=site.encode(), value=value)

    def held_version(site: str) -> int | None:
        """The version this worker's rule book holds (read from the rules topic)."""
        sr = ctx.book.sites.get(site)
        return sr.version if sr is not None else None

    rounds = ctx.dashboard.rounds if ctx.dashboard is not None else None
    track = rounds.begin(site, cand) if rounds is not None else None
    result: object = RuntimeError("round failed")
    try:
        result = await validation_round(site, cand, ctx.settings, ctx.verdicts, publish, ctx.metrics, held_version,
                                        track)
    finally:
        if track is not None:
            rounds.end(track, result)


@dataclass
class SiteValidation:
    """One site's validation: Figure 4's verdicts, then the set-level checks of the result."""

    rules: list[Rule]  #: what passed every check, in canonization order
    result: ValidationResult
    setcheck: SetCheck
    fetch_outcomes: dict[str, int]
    seconds: float

    @property
    def fetches(self) -> int:
        return self.result.fetches + self.setcheck.fetches

    def stats(self, candidates: int) -> dict:
        decided = sum(1 for v in self.result.verdicts if v.valid is not None and v.reason != "cached")
        return {"candidates": candidates, "valid": len(self.rules), "fetches": self.fetches, "decided": decided,
                "cached": sum(1 for v in self.result.verdicts if v.reason == "cached"),
                "fetches_per_decided_rule": round(self.fetches / decided, 1) if decided else None,
                "fetch_outcomes": self.fetch_outcomes, "dropped_refinements": len(self.result.dropped_refinements),
                "undecided": sum(1 for v in self.result.verdicts if v.valid is None),
                "set_check": self.setcheck.stats(), "seconds": round(self.seconds, 3)}


def canonization_order(rules: list[Rule]) -> list[Rule]:
    """Parameter rules first (they normalise the query), then substring rules in rank order."""
    return [r for r in rules if isinstance(r, ParamRule)] + [r for r in rules if not isinstance(r, ParamRule)]


async def validate_site(pairs: list[Pair], params: list[ParamRule], test_urls: list[str], policy: FetchPolicy,
                        settings, cache=None, previous: list[Rule] = (), on_verdict=None,
                        track=None) -> SiteValidation | None:
    """Figure 4 over the candidates, the previous rules whose verdict is now undecided kept (only a
    refutation removes a rule), then the set-level checks (dustbuster.core.setcheck).  None when the site does
    not answer at all (an outage decides nothing).  The validator agent and ``dustbuster validate``
    both run this.  ``track`` (the dashboard's LiveRound) follows the fetch counts and verdicts live."""
    t0 = time.perf_counter()
    async with Fetcher(policy) as fetcher:
        if track is not None:
            track.watch(fetcher.counts)
            on_verdict = track.chain(on_verdict)
        # an outage decides nothing: if no origin answers its front page, keep the rule set as it is
        fronts = [await fetcher.fetch(o + "/") for o in sorted(policy.origins)[:4]]
        if not any(f.ok or (f.status or 0) == 404 for f in fronts):
            log.warning("site unreachable (%s)", sorted({f.reason for f in fronts}))
            return None
        rf = RoundFetcher(SoftErrorAware(fetcher, settings.sketch_threshold))
        res = await validate(pairs, params, test_urls, rf, settings.params, min_equal=settings.sketch_threshold,
                             cache=cache, on_verdict=on_verdict)
        kept = carried_over(previous, (v.rule.text for v in res.verdicts if v.valid is None), res.valid)
        sc = await check_rule_set(canonization_order(res.valid + kept), test_urls, rf, settings.params,
                                  min_equal=settings.sketch_threshold)
        counts = dict(fetcher.counts)
    for r, why in sc.dropped:
        log.debug("set-level check dropped %s: %s", r.text, why)
    return SiteValidation(sc.rules, res, sc, counts, time.perf_counter() - t0)


class RoundProgress:
    """Logs a validation round's progress in plain words, at most every ``every_s`` seconds."""

    def __init__(self, site: str, total: int, every_s: float = 10.0) -> None:
        self.site, self.total, self.every_s = site, total, every_s
        self.t0 = self.last = time.monotonic()
        self.counts = {"valid": 0, "invalid": 0, "undecided": 0, "cached": 0}
        self.fetches = 0

    def __call__(self, v) -> None:
        self.counts["cached" if v.reason == "cached" else "undecided" if v.valid is None
                    else "valid" if v.valid else "invalid"] += 1
        self.fetches += v.fetches
        now = time.monotonic()
        if now - self.last >= self.every_s:
            self.last = now
            log.info("%s: validation: %s of %s rules decided (%s valid so far), %s pages fetched (%.0f/s)",
                     self.site, sum(self.counts.values()), self.total, self.counts["valid"], self.fetches,
                     self.fetches / max(now - self.t0, 1e-6))

    def finished(self, sv: "SiteValidation") -> None:
        c = self.counts
        log.info("%s: validation round done in %.0fs: %s valid, %s invalid, %s undecided, %s from the cache; "
                 "set check %s (%s rules dropped); %s pages fetched", self.site, time.monotonic() - self.t0,
                 c["valid"], c["invalid"], c["undecided"], c["cached"],
                 {True: "passed", False: "refuted", None: "undecided"}[sv.setcheck.passed], len(sv.setcheck.dropped),
                 sv.fetches)


def decode_candidates(site: str, cand) -> tuple[list[Pair], list[ParamRule]]:
    pairs, params = [], []
    for rj in list(cand.rules) + list(cand.param_rules):
        try:
            r = rule_from_json(rj)
        except RuleError as exc:
            log.warning("skipping a bad candidate rule of %s: %s", site, exc)
            continue
        if isinstance(r, SubstringRule):
            pairs.append(Pair(r.alpha, r.beta, r.support, r.support_high))
        else:
            params.append(r)
    return pairs, params


def _previous_rules(prev: dict | None) -> list[Rule]:
    out = []
    for rj in (prev or {}).get("rules", []):
        try:
            out.append(rule_from_json(rj))
        except RuleError:
            continue
    return out


async def validation_round(site: str, cand, settings: Settings, verdicts: VerdictStore, publish,
                           metrics=None, held_version=None, track=None):
    """One validation round of a site's candidate set; ``publish(site, RuleSet | None)`` sends a
    new version (or a tombstone) when the list of valid rules changed.  Returns what was sent
    (a RuleSet, None for a tombstone) or ``"unchanged"`` / ``"unconfigured"``."""
    pairs, params = decode_candidates(site, cand)
    policy = site_policy(settings, site)
    if policy is None:
        if site not in _told_unconfigured:  # once per site: its candidates wait unvalidated
            _told_unconfigured.add(site)
            log.info("%s: not in DUST_VALIDATOR_SITES: its rules are not validated (nothing is fetched)", site)
        return "unconfigured"
    prev = verdicts.ruleset(site)
    log.info("%s: validation round of window %s: %s candidate rules, %s test URLs", site, cand.window,
             len(pairs) + len(params), len(cand.test_urls))
    progress = RoundProgress(site, len(pairs) + len(params))
    sv = await validate_site(pairs, params, list(cand.test_urls), policy, settings,
                             _SiteCache(verdicts, site, settings.verdict_ttl_s), _previous_rules(prev), progress, track)
    if sv is None:
        log.warning("%s: site unreachable; rule set kept", site)
        return UNCHANGED
    count_verdicts(metrics, sv)
    verdicts.set_candidates(site, cand.to_representation() if hasattr(cand, "to_representation") else dict(cand))
    now = round(time.time(), 3)
    rules = [r.to_json() | {"validated_at": now} for r in sv.rules]
    progress.finished(sv)
    decision = decide_version(Published.from_json(prev), [r["display"] for r in rules],
                              held_version(site) if held_version else None)
    return await send_decision(site, decision, rules, sv.stats(len(pairs) + len(params)) | {"window": cand.window},
                               verdicts, publish, metrics)


def count_verdicts(metrics, sv: SiteValidation) -> None:
    """A round's fetches by outcome and its fresh verdicts (not the cached ones) in the metrics."""
    if metrics is None:
        return
    for outcome, n in sv.fetch_outcomes.items():
        metrics.fetches.labels(outcome).inc(n)
    for v in sv.result.verdicts:
        if v.reason != "cached":
            metrics.validations.labels("undecided" if v.valid is None else "valid" if v.valid else "invalid").inc()


async def send_decision(site: str, decision: VersionDecision, rules: list[dict], stats: dict, verdicts: VerdictStore,
                        publish, metrics=None):
    """Publish what :func:`decide_version` decided and remember it as the site's last published set."""
    sig = [r["display"] for r in rules]
    if decision.action == UNCHANGED:
        log.info("%s: rule set unchanged (%s rules)", site, len(rules))
        return UNCHANGED
    rs = None
    if decision.action == TOMBSTONE:  # the site has no valid rule any more: remove it
        await publish(site, None)
        log.warning("%s: no valid rules any more: tombstone published", site)
    else:
        rs = RuleSet(site=site, version=decision.version, created=time.time(), rules=rules, stats=stats)
        await publish(site, rs)
        log.info("%s: published rule set v%s: %s valid rules", site, decision.version, len(rules))
    verdicts.set_ruleset(site, {"version": decision.version, "sig": sig, "rules": rules if rs is not None else []})
    if metrics is not None:
        metrics.rules_published.inc()
    return rs
