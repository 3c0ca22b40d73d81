"""The validator agent: candidate sets in, rules fetched and decided (Figures 3–4), versioned rule
sets out on the compacted rules topic (key = site).  A site's rule set changes only when a
verdict changes (dustbuster.core.model.ruleversion decides), and each new version says what changed
and why (``stats["changes"]``).

The validator goes quiet once a site's evidence is decided (ours, beyond the papers, which
validate once):

* verdicts are kept (state/verdicts.py): valid and refuted ones for DUST_VERDICT_TTL_S, undecided
  ones for a back-off that doubles with each undecided try (DUST_UNDECIDED_RETRY_S at first);
* a round runs only when the candidates changed (another rule list: :func:`candidates_key`) or a
  verdict the last round used expired; otherwise the candidate set is only kept (its test URLs
  serve the next round) and nothing is fetched (``dust_validation_rounds_skipped_total``);
* each site's fetches go through one pacer for as long as the worker runs (fetch/pacer.py): the
  sites file's ``rate_per_s`` for the whole site across rounds, and at most
  DUST_VALIDATOR_FETCHES_PER_HOUR fetches in any hour (``dust_validator_fetch_budget_left``)."""

from __future__ import annotations

import asyncio
import hashlib
import json
import logging
import time
from dataclasses import dataclass
from typing import Any, Awaitable, Callable, Sequence, cast

from dustbuster.core.errors import ParseError, RuleError, StreamError
from dustbuster.core.validation.fetched import MAX_ROUND_LINKS
from dustbuster.core.model.rules import Rule, SubstringRule, rule_from_json
from dustbuster.core.model.signing import sign_document
from dustbuster.core.model.ruleversion import TOMBSTONE, UNCHANGED, Published, VersionDecision, decide_version
from dustbuster.fetch.pacer import SitePacer
from dustbuster.sitevalidation import SiteCandidates, SiteValidation, check_site_policies, site_policy, validate_site
from dustbuster.state.verdicts import VerdictStore
from dustbuster.stream.fit import budget
from dustbuster.stream.records import CandidateSet, RuleSet, candidates_from_json, decode_candidates, encode
from dustbuster.stream.rulesview import OFF_LOOP_BYTES
from dustbuster.stream.settings import Settings

from .context import WorkerContext, stop_at_shutdown
from .listedlinks import LinkSender
from .rounds import RoundRunner

log = logging.getLogger(__name__)


class _SiteCache:
    """One site's verdicts in the store (core/validation/round.py VerdictCache): valid and refuted
    for ``ttl_s``, undecided ones for their back-off (from ``retry_s``).  ``keys``: every key the
    round asked for or stored (what :func:`round_needed` checks next time: the candidates' texts,
    not those of the rules narrowed from them).  With ``pacer``, an undecided verdict reached once
    the site's fetch budget was spent is not kept: nothing was tried, so no back-off grows."""

    def __init__(self, store: VerdictStore, site: str, ttl_s: float, retry_s: float,
                 pacer: SitePacer | None = None) -> None:
        self.store, self.site, self.ttl, self.retry, self.pacer = store, site, ttl_s, retry_s, pacer
        self.keys: set[str] = set()

    def get(self, key: str) -> dict | None:
        self.keys.add(key)
        return self.store.get(self.site, key, self.ttl)

    def put(self, key: str, verdict: dict) -> None:
        self.keys.add(key)
        if verdict.get("valid") is None and self.pacer is not None and self.pacer.left() == 0:
            return  # undecided for want of budget: asked again once the budget allows
        self.store.put(self.site, key, verdict, self.retry, self.ttl)


def candidates_key(cand) -> str:
    """What identifies a candidate set for validation: its rules (type and text), not their
    supports, the window or the test URLs, which change with every line and decide nothing."""
    seen = sorted({(str(r.get("type", "substring")), str(r.get("display", ""))) for r in cand.rules
                   if isinstance(r, dict)})
    return hashlib.sha256(json.dumps(seen).encode()).hexdigest()[:32]


