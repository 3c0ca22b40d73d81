"""Made samples: test URLs the validator makes for a rare remove-parameter rule (ours, beyond the
papers; docs/validation.md "Made samples").

Figure 3 (WWW 2007 §5.3; thesis §5.4) draws its u's among the test URLs a rule changes.  A tracking
parameter (``fbclid``, ``ref``) that the logs show on three or four URLs leaves a rule such as
``remove fbclid=*`` with fewer than ``min_samples`` comparisons: undecided for ever, although the
thesis' §5.3 parameter rules are exactly "this parameter does not matter".  The claim of a remove
rule is about *every* URL in its scope, so the validator may test it on URLs the logs never held:

* a rule type says whether it can (:meth:`~dustbuster.core.model.ruletype.RuleType.made_sample_param`):
  a ``remove p=*`` rule, global or under a path scope; never a value-mapping rule and never a rule
  under a query-parameter scope (one page's rule: core/validation/onepage.py decides those);
* when its applicable test URLs are fewer than N (Figure 3's sample size) but at least
  :data:`MIN_LOGGED` (the miner's minimum support, thesis §6.2: a parameter logged once or twice is
  no pattern to test yet), other test URLs in the rule's scope that lack p get ``p=<a value logged
  for p>`` appended (the values taken in turn from the URLs the rule changes); the bases are drawn in an order fixed by ``seed``, round-robin over
  URL families (core/urls/families.py) so that they show several pages; at most N made URLs per rule,
  each one's rewrite being its base (else it is not made);
* each made u is fetched and compared with R(u) = its base exactly like a logged u (soft errors,
  identity checks); a made u that fails is skipped and counted (``made_skipped``);
* the logged u's are drawn first and the made ones only after them, and made samples never
  outvote the logs: when the logged comparisons alone refute the rule (ε or more of them negative,
  Figure 3's refutation on fewer samples), the rule is refuted (``refuted_on_logged_samples``),
  whatever the made ones showed.  A parameter that is meaningful on most pages and logged only
  where it is a no-op is refuted by the made samples themselves (its made u's are negatives).

The verdict's evidence says it: ``made_samples`` (made u's compared) and ``made_skipped``.
"""

from __future__ import annotations

import logging
import random
from collections import defaultdict
from typing import Any, Callable, Sequence

from dustbuster.core.urls import query
from dustbuster.core.urls.families import family_of
from dustbuster.core.urls.scope import url_in_scope

log = logging.getLogger(__name__)

#: logged applicable URLs a rule needs before the validator makes samples for it
MIN_LOGGED = 3


def logged_values(urls: Sequence[str], name: str) -> list[str]:
    """The distinct values of ``name`` in ``urls``, in order of first appearance."""
    out: dict[str, None] = {}
    for u in urls:
        for n, v in query.split(u.partition("#")[0])[1] or ():
            if n == name and v is not None:
                out.setdefault(v, None)
    return list(out)


def lacks(url: str, name: str) -> bool:
    """True when the URL has no fragment and no query item named ``name`` (bare or not)."""
    if "#" in url:
        return False
    return all(n != name for n, _ in query.split(url)[1] or ())


def with_param(url: str, name: str, value: str) -> str:
    """``url`` with ``name=value`` appended to its query."""
    return url + ("&" if "?" in url else "?") + f"{name}={value}"


def spread(bases: list[str], scope: str, seed: int) -> list[str]:
    """``bases`` shuffled with ``seed``, then taken round-robin over their URL families: several
    different pages come first."""
    random.Random(seed).shuffle(bases)
    by_family: dict[str, list[str]] = defaultdict(list)
    for u in bases:
        by_family[family_of(u, scope)].append(u)
    groups = list(by_family.values())
    return [g[k] for k in range(max(map(len, groups), default=0)) for g in groups if k < len(g)]


