"""Which test URLs each candidate rule can change, found for all candidates in one pass (ours;
docs/validation.md).

The fetch-free checks of a candidate — :func:`dustbuster.core.canon.rulecheck.unsafe_candidate`,
:func:`~dustbuster.core.canon.rulecheck.unobserved_output`, :class:`dustbuster.core.canon.coverage.Coverage`,
and Figure 3's list of applicable URLs (WWW 2007 §5.3) — each apply the rule once to every test
URL.  Done per candidate that is (candidates × URLs) rule applications: 8.5 million on a site of
1,704 candidates, most of ``dustbuster mine``'s time.  A rule cannot change a ``^url$`` that lacks
its ``scan_key`` (the argument of :class:`dustbuster.core.canon.canonize.Canonizer`, checked there by
Hypothesis), so :class:`URLReach` scans every test URL once with an Aho–Corasick automaton over all
candidates' keys and keeps, per key, the positions of the URLs that hold it.  A check then applies
its rule only to those URLs, in the test list's order: the same outputs, the same first example,
the same verdicts as the plain loop (tests/test_urlreach.py compares them on the real logs and on
generated rules and URLs).
"""

from __future__ import annotations

from array import array
from typing import TYPE_CHECKING, Iterable, Sequence

from dustbuster.core.model.rules import Rule, SubstringRule
from dustbuster.core.urls.tokens import END, START

if TYPE_CHECKING:
    from dustbuster.core.model.pair import Pair


class URLReach:
    """The test URLs (each once, in their first-seen order) indexed by the rule keys they hold.

    ``keys`` (or ``rules``' scan keys) are indexed in one scan at construction; a key met later is
    indexed by a scan of its own (:meth:`add_keys` several at once is cheaper).  URLs holding a
    sentinel character are left out: canonization leaves them unchanged (core/canon/canonize.py)."""

    __slots__ = ("urls", "_wrapped", "_plain", "_by_key", "_seen")

    def __init__(self, urls: Iterable[str], rules: Iterable[Rule] = ()) -> None:
        self.urls: list[str] = list(dict.fromkeys(urls))
        self._plain = array("I", (i for i, u in enumerate(self.urls) if START not in u and END not in u))
        self._wrapped = {i: f"{START}{self.urls[i]}{END}" for i in self._plain}
        self._by_key: dict[str, array] = {}
        self._seen: frozenset[str] | None = None
        self.add_keys(r.scan_key for r in rules)

    def add_keys(self, keys: Iterable[str]) -> None:
        """Index the URLs holding each new non-empty key: one automaton scan of every URL."""
        new = {k for k in keys if k and k not in self._by_key}
        if not new:
            return
        hits = {k: array("I") for k in new}
        if len(new) == 1:  # one key: str's own search beats building an automaton
            (key,) = new
            found = hits[key]
            for i, w in self._wrapped.items():
                if key in w:
                    found.append(i)
        else:
            import ahocorasick  # a C extension, as in core/canon/canonize.py

            auto = ahocorasick.Automaton()
            for k in new:
                auto.add_word(k, hits[k])
            auto.make_automaton()
            for i, w in self._wrapped.items():
                for found in {id(a): a for _, a in auto.iter(w)}.values():
                    found.append(i)
        self._by_key.update(hits)

    def seen(self) -> frozenset[str]:
        """The test URLs as a set (built once)."""
        if self._seen is None:
            self._seen = frozenset(self.urls)
        return self._seen

    def positions(self, rule: Rule) -> Sequence[int]:
        """Positions in :attr:`urls`, ascending, of the URLs ``rule`` can change."""
        key = rule.scan_key
        if not key:
            return self._plain
        got = self._by_key.get(key)
        if got is None:
            self.add_keys((key,))
            got = self._by_key[key]
        return got

    def changes(self, rule: Rule) -> list[tuple[str, str]]:
        """(u, the rule applied once to u) for every test URL u it changes, in test order: what
        ``[(u, canonical(u, [rule], ma=1)) for u in urls]`` keeps where the two differ."""
        out = []
        urls, wrapped, apply = self.urls, self._wrapped, rule.apply_internal
        for i in self.positions(rule):
            w = wrapped[i]
            v = apply(w)
            if v != w:
                out.append((urls[i], v[1:-1]))
        return out

    def changed(self, rule: Rule) -> list[str]:
        """The test URLs ``rule`` changes, in test order."""
        return [u for u, _ in self.changes(rule)]


__all__ = ["URLReach"]


def round_reach(test_urls: Sequence[str], pairs: Sequence[Pair | SubstringRule], rules: Sequence[Rule]) -> URLReach:
    """The test URLs indexed, in one scan, by the keys of every rule the round may decide: both
    directions of each pair and the other rules (core/canon/urlreach.py), not per-candidate
    checks that each apply their rule to every test URL."""
    both = [SubstringRule(a, b) for p in pairs for a, b in ((p.alpha, p.beta), (p.beta, p.alpha))]
    return URLReach(test_urls, [*rules, *both])
