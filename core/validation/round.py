"""What a validation round carries down to each rule it decides, in one object.

Figure 3 (WWW 2007 §5.3) takes a rule, the test URL list, a fetch function and the parameters N
and ε; ours adds the sketch threshold (thesis §6.3), the fewest comparisons that decide, a fetch
budget, the round's index of which test URLs each candidate changes
(:class:`~dustbuster.core.canon.urlreach.URLReach`), the verdicts decided before (a cache with a
TTL) and a callback per decision.  :class:`Round` holds all of them for one round of one site,
and :class:`Rewrite` what Figure 3 needs to know of the rewrite it draws pairs for (one rule's, or
a whole canonicalizer's in the set-level check), so the walk from Figure 4 down to one fetch passes
two objects instead of ten arguments.  Beyond the papers.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable, Protocol, Sequence

from dustbuster.core.canon.urlreach import URLReach
from dustbuster.core.model.rules import Rule
from dustbuster.core.params import DustParams
from dustbuster.core.validation.fetched import Fetch, RoundFetcher
from dustbuster.core.validation.onepage import OnePage
from dustbuster.core.validation.verdict import Verdict


class VerdictCache(Protocol):
    """Decided verdicts by rule text (the validator keeps them in RocksDB with a TTL)."""

    def get(self, key: str) -> dict | None: ...
    def put(self, key: str, verdict: dict) -> None: ...


@dataclass
class Round:
    """One validation round of one site.

    >>> from dustbuster.core.validation.fetched import Fetched
    >>> async def fetch(url):        # a site where every URL is a page (a test double)
    ...     return Fetched(False, reason="status_404")
    >>> rnd = Round(["http://s.test/a?x=1"], fetch)
    >>> (rnd.params.n, rnd.params.epsilon, type(rnd.fetch).__name__)   # the papers' N and ε
    (40, 0.05, 'RoundFetcher')
    """

    test_urls: Sequence[str]  #: the URL list the rules are drawn and judged on
    fetch: RoundFetcher  #: the round's fetches (a plain fetch function is wrapped: one cache per round)
    params: DustParams = field(default_factory=DustParams)  #: N, ε, MA (thesis §6.2)
    threshold: float = 1.0  #: sketch resemblance that makes two pages similar (thesis §6.3: "4 of 4")
    min_samples: int = 10  #: comparisons that decide a rule whose applicable URLs run out
    max_fetch_factor: int = 4  #: a rule may use this many times N fetches, then it is undecided
    reach: URLReach | None = None  #: the test URLs indexed by the round's rule keys (None: scan them)
    cache: VerdictCache | None = None  #: verdicts decided before, within their TTL
    on_verdict: Callable[[Verdict], None] | None = None  #: called after each decision (progress)

    def __post_init__(self) -> None:
        if not isinstance(self.fetch, RoundFetcher):
            self.fetch = RoundFetcher(self.fetch)

    @classmethod
    def of(cls, test_urls: Sequence[str], fetch: RoundFetcher | Fetch, params: DustParams | None = None,
           **kw) -> "Round":
        """A round whose ``params`` may be None (the papers' defaults)."""
        return cls(test_urls, fetch, params or DustParams(), **kw)  # type: ignore[arg-type]  # wrapped in __post_init__


@dataclass
class Rewrite:
    """A URL rewrite Figure 3 draws pairs (u, rewrite(u)) for, and what is known of it."""

    rule: Rule | None  #: the rule it is (None: a whole canonicalizer, the set-level check)
    rewrite: Callable[[str], str]
    min_distinct: int = 0  #: different pages the positives must show ("equal today")
    scope: str = ""  #: the rule's scope, for the draw's strata
    changed: Sequence[str] | None = None  #: the test URLs it changes, each once, if known
    one_page: OnePage | None = None  #: a one-page family, decided on that page's evidence


__all__ = ["Rewrite", "Round", "VerdictCache"]
