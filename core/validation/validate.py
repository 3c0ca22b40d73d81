"""Phase 4: validating likely rules by fetching sample pages (WWW 2007 §5.3, Figures 3 and 4;
thesis §5.4).  Pure logic: the pages come from a ``fetch`` coroutine the caller provides (the
validator agent fetches over HTTP with its politeness and safety policy; tests pass a function).

ValidateRule (Figure 3): draw URLs of the test list on which the rule changes the URL; fetch u and
v = R(u); u failed → skip it; v failed or not similar → a negative; similar → a positive; stop at
(1 − ε)N positives (valid) or εN negatives (invalid).  Validate (Figure 4): pairs in order, each
tried in its shrinking direction first and in the other only if that was *refuted* (not when it
was undecided); a pair that refines a rule already found valid is dropped before any fetch;
parameter rules go through Figure 3.  Before any fetch, a rule that feeds itself (α empty or in β)
is invalid, and so is an expanding rule whose outputs on the test list are mostly URLs never
observed (:mod:`dustbuster.core.canon.rulecheck`).  The set of valid rules as a whole is then checked by
:func:`dustbuster.core.validation.setcheck.check_rule_set`.

Choices (docs/validation.md):
* URLs are drawn without replacement (a URL is never used twice for one rule), in an order fixed by
  ``seed``; a round's fetches are cached, so no URL is fetched twice in one round;
* when the applicable URLs run out before either bound, the rule is valid if at least
  ``min_samples`` (10) comparisons were made and fewer than ε of them were negative, invalid if ε
  or more were negative, else undecided (``valid = None``: not published; tried again later);
* a rule may use at most ``max_fetch_factor``·N fetches (4N): beyond, it is undecided; so is a rule
  whose first max(10, 2εN) pairs were all skipped (``u_unreachable``: u failed — the site is down,
  nothing is decided in an outage — or every v redirected to u's page, which is no evidence).

Beyond the paper (docs/validation.md): parameter, query and case rules first, then the pairs, then
pattern rules; a candidate the valid rules already cover is dropped unfetched (:func:`covered_by`);
pages fetched already are drawn first (:func:`sample_order`), the draw stratified by URL family and
a rule undecided when a family holding a share of its URLs shows too few positives
(:mod:`dustbuster.core.urls.families`); "equal today" (:mod:`dustbuster.core.model.evidence`): positives must show
several different pages, and a value-mapping rule's verdict expires after TTL/4.
"""

from __future__ import annotations

import dataclasses
import logging
from dataclasses import dataclass, field
from typing import Callable, Sequence, cast

from dustbuster.core.canon.coverage import Coverage, apply_rule, covered_by
from dustbuster.core.errors import RuleError
from dustbuster.core.urls.scope import make_scope, split_url
from dustbuster.core.model.pair import Pair
from dustbuster.core.params import DustParams
from dustbuster.core.mining.refine import pair_refines
from dustbuster.core.model.rules import ParamRule, Rule, SubstringRule, canonization_order
from dustbuster.core.model.scopedrules import QueryRule
from dustbuster.core.canon.rulecheck import self_feeding, unobserved_output
from dustbuster.core.validation.sketch import Sketch
from dustbuster.core.model.evidence import min_distinct_pages, ttl_factor
from dustbuster.core.validation.fetched import NO_EVIDENCE, POSITIVE, UNSTABLE, Fetch, Fetched, RoundFetcher, compare_pages, signal as _signal, transient
from dustbuster.core.validation.paramstrata import evidence_strata
from dustbuster.core.validation.narrow import (NARROWINGS, applicable, keep_names, kept_after_refutation, narrow_verdict, narrowed, refuted_by,
                     stale_keep)
from dustbuster.core.canon.urlreach import round_reach
from dustbuster.core.canon.canonize import canonical
from dustbuster.core.validation.onepage import OnePage, one_page_capable, one_page_of
from dustbuster.core.validation.draw import sample_order
from dustbuster.core.validation.madesamples import MadeSamples
from dustbuster.core.validation.round import Rewrite, Round, VerdictCache
from dustbuster.core.validation.verdict import Verdict, cached_verdict as _cached_verdict, count_outcome as _count, decide as _decide

log = logging.getLogger(__name__)


