"""A rule's verdict (WWW 2007 §5.3, Figure 3) and its bookkeeping: one comparison counted in, the
decision from the counts, a verdict restored from the validator's cache.  Figure 3's draw and
fetches are in :mod:`dustbuster.core.validation.validate`."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field

from dustbuster.core.validation.fetched import POSITIVE, Fetched
from dustbuster.core.validation.narrow import restored
from dustbuster.core.params import DustParams
from dustbuster.core.errors import RuleError
from dustbuster.core.model.rules import ParamRule, Rule
from dustbuster.core.validation.sketch import Sketch, similar


@dataclass
class Verdict:
    rule: Rule
    valid: bool | None
    positives: int = 0
    negatives: int = 0
    skipped: int = 0  #: u could not be fetched
    fetches: int = 0  #: new fetches this rule caused
    applicable: int = 0  #: test URLs the rule changes
    reason: str = ""
    samples: list[tuple[str, str, str]] = field(default_factory=list)  #: (u, v, outcome), first few
    distinct_pages: int = 0  #: different pages among the positives' u side
    families: list[dict] = field(default_factory=list)  #: evidence by URL family (core/urls/families.py)
    identities: list[dict] = field(default_factory=list)  #: the first pairs' identity evidence (core/validation/identity.py)
    parameters: list[dict] = field(default_factory=list)  #: evidence by parameter stratum (core/validation/paramstrata.py)
    one_page: dict = field(default_factory=dict)  #: a one-page family's evidence (core/validation/onepage.py), when the rule has one
    untested: list[dict] = field(default_factory=list)  #: parameters no positive tested (core/validation/narrow.py)
    made: dict = field(default_factory=dict)  #: made samples compared and skipped (core/validation/madesamples.py), when it had some
    #: a refutation pinned on untested parameters (core/validation/narrow.py refuted_by): name -> negatives carrying it
    refuted_by: dict = field(default_factory=dict)
    narrowing: dict = field(default_factory=dict)  #: the narrowed rule tried after a refutation, and its verdict
    negative_urls: list[str] = field(default_factory=list)  #: the u of each negative (not kept in the evidence)
    redirected_outputs: int = 0  #: pairs skipped because v redirected to u's page (``v_redirects_same_page``)
    #: a valid "drop the query" rule's closed list: the parameters its positives dropped (core/validation/narrow.py)
    dropped_only: list[str] = field(default_factory=list)

    def evidence(self) -> dict:
        return {"positives": self.positives, "negatives": self.negatives, "skipped": self.skipped,
                "fetches": self.fetches, "applicable": self.applicable, "reason": self.reason,
                "distinct_pages": self.distinct_pages, "families": self.families,
                "samples": [list(s) for s in self.samples[:5]], "identities": self.identities,
                "parameters": self.parameters, "untested": self.untested, **self.made, **({"one_page": self.one_page} if self.one_page else {}),
                **({"narrowing": self.narrowing} if self.narrowing else {}),
                **({"dropped_only": self.dropped_only} if self.dropped_only else {})}


def count_outcome(v_: Verdict, sample: tuple[str, str, str], fu: Fetched, pages: list[Sketch], threshold: float,
           failures: list[str] | None) -> None:
    """One comparison (u, v, outcome) into the verdict: a positive (u's page added to ``pages``
    when it is none of them) or a negative (u added to ``failures``)."""
    if sample[2] in POSITIVE:
        v_.positives += 1
        if fu.sketch is not None and not any(similar(fu.sketch, s, threshold) for s in pages):
            pages.append(fu.sketch)
    else:
        v_.negatives += 1
        if failures is not None:
            failures.append(sample[0])
    if len(v_.samples) < 10:
        v_.samples.append(sample)


def decide(v_: Verdict, p: DustParams, had_candidates: bool, min_samples: int) -> None:
    need_pos, max_neg = (1 - p.epsilon) * p.n, p.epsilon * p.n
    if v_.negatives >= max_neg:
        v_.valid, v_.reason = False, v_.reason or "refuted"
    elif v_.positives >= need_pos:
        v_.valid, v_.reason = True, v_.reason or "confirmed"
    elif v_.reason not in ("fetch_budget", "u_unreachable", "outputs_redirect"):
        done = v_.positives + v_.negatives
        if done and v_.negatives >= p.epsilon * done:
            v_.valid, v_.reason = False, "refuted_on_fewer_samples"
        elif done >= min_samples:
            v_.valid, v_.reason = True, "confirmed_on_fewer_samples"
        else:
            v_.reason = "too_few_samples" if had_candidates else "no_applicable_urls"


def cached_verdict(rule: Rule, hit: dict) -> Verdict:
    """The verdict of a rule decided before, as the cache holds it (reason ``cached``, no fetch),
    with the rule it was decided as (narrowed to its evidence's page: ``one_page.scope``)."""
    page = hit.get("one_page")
    scope = page.get("scope") if isinstance(page, dict) else None
    if isinstance(scope, str) and isinstance(rule, ParamRule) and scope != rule.scope:
        try:
            rule = dataclasses.replace(rule, scope=scope)
        except RuleError:
            pass
    v_ = Verdict(rule, hit["valid"], hit.get("positives", 0), hit.get("negatives", 0),
                   hit.get("skipped", 0), 0, hit.get("applicable", 0), "cached",
                   [tuple(x) for x in hit.get("samples") or [] if isinstance(x, (list, tuple)) and len(x) == 3],
                   hit.get("distinct_pages", 0), [f for f in hit.get("families") or [] if isinstance(f, dict)],
                   [x for x in hit.get("identities") or [] if isinstance(x, dict)],
                   [x for x in hit.get("parameters") or [] if isinstance(x, dict)],
                   hit["one_page"] if isinstance(hit.get("one_page"), dict) else {},
                   [x for x in hit.get("untested") or [] if isinstance(x, dict)],
                   {k: hit[k] for k in ("made_samples", "made_skipped") if isinstance(hit.get(k), int)})
    only = hit.get("dropped_only")
    v_.dropped_only = [x for x in only if isinstance(x, str)] if isinstance(only, list) else []
    return restored(v_)


__all__ = ["Verdict", "cached_verdict", "count_outcome", "decide"]
