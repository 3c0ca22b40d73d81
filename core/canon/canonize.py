"""Canonization (thesis §5.5, Figure 5.5; WWW 2007 §5.4).

Repeatedly apply every rule of the ordered list to u, until an iteration leaves u unchanged or
MA iterations have run.  Each application changes only the first (token-aligned) occurrence
(dustbuster.core.model.rules).  The result is reachable from u in G_R, so u and its canonical form are DUST.

Strings containing the internal sentinel characters (\\x02, \\x03), which no accepted URL has,
are returned unchanged.  Canonization never raises on any string.

>>> from dustbuster.core import rules_from_document
>>> rules = rules_from_document({"rules": [
...     {"type": "parameter", "name": "sid", "action": "remove", "status": "valid"},
...     {"type": "substring", "alpha": "http://www.", "beta": "http://", "anchor_start": True,
...      "anchor_end": False, "status": "valid"}]})
>>> canonical("http://www.forum.test/story?id=5&sid=9", rules)
'http://forum.test/story?id=5'
>>> canonize("http://www.forum.test/story?id=5&sid=9", rules)
Canonized(canonical='http://forum.test/story?id=5', iterations=2, converged=True, applied=(0, 1))
>>> Canonizer(rules).canonize("http://www.forum.test/story?id=5&sid=9").canonical  # the same, prefiltered
'http://forum.test/story?id=5'
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Iterable, Sequence

from dustbuster.core.params import DEFAULT_MA
from dustbuster.core.model.rules import Rule
from dustbuster.core.urls.tokens import END, START


@dataclass(frozen=True, slots=True)
class Canonized:
    canonical: str  #: the canonical form of the input URL
    iterations: int
    converged: bool  #: an iteration changed nothing (False: stopped by MA)
    applied: tuple[int, ...]  #: indices of the rules that changed the URL, in order


def canonize(url: str, rules: Sequence[Rule], ma: int = DEFAULT_MA) -> Canonized:
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


def canonical(url: str, rules: Sequence[Rule], ma: int = DEFAULT_MA) -> str:
    return canonize(url, rules, ma).canonical


@dataclass(frozen=True, slots=True)
class Redundancy:
    """WWW 2007 §3 "Metrics": discovered redundancy = (unique before − unique after) / before."""

    urls: int
    unique_before: int
    unique_after: int

    @property
    def discovered_redundancy(self) -> float:
        return (self.unique_before - self.unique_after) / self.unique_before if self.unique_before else 0.0


class RedundancyCount:
    """The counts of :class:`Redundancy` kept as (URL, canonical form) pairs arrive, for callers that
    canonize each URL themselves (a rule book with normalization and per-site rules)."""

    def __init__(self) -> None:
        self.urls = 0
        self.before: set[str] = set()
        self.after: set[str] = set()

    def add(self, url: str, canonical_form: str) -> None:
        self.urls += 1
        self.before.add(url)
        self.after.add(canonical_form)

    def result(self) -> Redundancy:
        return Redundancy(self.urls, len(self.before), len(self.after))


def redundancy(urls: Iterable[str], rules: Sequence[Rule], ma: int = DEFAULT_MA) -> Redundancy:
    """Discovered redundancy of ``urls`` under ``rules`` (each unique URL canonized once)."""
    count = RedundancyCount()
    forms: dict[str, str] = {}
    for u in urls:
        form = forms.get(u)
        if form is None:
            form = forms[u] = canonical(u, rules, ma)
        count.add(u, form)
    return count.result()


class Canonizer:
    """Figure 5.5 compiled for speed: the same results as :func:`canonize`, for every input.

    An Aho–Corasick automaton (pyahocorasick) over every rule's ``scan_key`` (a substring
    rule's α with its sentinels, a parameter rule's ``name=``, ``?`` for query rules, a scope, a
    pattern rule's longest literal part) finds, in one scan of ``^url$``, the rules that can possibly change
    the URL; only those are tried, in rule order.  A rule whose α does not occur cannot change
    the URL, so skipping it changes nothing; after a change the scan is redone for the rules that
    follow in the same iteration.  Rules with an empty α (possible in hand-written sets) are always
    tried.  ``tests/test_canonizer.py`` checks equality with :func:`canonize` (Hypothesis).
    """

    __slots__ = ("rules", "ma", "_auto", "_always", "_empty")

    def __init__(self, rules: Sequence[Rule], ma: int = DEFAULT_MA) -> None:
        import ahocorasick  # a C extension; imported here so the module stays cheap to import

        self.rules = tuple(rules)
        self.ma = ma
        keys: dict[str, list[int]] = {}
        always: list[int] = []
        for i, r in enumerate(self.rules):
            key = r.scan_key
            if key:
                keys.setdefault(key, []).append(i)
            else:
                always.append(i)
        self._always = tuple(always)
        self._empty = not keys
        auto = ahocorasick.Automaton()
        for key, idx in keys.items():
            auto.add_word(key, tuple(idx))
        if keys:
            auto.make_automaton()
        self._auto = auto

    def _scan(self, w: str) -> list[int]:
        """Indices (sorted) of the rules that can change ``w``: their key occurs in it."""
        found = {i for _, idx in self._auto.iter(w) for i in idx} if not self._empty else set()
        if self._always:
            found.update(self._always)
        return sorted(found) if len(found) > 1 else list(found)

    def _run(self, url: str) -> tuple[str, int, bool, list[int]]:
        rules = self.rules
        if START in url or END in url or not rules:
            return url, 0, True, []
        w = START + url + END
        applied: list[int] = []
        cands = self._scan(w)  # always the candidates of the current w
        for k in range(1, self.ma + 1):
            if not cands:  # nothing can change w: this iteration is the last
                return w[1:-1], k, True, applied
            prev = w
            cur, pos = cands, 0
            while pos < len(cur):
                i = cur[pos]
                nw = rules[i].apply_internal(w)
                if nw != w:
                    applied.append(i)
                    w = nw
                    cands = self._scan(w)
                    cur, pos = [j for j in cands if j > i], 0
                else:
                    pos += 1
            if w == prev:
                return w[1:-1], k, True, applied
        return w[1:-1], self.ma, False, applied

    def canonize(self, url: str) -> Canonized:
        w, k, converged, applied = self._run(url)
        return Canonized(w, k, converged, tuple(applied))

    def __call__(self, url: str) -> str:
        return self._run(url)[0]