async def validate_rule(rule: Rule, rnd: Round, seed: int = 0, canon: Callable[[str], str] | None = None) -> Verdict:
    """Figure 3 for one rule, in round ``rnd`` (its test URLs, fetcher and parameters); ``seed``
    fixes the draw.  With the round's ``reach`` (core/canon/urlreach.py) the applicable URLs and
    their outputs are found among the test URLs holding the rule's key only, once (the same list
    and the same outputs).  A remove rule whose scope holds one page may be decided on that page
    (core/validation/onepage.py); ``canon``: the canonical form of a URL under the rules found
    valid, by which that page is named (:func:`_one_page_again`).  A refutation pinned on
    parameters no positive tested is tried again on the narrowed rule (core/validation/narrow.py).
    A remove rule left ``uninformative`` whose every changed test URL has one path is tried again
    under that path (:func:`evidence_scope`: the evidence reaches that page and no further), in the
    extended language only: the papers' language has no scopes (a ``--language paper`` set holds
    substring and global parameter rules, thesis §5.3)."""
    v = await _validate_rule(rule, rnd, seed, canon)
    if v.valid is not None or v.reason != "uninformative" or rnd.params.language != "extended":
        return v
    scope = evidence_scope(v.rule, rnd)
    if scope is None:
        return v
    try:
        page_rule = dataclasses.replace(cast(ParamRule, v.rule), scope=scope)
    except RuleError:
        return v
    tried = await _validate_rule(page_rule, rnd, seed, canon)
    tried.fetches += v.fetches
    if tried.valid is None:
        return v
    rnd.fetch.count("narrowed_to_its_page" + (":valid" if tried.valid else ""))
    tried.one_page = dict(tried.one_page) | {"scope": scope, "from_scope": cast(ParamRule, v.rule).scope}
    return tried


#: characters a scope's fixed name or value cannot hold (core/urls/scope.py)
_UNSCOPABLE = frozenset("&=?#/ ")


def evidence_scope(rule: Rule, rnd: Round) -> str | None:
    """The one path of every test URL a remove rule changes, with the items all of them hold (a
    selector: ``title=Special:UserLogin``), when its scope is wider than that (a global
    ``remove q=*`` whose parameter the test list shows on ``/search.html`` alone): the scope its
    evidence can reach (ours: nothing beyond the evidence); None otherwise."""
    if not isinstance(rule, ParamRule) or rule.action != "remove" or "?" in rule.scope:
        return None
    changed = [u for u, _ in rnd.reach.changes(rule)] if rnd.reach is not None else \
        [u for u in rnd.test_urls if apply_rule(rule, u) != u]
    paths = {split_url(u)[1] for u in changed}
    if len(paths) != 1:
        return None
    (path,) = paths
    if not path or "?" in path:
        return None
    common: set[tuple[str, str]] | None = None  # the items every changed URL holds: a selector the evidence fixes
    for u in changed:
        items = {(n, v) for n, _, v in (it.partition("=") for it in split_url(u)[2][1:].split("&") if "=" in it)
                 if n != rule.name and n and not _UNSCOPABLE & set(n + v)}
        common = items if common is None else common & items
    scope = make_scope(path, sorted(common)) if common else path
    return scope if scope != rule.scope else None


async def _validate_rule(rule: Rule, rnd: Round, seed: int, canon: Callable[[str], str] | None) -> Verdict:
    """:func:`validate_rule` before the narrowing to the evidence's page."""
    first = v = await _figure3(rule, rnd, seed, canon)
    for _ in range(NARROWINGS):
        if not v.refuted_by:
            break
        kept = kept_after_refutation(v.refuted_by, v.negative_urls)
        again = narrowed(v.rule, keep_names(kept))
        assert again is not None  # refuted_by is {} for a rule that cannot be narrowed
        tried = await _figure3(again, rnd, seed, canon)
        tried.fetches += v.fetches
        tried.untested = [*(x for x in v.untested if x.get("kept")), *kept, *tried.untested]
        v = tried
        if tried.valid:
            break
    if v is first:
        return first
    rnd.fetch.count("narrowed_after_refutation" + (":valid" if v.valid else ""))
    if v.valid:
        return v
    # the narrowed rules were refuted or undecided: the candidate's refutation stands, with what was tried
    first.fetches, first.refuted_by = v.fetches, {}
    first.narrowing = {"rule": v.rule.text, "valid": v.valid, "reason": v.reason, "positives": v.positives,
                       "negatives": v.negatives}
    return first