def round_needed(verdicts: VerdictStore, cache: "_SiteCache", site: str, key: str) -> str | None:
    """Why the site needs a round now (its candidates changed, or a verdict its last round used
    expired), or None: the last round decided these candidates and all its verdicts still hold."""
    done = verdicts.last_round(site)
    if done is None or done.get("key") != key:
        return "new candidates"
    expired = [k for k in done.get("verdicts", []) if cache.get(k) is None]
    return f"{len(expired)} verdicts expired" if expired else None


def register(ctx: WorkerContext) -> None:
    """The ``dust-validator`` agent on the candidates topic, and the ``dust-revalidate`` timer."""
    check_site_policies(ctx.settings)
    assert ctx.verdicts is not None, "the validator needs DUST_VALIDATE"
    if ctx.settings.signing_key is None:  # read now: a bad key file stops the worker at start (ConfigError)
        log.warning("DUST_SIGN_KEY_FILE is not set: rule sets are published unsigned, and consumers with "
                    "DUST_TRUSTED_KEYS will refuse them")

    links = LinkSender(ctx.topics.raw, ctx.settings, ctx.metrics) if ctx.settings.validator_links else None
    runner = RoundRunner(lambda site, cand: run_round(ctx, site, cand, links), ctx.settings.partitions)
    stop_at_shutdown(ctx.app, runner)  # a stop cancels the rounds (agents/rounds.py)
    topic = ctx.settings.candidates_topic

    async def on_assigned(sender: Any, /, assigned: Any = (), *_args: Any, **_kw: Any) -> None:
        runner.assigned({tp.partition for tp in assigned if tp.topic == topic})

    ctx.app.on_partitions_assigned.connect(on_assigned)

    @ctx.app.timer(revalidate_every(ctx.settings), name="dust-revalidate")
    async def revalidate() -> None:
        """Rules are re-validated on a schedule even when a site sends no new candidates: the
        sites this worker owns whose verdicts expired (past their TTL, or an undecided one's
        back-off) get a round of their last candidate set; a rule that stopped holding is dropped."""
        await revalidate_due(ctx, runner)

    @ctx.app.agent(ctx.topics.candidates, name="dust-validator")
    @ctx.health.agent("dust-validator")
    async def validator(stream):
        # each set goes to the round runner, and its event is acknowledged at once: a round never
        # holds a rebalance or a stop (agents/rounds.py)
        async for value in ctx.health.track("dust-validator", stream):
            cand = await decode_candidate_message(ctx, value)
            if cand is not None:
                runner.submit(cand.site, cand)


def revalidate_every(settings: Settings) -> float:
    """The revalidation timer's period: often enough for the undecided verdicts' first back-off
    (DUST_UNDECIDED_RETRY_S), at most a quarter of the TTL, never under a window."""
    return max(settings.window_s, min(settings.verdict_ttl_s / 4, settings.undecided_retry_s))


async def revalidate_due(ctx: WorkerContext, runner: RoundRunner) -> int:
    """Submit a round of each site this worker owns whose last candidate set needs one
    (:func:`round_needed`: new candidates never decided, or a verdict expired).  Reads each site's
    candidates key, and its candidate set only when a round is due.  Returns the rounds submitted."""
    assert ctx.verdicts is not None, "the validator needs DUST_VALIDATE"
    verdicts, settings, n = ctx.verdicts, ctx.settings, 0
    for k, (site, key) in enumerate(verdicts.candidate_keys()):
        if k % 200 == 199:
            await asyncio.sleep(0)  # thousands of sites: the loop stays free
        if not runner.owns(site) or runner.busy(site):
            continue
        cache = _SiteCache(verdicts, site, settings.verdict_ttl_s, settings.undecided_retry_s)
        if round_needed(verdicts, cache, site, key) is None:
            continue
        raw = verdicts.candidates(site)
        if raw is None:
            continue
        try:
            runner.submit(site, candidates_from_json(raw))  # old stored sets too
            n += 1
        except Exception:  # a stored set that no longer decodes: logged, the others go on
            log.exception("re-validation of %s failed", site)
    return n


