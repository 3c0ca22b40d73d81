"""Set-level validation: the composed canonicalizer is validated like one rule (beyond the papers;
docs/validation.md "Set-level checks").

After Figure 4 has decided each rule, :func:`check_rule_set`

1. runs the fetch-free checks of :mod:`dustbuster.core.canon.rulecheck` (self-feeding rules, inverses, convergence
   within MA, subsumption);
2. validates the whole canonicalization u ↦ canon(u) with Figure 3 (the same N, ε, sampling and
   page comparison as one rule: :func:`dustbuster.core.validation.validate.validate_rewrite`) on the test URLs that the
   set changes;
3. if the set is refuted, finds the rule responsible for each failing URL by bisection over the
   rules applied to it (in canonization order, the shortest prefix whose result is no longer u's
   page), drops the rule blamed most, and goes back to 1 — until the set passes or is empty.

An undecided composition (an outage, too few URLs) keeps the set as it is: only a refutation
removes rules, as in a validation round.  Fetches go through the round's cache, so pages fetched
while deciding single rules are not fetched again.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Sequence

from dustbuster.core.canon.canonize import Canonizer, canonical
from dustbuster.core.canon.rulecheck import Dropped, check_static
from dustbuster.core.model.rules import Rule
from dustbuster.core.validation.fetched import NO_EVIDENCE
from dustbuster.core.validation.validate import (POSITIVE, Rewrite, Round, RoundFetcher, Verdict, compare_pages,
                                                 validate_rewrite)

#: at most this many failing URLs are bisected per refuted composition
BISECT_URLS = 5
#: the reason :func:`dustbuster.core.canon.rulecheck.drop_unused` gives a rule the rules before it subsume
SUBSUMED = "subsumed: changes no test URL"


@dataclass
class SetCheck:
    rules: list[Rule]  #: the rules that passed, in canonization order
    dropped: Dropped = field(default_factory=list)  #: (rule, why), in the order they were dropped
    verdicts: list[Verdict] = field(default_factory=list)  #: one per composition tried
    fetches: int = 0

    @property
    def passed(self) -> bool | None:
        """True: the final composition was confirmed; None: undecided (or nothing to check)."""
        return self.verdicts[-1].valid if self.verdicts else None

    def stats(self) -> dict:
        last = self.verdicts[-1] if self.verdicts else None
        return {
            "passed": self.passed,
            "rounds": len(self.verdicts),
            "fetches": self.fetches,
            "changed_test_urls": last.applicable if last else 0,
            "positives": last.positives if last else 0,
            "negatives": last.negatives if last else 0,
            "reason": last.reason if last else "no_rules",
            "dropped": [{"rule": r.text, "why": why} for r, why in self.dropped],
        }


async def blame(u: str, rules: Sequence[Rule], fetch: RoundFetcher, threshold: float, ma: int) -> int | None:
    """Index of the rule that turns u's page into another: bisection over the prefixes of the rules
    applied to u (kept in canonization order).  None when u cannot be fetched."""
    fu = await fetch(u)
    if not fu.ok:
        return None
    applied = sorted(set(Canonizer(rules, ma).canonize(u).applied))
    if not applied:
        return None
    lo, hi = 1, len(applied)  # invariant: the prefix of length hi fails
    while lo < hi:
        mid = (lo + hi) // 2
        v = canonical(u, [rules[i] for i in applied[:mid]], ma)
        if compare_pages(fu, await fetch(v), threshold) in (*POSITIVE, *NO_EVIDENCE):  # not another page
            lo = mid + 1
        else:
            hi = mid
    return applied[hi - 1]


async def check_rule_set(rules: Sequence[Rule], rnd: Round, seed: int = 0) -> SetCheck:
    """The fetch-free checks of ``rules``, then the composed canonicalizer validated like one rule on
    the round's test URLs, dropping the rule most to blame for its failures until it holds (the
    module doc)."""
    p, fetch, threshold = rnd.params, rnd.fetch, rnd.threshold
    urls = list(dict.fromkeys(rnd.test_urls))
    start = fetch.fetches
    kept, dropped = check_static(rules, urls, p.ma)
    out = SetCheck(kept, dropped)
    on_urls = Round(urls, fetch, p, threshold)  # Figure 3's defaults for the rest
    while kept:
        failures: list[str] = []
        v = await validate_rewrite(on_urls, Rewrite(None, Canonizer(kept, p.ma)), seed + len(out.verdicts), failures)
        out.verdicts.append(v)
        if v.valid is not False:
            break
        votes: Counter[int] = Counter()
        for u in failures[:BISECT_URLS]:
            i = await blame(u, kept, fetch, threshold, p.ma)
            if i is not None:
                votes[i] += 1
        # the most blamed rule; without a verdict (u not fetched again) the last applied one
        i = max(votes, key=lambda k: (votes[k], k)) if votes else len(kept) - 1
        out.dropped.append((kept[i], f"set_check: {votes[i]} of {len(failures[:BISECT_URLS])} failing URLs, "
                                     f"e.g. {failures[0]}"))
        del kept[i]
        # a rule subsumed by the rules before it may not be once one of them is gone: it is
        # checked again in its place (``/w/index.php?title=X → /wiki/X`` behind a refuted
        # ``"/w/index.php" → "/wiki"``)
        again = {id(r) for r, why in out.dropped if why.startswith(SUBSUMED)}
        back = [r for r in rules if id(r) in again or any(r is k for k in kept)]
        kept, more = check_static(back, urls, p.ma)
        out.dropped = [(r, why) for r, why in out.dropped if id(r) not in again] + more
    out.rules = kept
    out.fetches = fetch.fetches - start
    return out


__all__ = ["BISECT_URLS", "SetCheck", "blame", "check_rule_set"]