async def _figure3(rule: Rule, rnd: Round, seed: int, canon: Callable[[str], str] | None) -> Verdict:
    """:func:`validate_rule` without the narrowing after a refutation."""
    changed, rewrite = None, lambda u: apply_rule(rule, u)
    if rnd.reach is not None:
        outs = dict(rnd.reach.changes(rule))
        changed, rewrite = list(outs), lambda u: outs[u] if u in outs else apply_rule(rule, u)
    page = one_page_of(rule, rewrite, rnd.test_urls, canon)
    one_page = OnePage(page, cast(ParamRule, rule).name) if page is not None else None  # one_page_capable
    target = Rewrite(rule, rewrite, min_distinct_pages(rule), getattr(rule, "scope", ""), changed, one_page)
    return await validate_rewrite(rnd, target, seed)


async def validate_rewrite(rnd: Round, target: Rewrite, seed: int = 0, failures: list[str] | None = None) -> Verdict:
    """Figure 3 for any URL rewrite: one rule (``validate_rule``) or a whole canonicalizer (the set-level
    check of :mod:`dustbuster.core.validation.setcheck`).  ``failures`` (if given) gets the u whose v was a negative.

    Beyond the paper: v reached only through a redirect is never a positive (core/validation/fetched.py
    ``compare_pages``: a rule whose output redirects is not the page).  The draw is stratified
    by URL family and parameter (core/validation/paramstrata.py); too few positives in one is ``partial_evidence``.
    With ``target.one_page`` (core/validation/onepage.py) the "equal today" guard may be met by one page's evidence.
    A rare remove-parameter rule is also drawn on made u's (core/validation/madesamples.py)."""
    p, fetch, rewrite, one_page = rnd.params, rnd.fetch, target.rewrite, target.one_page
    need_pos, max_neg = (1 - p.epsilon) * p.n, p.epsilon * p.n
    appl = applicable(rnd.test_urls, rewrite, target.changed)  # the URLs that left the test list too
    cands = sample_order([u for u in appl if not fetch.is_error(u)], rewrite, fetch, seed)
    made = MadeSamples.for_rule(target.rule, rewrite, rnd.test_urls, cands, p.n, seed, fetch)  # too few: more u's
    v_ = Verdict(target.rule, None, applicable=len(cands))  # type: ignore[arg-type]
    if (target.min_distinct > 1 and one_page is None and len(cands) >= rnd.min_samples
            and len({rewrite(u) for u in cands}) < target.min_distinct):
        v_.reason = "uninformative"  # every positive's page would be one of fewer v pages: no fetch
        return v_
    negs, pages = failures if failures is not None else [], cast("list[Sketch]", [])  # each negative's u; a sketch per positive page
    start, strata = fetch.fetches, evidence_strata(cands, target.scope, rewrite, rnd.test_urls, made)
    for u in strata.order(cands + made.urls):
        topping_up = v_.positives >= need_pos  # then only for a family still short of positives
        if v_.negatives >= max_neg or (topping_up and not strata.open_short()):
            break
        if not strata.wanted(u, topping_up):
            continue
        if fetch.fetches - start >= rnd.max_fetch_factor * p.n:
            v_.reason = "fetch_budget"
            break
        fu = await fetch(u)
        fv = await fetch(rewrite(u)) if fu.ok else fu
        # u no page, v failing for a passing cause, v redirecting to u's page: no evidence either way
        outcome = compare_pages(fu, fv, rnd.threshold) if fu.ok and not transient(fv) else fv.reason
        if fu.ok and fv.ok and outcome not in (*POSITIVE, *NO_EVIDENCE):
            # a negative counts if u's page is its own from one fetch to the next, and holds
            # between pages fetched back to back (not minutes apart, in the round's cache)
            fu, fv, outcome = await fetch.confirmed(u, rewrite(u), fu, fv, rnd.threshold)
            fetch.count("negative_fetched_again:" + ("unstable" if outcome == UNSTABLE else
                                                     "positive" if outcome in POSITIVE else "held"))
        if transient(fv) or not fu.ok or outcome in NO_EVIDENCE or outcome == UNSTABLE:
            if _skip(v_, strata, fetch, u, outcome, max_neg):
                break  # the site is down or hostile: decide nothing
            continue
        _compare(fetch, v_, fu, fv, (u, rewrite(u)), pages, rnd.threshold, negs, outcome)
        strata.compared(u, outcome in POSITIVE)
        if one_page is not None and outcome in POSITIVE:
            one_page.positive(u, fu, fv, outcome)
    v_.fetches = fetch.fetches - start
    _conclude(v_, p, strata, len(pages), bool(cands), rnd.min_samples, target.min_distinct, one_page)
    made.conclude(v_, p.epsilon)  # made samples never outvote the logged ones
    narrow_verdict(v_, appl, rewrite, strata.par, min(need_pos, rnd.min_samples), fetch.logged_errors,
                   rnd.test_urls)
    v_.refuted_by, v_.negative_urls = refuted_by(v_, negs, rewrite, strata.par.tested), negs
    if log.isEnabledFor(logging.DEBUG):  # -vv: each decision, with the pairs that refuted it
        log.debug("%s: %s (%s), %d positives on %d pages, %d negatives, %d skipped, %d fetches%s",
                  getattr(target.rule, "text", target.rule), v_.valid, v_.reason, v_.positives,
                  v_.distinct_pages, v_.negatives, v_.skipped, v_.fetches,
                  "".join(f"\n    negative: {u} -> {rewrite(u)}" for u in negs[:3]))
    return v_


