"""URL families: where a rule's evidence must come from (ours, beyond the papers;
docs/validation.md "URL families").

Figure 3 draws "a random URL" the rule changes and counts positives over all of them.  A sample
can be random and still come from one part of the site: the pairs a round fetched already are drawn
first (:func:`dustbuster.core.validation.draw.sample_order`), and a part whose pages fail (5xx, timeouts, the
fetcher's circuit breaker) is skipped, so a site-wide ``drop the query`` was published on 38
positives of one healthy family while 720 of the 780 URLs it changes lay in the failing ones.

* **Family** of a URL under a rule's scope S (:func:`family_of`): its origin, S, and the first path
  segment below S with each run of digits written ``N`` (``http://h/wiki/Start`` under ``/wiki`` →
  ``http://h/wiki/Start``; ``http://h/story_5?x=1`` → ``http://h/story_N``; ``http://h/a/12`` →
  ``http://h/a``).  The same segment-wise notion of a path as the rule scopes
  (:func:`dustbuster.core.urls.scope.scopes_of`), one level below the rule's own.
* **Strata**: the families holding at least :data:`FAMILY_SHARE` of the changed test URLs, and the
  other families pooled into one (``(other families)``) when together they hold that share.
* A rule is valid only when every stratum shows at least ``min(FAMILY_MIN_POSITIVES, its URLs)``
  positives; otherwise it is undecided (``partial_evidence``: not refuted — a part that does not
  answer decides nothing).  Failures count as no evidence for the family; a stratum whose u pages
  failed :data:`FAMILY_GIVE_UP` times before it showed its positives is given up for the round
  (its other URLs are not fetched) when other strata are required too (a rule of one stratum
  meets Figure 3's own outage bound, ``u_unreachable``, as before).  A stratum whose failed pages
  are all soft errors (:mod:`dustbuster.core.validation.softerror`) is *gone*: it owes no positives.
* The draw is stratified (:meth:`Strata.order`): the first :data:`FAMILY_LIFT` URLs of each stratum
  (in Figure 3's order) come first, round-robin, then Figure 3's order; a rule whose URLs lie in one
  stratum is drawn exactly as before.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass, field
from functools import lru_cache

from dustbuster.core.urls.scope import in_scope, split_url

#: a family holding at least this share of a rule's changed test URLs must show positives (ours):
#: one tenth leaves at most ten strata, each of which Figure 3's 38 positives can show several times
FAMILY_SHARE = 0.10
#: positives each stratum must show (or all of its URLs, when it has fewer): one could be chance
FAMILY_MIN_POSITIVES = 2
#: URLs of each stratum drawn first: the positives it needs and one spare for a failed fetch
FAMILY_LIFT = FAMILY_MIN_POSITIVES + 1
#: failed u pages after which a stratum still short of positives is given up for the round
FAMILY_GIVE_UP = 5
#: the pooled stratum of the families under FAMILY_SHARE
OTHER = "(other families)"

_DIGITS = re.compile(r"\d+")


@lru_cache(maxsize=1 << 16)  # pure; every candidate of a round asks again for the same test URLs
def family_of(url: str, scope: str = "") -> str:
    """The URL's family under ``scope`` (module docstring)."""
    head, path, _ = split_url(url)
    scope = scope.partition("?")[0]  # a query-parameter scope: its path part (core/urls/scope.py)
    rest = path[len(scope):] if scope and in_scope(path, scope) else path
    segment = rest.lstrip("/").split("/", 1)[0]
    return f"{head.lower()}{scope}/{_DIGITS.sub('N', segment)}"


@dataclass
class Family:
    """One stratum's evidence in one rule's validation."""

    name: str
    urls: int  #: changed test URLs in it
    major: bool = True  #: holds FAMILY_SHARE of them: its positives are required
    part: bool = True  #: one of several required strata (a lone stratum is never given up)
    positives: int = 0
    negatives: int = 0
    skipped: int = 0
    failures: Counter = field(default_factory=Counter)  #: why its u pages failed (status_500, site_down, …)

    @property
    def required(self) -> int:
        return min(FAMILY_MIN_POSITIVES, self.urls) if self.major else 0

    @property
    def gone(self) -> bool:
        """Every page of it drawn so far was a soft error, FAMILY_GIVE_UP of them: its URLs
        are no pages (purged items), so it owes no positives — no outage, nothing to wait for."""
        return self.skipped >= FAMILY_GIVE_UP and set(self.failures) == {"soft_error"}

    @property
    def short(self) -> bool:
        return self.positives < self.required and not self.gone

    @property
    def given_up(self) -> bool:
        return self.part and (self.short or self.gone) and self.skipped >= FAMILY_GIVE_UP

    def to_json(self) -> dict:
        return {"family": self.name, "urls": self.urls, "required": self.required, "positives": self.positives,
                "negatives": self.negatives, "skipped": self.skipped, "failures": dict(self.failures),
                "short": self.short}


class Strata:
    """The strata of one rule's changed test URLs and their evidence as Figure 3 draws them."""

    def __init__(self, cands: list[str], scope: str = "") -> None:
        fams = {u: family_of(u, scope) for u in cands}
        sizes = Counter(fams.values())
        floor = FAMILY_SHARE * len(cands)
        self.of = {u: f if sizes[f] >= floor else OTHER for u, f in fams.items()}
        counts = Counter(self.of.values())
        self.families = {f: Family(f, n, f != OTHER or n >= floor) for f, n in counts.most_common()}
        several = sum(f.major for f in self.families.values()) > 1
        for f in self.families.values():
            f.part = several

    def order(self, draw: list[str]) -> list[str]:
        """Figure 3's ``draw`` with the first FAMILY_LIFT URLs of each required stratum in front,
        round-robin (strata by size); one stratum: ``draw`` unchanged."""
        majors = [f for f in self.families.values() if f.major]
        if len(majors) < 2:
            return draw
        firsts: dict[str, list[str]] = {f.name: [] for f in majors}
        for u in draw:
            got = firsts.get(self.of[u])
            if got is not None and len(got) < FAMILY_LIFT:
                got.append(u)
        front = [us[k] for k in range(FAMILY_LIFT) for us in firsts.values() if k < len(us)]
        lifted = set(front)
        return front + [u for u in draw if u not in lifted]

    def wanted(self, u: str, topping_up: bool) -> bool:
        """Whether to fetch ``u``: not when its stratum was given up; once the rule has its
        positives (``topping_up``), only for a stratum still short of them."""
        fam = self.families[self.of[u]]
        return not fam.given_up and (not topping_up or fam.short)

    def open_short(self) -> bool:
        """A required stratum is short of positives and not given up: worth drawing on."""
        return any(f.short and not f.given_up for f in self.families.values())

    def failed(self, u: str, reason: str) -> None:
        fam = self.families[self.of[u]]
        fam.skipped += 1
        fam.failures[reason or "failed"] += 1

    def compared(self, u: str, positive: bool) -> None:
        fam = self.families[self.of[u]]
        if positive:
            fam.positives += 1
        else:
            fam.negatives += 1

    def short(self) -> list[Family]:
        return [f for f in self.families.values() if f.short]

    def evidence(self) -> list[dict]:
        return [f.to_json() for f in self.families.values()]


__all__ = ["FAMILY_GIVE_UP", "FAMILY_LIFT", "FAMILY_MIN_POSITIVES", "FAMILY_SHARE", "Family", "Strata",
           "family_of"]