async def decode_candidate_message(ctx: WorkerContext, value: bytes | None) -> CandidateSet | None:
    """A candidates-topic message decoded strictly (stream/records.py), a big one on a thread; junk or
    a value over DUST_MAX_RECORD_BYTES is a counted, logged skip (None), never parsed on the loop."""
    try:
        if value is not None and len(value) > ctx.settings.max_record_bytes:
            raise ParseError("oversized", f"a value of {len(value)} bytes > {ctx.settings.max_record_bytes}")
        if value is not None and len(value) > OFF_LOOP_BYTES:
            return await asyncio.to_thread(decode_candidates, value)
        return decode_candidates(value)
    except ParseError as exc:
        ctx.metrics.rejects.labels(exc.reason).inc()
        log.warning("skipping a candidates message: %s", exc)
        return None


async def run_round(ctx: WorkerContext, site: str, cand, links: LinkSender | None = None) -> None:
    """One round in the worker: its rule sets go to the rules topic, its progress to the dashboard,
    the links of its fetched pages to ``links`` (the raw topic; None: DUST_VALIDATOR_LINKS=false)."""
    async def publish(site: str, value: RuleSet | None) -> None:
        size = 0 if value is None else len(encode(value))
        if size > budget(ctx.settings.max_message_bytes):  # never a send that raises (stream/fit.py)
            ctx.metrics.send_failures.labels("rules", "too_large").inc()
            raise StreamError(f"the rule set of {site} is {size} bytes, over DUST_MAX_MESSAGE_BYTES="
                              f"{ctx.settings.max_message_bytes}: not published (the previous version stays)")
        await ctx.topics.rules.send(key=site.encode(), value=value)

    def held_version(site: str) -> int | None:
        """The version this worker's rule book holds (read from the rules topic)."""
        sr = ctx.book.sites.get(site)
        return sr.version if sr is not None else None

    assert ctx.verdicts is not None, "the validator needs DUST_VALIDATE"
    pacer = site_pacer(ctx, site)
    rounds = ctx.dashboard.rounds if ctx.dashboard is not None else None
    track = rounds.begin(site, cand) if rounds is not None else None
    result: object = RuntimeError("round failed")
    try:
        result = await validation_round(site, cand, RoundParts(ctx.settings, ctx.verdicts, publish, ctx.metrics,
                                                               held_version, track, ctx.told_unconfigured, links,
                                                               pacer))
    except asyncio.CancelledError:
        result = "cancelled"  # the worker stops, or the site's partition went to another worker
        raise
    finally:
        if rounds is not None and track is not None:  # a track only with the dashboard's rounds
            rounds.end(track, result)
        if pacer is not None:
            show_budget(ctx, site, pacer)


def site_pacer(ctx: WorkerContext, site: str) -> SitePacer | None:
    """The site's pacer, made at its first round and kept (fetch/pacer.py); None for a site not
    in the sites file (nothing is fetched)."""
    pacer = ctx.pacers.get(site)
    if pacer is None:
        policy = site_policy(ctx.settings, site)
        if policy is None:
            return None
        pacer = ctx.pacers[site] = SitePacer(policy.rate_per_s, ctx.settings.validator_fetches_per_hour)
    return pacer


def show_budget(ctx: WorkerContext, site: str, pacer: SitePacer) -> None:
    """The site's fetch budget in the metrics and on the dashboard."""
    left = pacer.left()
    ctx.metrics.fetch_budget_left.labels(site).set(left if left is not None else -1)
    if ctx.dashboard is not None:
        ctx.dashboard.budgets[site] = {"per_hour": pacer.per_hour, "used_last_hour": pacer.used(), "left": left,
                                       "refused": pacer.refused}


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


def candidate_rules(site: str, cand) -> tuple[list[SubstringRule], list[Rule]]:
    """The rules of a candidate set (its one ``rules`` list): the ones Figure 4 tries both ways (the
    substring rules, the likely pairs; ``RuleType.reversible``) and the others (parameter, query,
    case, pattern and every registered type: docs/rules.md); a rule that does not decode is logged
    and skipped."""
    pairs: list[SubstringRule] = []
    others: list[Rule] = []
    for rj in cand.rules:
        try:
            r = rule_from_json(rj)
        except RuleError as exc:
            log.warning("skipping a bad candidate rule of %s: %s", site, exc)
            continue
        if r.reversible:
            pairs.append(cast(SubstringRule, r))  # the reversible type: the substring rule (core/model/rules.py)
        else:
            others.append(r)
    return pairs, others