def _conclude(v_: Verdict, p: DustParams, strata, pages: int, had_candidates: bool, min_samples: int,
              min_distinct: int, one_page: OnePage | None) -> None:
    """Figure 3's decision, then what the papers do not ask: every stratum's positives,
    positives on ``min_distinct`` different pages or on one page's evidence."""
    v_.distinct_pages, v_.families, v_.parameters = pages, strata.evidence(), strata.param_evidence()
    _decide(v_, p, had_candidates, min_samples)
    if v_.valid and strata.short():  # a family holding a share of its URLs showed too few positives
        v_.valid, v_.reason = None, "partial_evidence"
    if one_page is not None and pages < min_distinct:
        v_.one_page = one_page.to_json(v_.negatives)
    if v_.valid and pages < min_distinct:
        v_.valid, v_.reason = (True, "confirmed_on_one_page") if v_.one_page.get("sufficient") else (None, "uninformative")


def _skip(v_: Verdict, strata, fetch: RoundFetcher, u: str, why: str, max_neg: float) -> bool:
    """A pair that is no evidence (u no page, v failing for a passing cause, v redirecting to u's
    page): skipped, counted by why.  True when the first max(10, 2εN) pairs were all skipped: the
    rule is then undecided (``outputs_redirect`` when every skip was a v redirecting to u's page,
    else ``u_unreachable``)."""
    v_.skipped += 1
    v_.redirected_outputs += why in NO_EVIDENCE
    strata.failed(u, why)
    fetch.count("pairs_skipped:" + (why or "failed"))
    if v_.skipped >= max(10, 2 * max_neg) and v_.positives + v_.negatives == 0:
        # every output so far redirects to its input's page: the input is the page (Figure 4 tries the reverse)
        v_.reason = "outputs_redirect" if v_.redirected_outputs == v_.skipped else "u_unreachable"
        return True
    return False


def _compare(fetch: RoundFetcher, v_: Verdict, fu: Fetched, fv: Fetched, uv: tuple[str, str], pages: list[Sketch],
             threshold: float, failures: list[str] | None, outcome: str) -> str:
    """v's page compared with u's (``outcome``: :func:`compare_pages`), counted into the verdict
    (and its signals)."""
    _signal(fetch, fu, fv, outcome, threshold)
    _count(v_, (*uv, outcome), fu, pages, threshold, failures)
    if len(v_.identities) < 3 and fu.identity is not None and fv.identity is not None:
        v_.identities.append({"u": fu.identity.to_json(False), "v": fv.identity.to_json(False), "outcome": outcome})
    return outcome


@dataclass
class ValidationResult:
    valid: list[Rule]  #: in canonization order
    verdicts: list[Verdict]
    dropped_refinements: list[tuple[Pair | SubstringRule, Rule]]  #: (pair, the valid rule it refines)
    fetches: int
    outcomes: dict[str, int]
    covered: list[Rule] = field(default_factory=list)  #: dropped unfetched: the valid rules cover them


def _open_drop(rule: Rule) -> bool:
    """A "drop the query [but K]" rule that is no closed list (core/validation/narrow.py ``closed``)."""
    return isinstance(rule, QueryRule) and rule.action == "drop" and not rule.only


