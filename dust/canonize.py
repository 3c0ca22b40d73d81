"""Canonization (thesis §5.5, Figure 5.5; WWW 2007 §5.4).

Repeatedly apply every rule of the ordered list to u, until an iteration leaves u unchanged or
MA iterations have run.  Each application changes only the first (token-aligned) occurrence
(dust.rules).  The result is reachable from u in G_R, so u and its canonical form are DUST.

Strings containing the internal sentinel characters (\\x02, \\x03), which no accepted URL has,
are returned unchanged.  Canonization never raises on any string.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Iterable, Sequence

from .rules import Rule
from .tokens import END, START


@dataclass(frozen=True, slots=True)
class Canonized:
    url: str
    iterations: int
    converged: bool  #: an iteration changed nothing (False: stopped by MA)
    applied: tuple[int, ...]  #: indices of the rules that changed the URL, in order


def canonize(url: str, rules: Sequence[Rule], ma: int = 10) -> Canonized:
    if START in url or END in url or not rules:
        return Canonized(url, 0, True, ())
    w = START + url + END
    applied: list[int] = []
    for k in range(1, ma + 1):
        prev = w
        for i, r in enumerate(rules):
            nw = r.apply_internal(w)
            if nw != w:
                applied.append(i)
                w = nw
        if w == prev:
            return Canonized(w[1:-1], k, True, tuple(applied))
    return Canonized(w[1:-1], ma, False, tuple(applied))


def canonical(url: str, rules: Sequence[Rule], ma: int = 10) -> str:
    return canonize(url, rules, ma).url


@dataclass(frozen=True, slots=True)
class Redundancy:
    """WWW 2007 §3 "Metrics": discovered redundancy = (unique before − unique after) / before."""

    urls: int
    unique_before: int
    unique_after: int

    @property
    def discovered_redundancy(self) -> float:
        return (self.unique_before - self.unique_after) / self.unique_before if self.unique_before else 0.0


def redundancy(urls: Iterable[str], rules: Sequence[Rule], ma: int = 10) -> Redundancy:
    before: set[str] = set()
    after: set[str] = set()
    n = 0
    for u in urls:
        n += 1
        if u not in before:
            before.add(u)
            after.add(canonical(u, rules, ma))
    return Redundancy(n, len(before), len(after))