def _previous_rules(prev: dict | None) -> list[Rule]:
    out = []
    for rj in (prev or {}).get("rules", []):
        try:
            out.append(rule_from_json(rj))
        except RuleError:
            continue
    return out


@dataclass
class RoundParts:
    """What a validation round of the agent works with beside the candidate set: the settings, the
    verdict store, ``publish(site, RuleSet | None)`` (sends a new version, or a tombstone), the
    metrics, ``held_version(site)`` (the version this worker's rule book holds), the dashboard's
    track of the round, ``told`` (the sites already said to be unconfigured: said once per site),
    ``links(site, links, test_urls)``, which gets the links of the pages the round fetched
    (agents/listedlinks.py) after the decision is sent, and the site's ``pacer``."""

    settings: Settings
    verdicts: VerdictStore
    publish: Callable[[str, RuleSet | None], Awaitable[None]]
    metrics: Any = None
    held_version: Callable[[str], int | None] | None = None
    track: Any = None
    told: set[str] | None = None
    links: Callable[[str, Sequence[str], list[str]], Awaitable[object]] | None = None
    pacer: SitePacer | None = None  #: the site's rate and fetch budget across rounds (fetch/pacer.py)


async def validation_round(site: str, cand, parts: RoundParts):
    """One validation round of a site's candidate set: a new version is published when the list of
    valid rules changed.  Returns what was sent (a RuleSet, None for a tombstone) or
    ``"unchanged"``, ``"unconfigured"``, ``"skipped"`` (no round: the candidates are decided and no
    verdict expired, :func:`round_needed`) or ``"fetch_budget"`` (no round: the site's fetches of the
    last hour reached DUST_VALIDATOR_FETCHES_PER_HOUR)."""
    settings, verdicts, metrics, told = parts.settings, parts.verdicts, parts.metrics, parts.told
    pairs, params = candidate_rules(site, cand)
    policy = site_policy(settings, site)
    if policy is None:
        if told is None or site not in told:  # once per site: its candidates wait unvalidated
            if told is not None:
                told.add(site)
            log.info("%s: not in DUST_VALIDATOR_SITES: its rules are not validated (nothing is fetched)", site)
        return "unconfigured"
    prev = verdicts.ruleset(site)
    cache = _SiteCache(verdicts, site, settings.verdict_ttl_s, settings.undecided_retry_s, parts.pacer)
    key = candidates_key(cand)
    stored = cand.to_representation() if hasattr(cand, "to_representation") else dict(cand)
    why = round_needed(verdicts, cache, site, key)
    cache.keys.clear()  # from here on: the keys the round itself uses
    if why is None:  # decided, and nothing expired: the newest test URLs kept for the next round
        verdicts.set_candidates(site, stored, key)
        if metrics is not None:
            metrics.rounds_skipped.labels("decided").inc()
        log.debug("%s: window %s: candidates unchanged and decided: no round", site, cand.window)
        return "skipped"
    verdicts.set_candidates(site, stored, key)  # kept before the round: a cancelled round loses no set
    left = parts.pacer.left() if parts.pacer is not None else None
    if parts.pacer is not None and left is not None and left < min(MIN_ROUND_BUDGET, parts.pacer.per_hour):
        if metrics is not None:
            metrics.rounds_skipped.labels("fetch_budget").inc()
        log.warning("%s: no validation round: %s fetches in the last hour (DUST_VALIDATOR_FETCHES_PER_HOUR)", site,
                    parts.pacer.used())
        return "fetch_budget"
    log.info("%s: validation round of window %s (%s): %s candidate rules, %s test URLs", site, cand.window, why,
             len(pairs) + len(params), len(cand.test_urls))
    progress = RoundProgress(site, len(pairs) + len(params))
    sv = await validate_site(SiteCandidates(pairs, params, list(cand.test_urls), previous=_previous_rules(prev),
                                            logged_errors=list(cand.error_urls)), policy, settings,
                             cache, progress, parts.track, parts.pacer)
    rules, stats = [], {}
    if sv is not None:  # None: an outage, which decide_version keeps as it is
        count_verdicts(metrics, sv)
        verdicts.set_round(site, {"key": key, "window": cand.window, "verdicts": sorted(cache.keys)})
        now = round(time.time(), 3)
        rules = [r.to_json() | {"validated_at": now} for r in sv.rules]
        progress.finished(sv)
        stats = sv.stats(len(pairs) + len(params)) | {"window": cand.window}
    decision = decide_version(Published.from_json(prev), None if sv is None else [r["display"] for r in rules],
                              parts.held_version(site) if parts.held_version else None, now_ms=int(time.time() * 1000))
    if sv is not None and decision.action != UNCHANGED:
        stats["changes"] = version_changes(prev, rules, sv)
    sent = await send_decision(site, decision, rules, stats, verdicts, parts.publish, metrics, settings.signing_key)
    if parts.links is not None and sv is not None:
        if sv.links_over_cap:
            log.info("%s: %s links of fetched pages left out (a round keeps %s)", site, sv.links_over_cap,
                     MAX_ROUND_LINKS)
        await parts.links(site, sv.links, list(cand.test_urls))
    return sent