@dataclass
class _Decider:
    """Decides one rule of a validation round: from the cache, without a fetch (a rule that feeds
    itself, or an expanding rule whose outputs were never observed), or by Figure 3."""

    rnd: Round
    covered: Coverage  #: covered_by for this round
    test_set: frozenset = frozenset()

    async def __call__(self, rule: Rule, seed_k: int, expanding: bool = False,
                       canon: Callable[[str], str] | None = None, notify: bool = True) -> Verdict:
        rnd, cache = self.rnd, self.rnd.cache
        hit = cache.get(rule.text) if cache is not None else None
        if hit is not None and ("distinct_pages" not in hit or hit.get("valid") and (
                "families" not in hit or "identities" not in hit or "untested" not in hit or stale_keep(hit["untested"]))):
            hit = None  # decided before the verdicts kept pages, families, identities, untested parameters or their spellings
        if hit is not None and hit.get("valid") and _open_drop(rule) and "dropped_only" not in hit:
            hit = None  # a "drop the query" rule decided before it was published as its evidence's closed list
        if hit is not None and hit.get("valid") is None and canon is not None:
            hit = None  # undecided, and now asked with the canonical forms of the rules valid since: decide again
        if hit is not None:
            return _cached_verdict(rule, hit)
        why = self_feeding(rule)
        if why is None and expanding:
            why = unobserved_output(rule, rnd.test_urls, self.test_set, reach=rnd.reach)
        if why is not None:  # decided without a fetch: such a rule is never published
            v = Verdict(rule, False, reason=why)
        else:
            v = await validate_rule(rule, rnd, seed_k, canon)
        if cache is not None:  # undecided too: the cache says when to try again (the validator backs off)
            cache.put(rule.text, {"valid": v.valid, **v.evidence(), "ttl_factor": ttl_factor(rule)})  # samples too: a cached rule shows its pairs
        if rnd.on_verdict is not None and notify:
            rnd.on_verdict(v)
        return v


async def _validate_pairs(decide: _Decider, pairs: Sequence[Pair | SubstringRule], seed: int, valid: list[Rule],
                          verdicts: list[Verdict], covered: list[Rule]) -> list[tuple[Pair | SubstringRule, Rule]]:
    """Figure 4 over the likely pairs (or the substring rules they became: the same four fields):
    each one's shrinking direction, then its reverse when that was refuted; one that refines a
    valid rule is dropped (returned with that rule)."""
    valid_pairs: list[tuple[tuple[str, str], Rule]] = []
    dropped: list[tuple[Pair | SubstringRule, Rule]] = []
    for k, pair in enumerate(pairs):
        refined = next((r for vp, r in valid_pairs if pair_refines((pair.alpha, pair.beta), vp)), None)
        if refined is not None:
            dropped.append((pair, refined))
            continue
        shrinking = SubstringRule(pair.alpha, pair.beta, pair.support, pair.support_high)
        if decide.covered(shrinking, valid):
            covered.append(shrinking)
            continue
        for expanding, rule in enumerate((shrinking, shrinking.reversed())):  # the reversed rule is a rule
            v = await decide(rule, seed + k, bool(expanding))
            verdicts.append(v)
            if v.valid:
                ok = dataclasses.replace(rule, status="valid", evidence=v.evidence())
                valid.append(ok)
                valid_pairs.append(((rule.alpha, rule.beta), ok))
            # the paper's ValidateRule knows only valid / not valid; we also have "undecided"
            # (too few samples, an outage).  The other direction is tried only when this one was
            # *refuted*: an undecided shrinking rule says nothing about its reverse, and trying the
            # reverse of e.g. "?utm_source=feed0$" → "$" published "$" → "?utm_source=feed0$".
            # Or when every output redirected to its input's page (``outputs_redirect``: /story_5 →
            # /s/5 → 301 → /story_5): then the input is the page, and the reverse is the rule to try.
            if v.valid is not False and v.reason != "outputs_redirect":
                break
    return dropped