def make_samples(name: str, scope: str, rewrite: Callable[[str], str], test_urls: Sequence[str],
                 logged: Sequence[str], n: int, seed: int, is_error: Callable[[str], bool] = lambda u: False) -> list[str]:
    """Up to ``n`` made u's for the rule that removes ``name`` under ``scope`` (module docstring):
    ``logged`` are the test URLs it changes (their values of ``name`` are used, sorted); ``is_error``:
    a URL that is no page (never a base).  The same arguments make the same URLs."""
    values = sorted(logged_values(logged, name))  # not the draw's order: the same made u's every round
    if not values or n <= 0:
        return []
    seen = set(test_urls)
    bases = [u for u in dict.fromkeys(test_urls)
             if lacks(u, name) and url_in_scope(u, scope) and not is_error(u)]
    made: list[str] = []
    for k, base in enumerate(spread(bases, scope, seed)):
        if len(made) >= n:
            break
        u = with_param(base, name, values[k % len(values)])
        if u not in seen and rewrite(u) == base:
            made.append(u)
    return made


class MadeSamples:
    """One rule's made u's in Figure 3's loop: drawn after the logged ones, counted apart (the loop's
    :class:`~dustbuster.core.validation.paramstrata.EvidenceStrata` calls :meth:`order`, :meth:`failed` and
    :meth:`compared`)."""

    def __init__(self, urls: Sequence[str] = (), fetch: Any = None) -> None:
        self.urls, self.fetch = list(urls), fetch
        self._made = set(self.urls)
        self.done = self.skipped = 0  #: made u's compared, skipped
        self.logged_positives = self.logged_negatives = 0

    @classmethod
    def for_rule(cls, rule: Any, rewrite: Callable[[str], str], test_urls: Sequence[str],
                 logged: Sequence[str], n: int, seed: int, fetch: Any) -> "MadeSamples":
        """The made u's of ``rule`` when its type can make them and it changes fewer than ``n`` test
        URLs, :data:`MIN_LOGGED` at least; ``fetch``: the round's fetcher (the URLs it knows were logged
        only with an error status are no base; it counts the made u's).  The made u's depend on the
        test list and ``seed`` only, not on what the round fetched so far: a rule gets the same
        made u's every round, so an unchanged site gets the same verdict."""
        name = rule.made_sample_param() if rule is not None else None
        if name is None or not MIN_LOGGED <= len(logged) < n:
            return cls()
        errors = frozenset(getattr(fetch, "logged_errors", ()))
        made = make_samples(name, getattr(rule, "scope", ""), rewrite, test_urls, logged, n, seed, errors.__contains__)
        if made:
            log.debug("%s: %d made samples for %d logged", rule.text, len(made), len(logged))
        return cls(made, fetch)

    def order(self, draw: Sequence[str]) -> list[str]:
        """``draw`` (logged and made u's, as the strata order them) with the logged ones first."""
        if not self._made:
            return list(draw)
        return [u for u in draw if u not in self._made] + [u for u in draw if u in self._made]

    def failed(self, u: str, reason: str) -> None:
        if u in self._made:
            self.skipped += 1
            self.fetch.count("made_samples_skipped")

    def compared(self, u: str, positive: bool) -> None:
        if u in self._made:
            self.done += 1
            self.fetch.count("made_samples")
        elif positive:
            self.logged_positives += 1
        else:
            self.logged_negatives += 1

    def conclude(self, v_: Any, epsilon: float) -> None:
        """Into the verdict: the made evidence; refuted when the logged comparisons alone refute it."""
        if not self.urls:
            return
        v_.made = {"made_samples": self.done, "made_skipped": self.skipped}
        logged = self.logged_positives + self.logged_negatives
        if self.done and v_.valid is not False and logged and self.logged_negatives >= epsilon * logged:
            v_.valid, v_.reason = False, "refuted_on_logged_samples"


__all__ = ["MIN_LOGGED", "MadeSamples", "lacks", "logged_values", "make_samples", "spread", "with_param"]