#: a round starts only with at least this many fetches left in the site's hourly budget
MIN_ROUND_BUDGET = 50
#: rules listed by name in a version's ``changes`` (beyond them, counted)
MAX_CHANGES_LISTED = 50


def version_changes(prev: dict | None, rules: list[dict], sv: SiteValidation) -> dict:
    """What a new version changes against the one published before, and why: each rule added
    (valid this round) and removed, with its verdict's reason (refuted, or dropped by the set-level
    check and why; ``no_longer_a_candidate`` when no verdict of the round names it)."""
    before = list((prev or {}).get("sig", []))
    now = [r["display"] for r in rules]
    added = [d for d in now if d not in set(before)]
    removed = [d for d in before if d not in set(now)]
    why: dict[str, str] = {}
    for v in sv.result.verdicts:
        why[v.rule.text] = "refuted" + (f" ({v.reason})" if v.reason else "") if v.valid is False else \
            "undecided" if v.valid is None else "valid"
    for r, reason in sv.setcheck.dropped:
        why[r.text] = f"set check: {reason}"
    return {"added": added[:MAX_CHANGES_LISTED], "removed": [{"rule": d, "why": why.get(d, "no_longer_a_candidate")}
                                                            for d in removed[:MAX_CHANGES_LISTED]],
            "added_count": len(added), "removed_count": len(removed), "previous_version": (prev or {}).get("version")}


def signed_record(rs: RuleSet, key) -> RuleSet:
    """``rs`` with its signature (dustbuster.core.model.signing) over the record as it goes on the wire
    (Faust's representation, whose ``__faust`` field the signature leaves out); ``rs`` without a key."""
    if key is not None:
        rs.signature = sign_document(rs.to_representation(), key)["signature"]
    return rs


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
                        publish, metrics=None, key=None):
    """Publish what :func:`decide_version` decided and remember it as the site's last published set;
    with ``key`` (DUST_SIGN_KEY_FILE's), the set is signed (:func:`signed_record`)."""
    sig = [r["display"] for r in rules]
    if decision.action == UNCHANGED:
        if decision.why == "outage":
            log.warning("%s: site unreachable; rule set kept", site)
        else:
            log.info("%s: rule set unchanged (%s rules)", site, len(rules))
        return UNCHANGED
    rs = None
    if decision.action == TOMBSTONE and key is None:  # the site has no valid rule any more: remove it
        await publish(site, None)
        log.warning("%s: no valid rules any more: tombstone published", site)
    elif decision.action == TOMBSTONE:
        # consumers with trusted keys refuse a tombstone (it cannot be signed): a signed set with
        # no rules removes them, and keeps the version so no older signed set can come back
        rs = signed_record(RuleSet(site=site, version=decision.version or 0, created=time.time(), rules=[],
                                   stats=stats), key)
        await publish(site, rs)
        log.warning("%s: no valid rules any more: a signed set with no rules published (v%s)", site, rs.version)
    else:
        rs = signed_record(RuleSet(site=site, version=decision.version, created=time.time(), rules=rules,
                                   stats=stats), key)
        await publish(site, rs)
        log.info("%s: published rule set v%s: %s valid rules", site, decision.version, len(rules))
    verdicts.set_ruleset(site, {"version": decision.version, "sig": sig, "rules": rules if rs is not None else []})
    if metrics is not None:
        metrics.rules_published.inc()
    return rs