async def validate(rnd: Round, pairs: Sequence[Pair | SubstringRule], param_rules: Sequence[Rule], seed: int = 0,
                   extra: Sequence[Rule] = (), valid_before: Sequence[Rule] = ()) -> ValidationResult:
    """Figure 4 over every candidate, in round ``rnd``.  ``param_rules`` are the rules that are not
    pairs: parameter, query and case rules are decided first (they normalise the query and the path,
    so one of them stands for many literal pairs), then the likely pairs (or the substring rules they
    became) in rank order (oriented α > β), then pattern rules.  Beyond the paper: a candidate that
    the rules found valid so far already cover (on every test URL it changes, u and R(u) get one
    canonical form) is dropped before any fetch (``ValidationResult.covered``).  With the round's
    ``cache``, a rule decided before (valid or invalid, within its TTL) is not fetched again, and
    an undecided one neither while the cache keeps it (the validator keeps it for a back-off that
    grows with each undecided try: state/verdicts.py).  The round's ``on_verdict`` is called after each decision
    (progress).  ``extra`` (a learned model's candidates) are decided last, a rule decided above
    skipped.  ``valid_before``: rules found valid by an earlier round of the same test list (the
    declared candidates' round): they cover candidates and are not returned again.  The round's
    ``reach`` is (re)built for these candidates."""
    rnd.reach = round_reach(rnd.test_urls, pairs, [*param_rules, *extra])
    decide = _Decider(rnd, Coverage(rnd.test_urls, rnd.reach), frozenset(rnd.test_urls))
    valid: list[Rule] = list(valid_before)
    verdicts: list[Verdict] = []
    covered: list[Rule] = []
    # a general rule over literal pairs (core/mining/overliterals.py) is decided before them: once valid,
    # they are covered and dropped unfetched
    early = [r for r in param_rules if not r.after_pairs()]
    late = [r for r in param_rules if r.after_pairs()]
    await _validate_rules(decide, early, seed + 10_000, valid, verdicts, covered)
    dropped = await _validate_pairs(decide, pairs, seed, valid, verdicts, covered)
    await _validate_rules(decide, late, seed + 20_000, valid, verdicts, covered)
    await _one_page_again(decide, seed + 25_000, valid, verdicts)
    seen = {(v.rule.type, v.rule.text) for v in verdicts} | {(r.type, r.text) for r in covered}
    await _validate_rules(decide, [r for r in extra if (r.type, r.text) not in seen], seed + 30_000, valid, verdicts, covered)
    rf = rnd.fetch
    return ValidationResult(canonization_order(valid[len(valid_before):]), verdicts, dropped, rf.fetches,
                            dict(rf.outcomes), covered)


async def _one_page_again(decide: "_Decider", seed: int, valid: list[Rule], verdicts: list[Verdict]) -> None:
    """A remove rule left ``uninformative`` because its scope held several pages in the test list
    is decided once more when the rules found valid since make them one: the scope's URLs named by
    their canonical form (``/w/index.php?title=Special:UserLogin`` and ``/w/?title=Special:UserLogin``
    are one page once ``"/w/index.php?title=" → "/w/?title="`` is valid; core/validation/onepage.py).  Ours."""
    if not valid:
        return
    for k, v in enumerate(verdicts):
        if v.valid is not None or v.reason != "uninformative" or v.one_page or not one_page_capable(v.rule):
            continue
        again = await decide(v.rule, seed + k, canon=lambda u: canonical(u, valid), notify=False)
        if again.valid is not None or again.one_page:  # decided now (and cached so): the round says so too
            decide.rnd.fetch.count("one_page_after_canonical_forms" + (":valid" if again.valid else ""))
            verdicts[k] = again
            if decide.rnd.on_verdict is not None:
                decide.rnd.on_verdict(again)
            if again.valid:
                valid.append(dataclasses.replace(again.rule, status="valid", evidence=again.evidence()))


async def _validate_rules(decide: "_Decider", rules: Sequence[Rule], seed: int, valid: list[Rule],
                          verdicts: list[Verdict], covered: list[Rule]) -> None:
    """Figure 3 for each rule that is not a pair, in order; covered ones are dropped unfetched."""
    for k, rule in enumerate(rules):
        if decide.covered(rule, valid):
            covered.append(rule)
            continue
        v = await decide(rule, seed + k)
        verdicts.append(v)
        if v.valid:
            source = {"source": rule.evidence["source"]} if "source" in (rule.evidence or {}) else {}
            valid.append(dataclasses.replace(v.rule, status="valid", evidence=source | v.evidence()))  # narrowed, maybe


__all__ = ["POSITIVE", "Coverage", "Fetch", "Fetched", "Rewrite", "Round", "RoundFetcher", "ValidationResult", "Verdict",
           "VerdictCache", "apply_rule", "canonization_order", "compare_pages", "covered_by", "validate", "validate_rewrite",
           "validate_rule"]
