"""Evidence that covers what a rule changes (ours, beyond the papers; docs/validation.md
"Parameter strata").

A rule that drops or rewrites several parameters is a conjunction: "``hl`` does not matter *and*
``rev`` does not matter".  Figure 3's random draw over the URLs it changes can show 38 positives
on ``hl`` alone while the few URLs with ``rev=<old revision>`` — other pages — are never drawn.

* **Parameter strata**: for each parameter the rule drops, and each parameter whose value it maps
  (by the kind of value: ``number`` or ``text``), the changed test URLs where it does so.  A rule
  that changes one parameter only has one such stratum and nothing is added to Figure 3.
* **Changed pages**: a parameter whose values look like revision ids or timestamps
  (:func:`revision_like`: 3+ digits, 7+ hex characters with a digit, a date) and that takes two or
  more values on one and the same rest of the URL in the test list names states of a page that
  has changed: the URLs holding an older value than the newest seen (numbers by value) form a
  stratum of their own — the newest state is the page itself and proves nothing.
* **Values**: the one parameter a rule drops (``remove P=*``; a rule that changes several has a
  stratum per parameter already) when it takes a few values in the URLs it changes (2 to
  :data:`MAX_VALUE_STRATA`, each on two URLs on average: ``action=view|edit|history``, not a session
  id) gives one stratum per value (``drops action=edit``): the sampled values being no-ops is no
  evidence for the others (a value-level rule, docs/rules.md, drops only those).
* Each stratum must show ``min(PARAM_MIN_POSITIVES, its URLs)`` positives, and its first URLs are
  drawn first (round-robin), or the rule is undecided (``partial_evidence``), as for URL families
  (:mod:`dustbuster.core.urls.families`, whose :class:`~dustbuster.core.urls.families.Family` records are
  reused).  :func:`evidence_strata` combines both.
"""

from __future__ import annotations

import re
from collections import Counter, defaultdict
from typing import Callable, Sequence
from urllib.parse import parse_qsl

from dustbuster.core.urls.families import FAMILY_GIVE_UP, Family, Strata
from dustbuster.core.validation.madesamples import MadeSamples
from dustbuster.core.urls.scope import split_url

#: positives each parameter stratum must show (or all of its URLs, when fewer)
PARAM_MIN_POSITIVES = 3
#: an enumerated parameter has at most this many values in the URLs a rule changes: each is a stratum
MAX_VALUE_STRATA = 8
_REVISION = re.compile(r"^(?:\d{3,}|(?=[0-9a-f]*\d)[0-9a-f]{7,}|\d{4}-?\d\d-?\d\d(?:[T ]?[\d:]+Z?)?)$", re.I)


def revision_like(value: str) -> bool:
    return bool(_REVISION.match(value))


def _query(url: str) -> dict[str, list[str]]:
    out: dict[str, list[str]] = defaultdict(list)
    for k, v in parse_qsl(split_url(url)[2][1:], keep_blank_values=True):
        out[k].append(v)
    return out


def changed_params(u: str, v: str) -> list[str]:
    """The strata names of what rewriting u into v does to u's parameters."""
    qu, qv = _query(u), _query(v)
    out = []
    for k, vals in qu.items():
        if k not in qv:
            out.append(f"drops {k}")
        elif qv[k] != vals:
            out.append(f"maps {k} ({'number' if all(x.isdigit() for x in vals) else 'text'})")
    return out


def _rest(url: str, name: str) -> str:
    head, path, tail = split_url(url)
    return head + path + "?" + "&".join(sorted(f"{k}={v}" for k, v in parse_qsl(tail[1:], keep_blank_values=True)
                                               if k != name))


def changed_pages(test_urls: Sequence[str], names: set[str]) -> dict[str, set[str]]:
    """For each revision-like parameter of ``names``: the test URLs whose rest of the URL carries two
    or more of its values (pages with a history in the log) and whose value is not the newest of
    them (an older state of a page that changed since)."""
    out: dict[str, set[str]] = {}
    for name in names:
        by_rest: dict[str, set[str]] = defaultdict(set)
        urls: dict[str, list[str]] = defaultdict(list)
        needle = name + "="
        for u in test_urls:
            if needle not in u:
                continue
            vals = _query(u).get(name)
            if vals and all(revision_like(x) for x in vals):
                r = _rest(u, name)
                by_rest[r].update(vals)
                urls[r].append(u)
        newest = {r: max(vals, key=_age) for r, vals in by_rest.items()}
        out[name] = {u for r, us in urls.items() if len(by_rest[r]) >= 2 for u in us
                     if _age(_query(u)[name][0]) < _age(newest[r])}
    return out


def _age(value: str) -> tuple:
    """Order of revision values: numbers by value, others (hex ids, dates) as text."""
    return (0, int(value), "") if value.isdigit() else (1, 0, value)


def value_strata(urls: Sequence[str], name: str) -> dict[str, list[str]]:
    """An enumerated parameter's values (2 to :data:`MAX_VALUE_STRATA` of them, each on two URLs
    on average at least: ``action=view|edit|history``, not a session id) → the URLs of ``urls``
    holding each: a rule that drops it needs positives across its values ({} otherwise)."""
    by_value: dict[str, list[str]] = defaultdict(list)
    for u in urls:
        vals = _query(u).get(name)
        if vals:
            by_value[vals[0]].append(u)
    if not 2 <= len(by_value) <= MAX_VALUE_STRATA or len(urls) < 2 * len(by_value):
        return {}
    return dict(sorted(by_value.items()))


class ParamStrata:
    """The parameter strata of one rule's changed test URLs (module docstring)."""

    def __init__(self, cands: list[str], rewrite: Callable[[str], str], test_urls: Sequence[str]) -> None:
        member: dict[str, list[str]] = defaultdict(list)
        changed = {u: changed_params(u, rewrite(u)) if "?" in u else [] for u in cands}
        for u, strata in changed.items():
            for s in strata:
                member[s].append(u)
        names = {s.split(" ", 2)[1] for s in member}
        hist = changed_pages(test_urls, names) if names else {}
        for name, urls in hist.items():
            for u in urls:
                if any(s == f"drops {name}" or s.startswith(f"maps {name} ") for s in changed.get(u, ())):
                    member[f"{name}: changed pages"].append(u)
        dropped = [n for n in names if f"drops {n}" in member]
        if len(dropped) == 1 and len(names) == 1:  # "remove P=*": positives across P's values
            for value, holding in value_strata(member[f"drops {dropped[0]}"], dropped[0]).items():
                member[f"drops {dropped[0]}={value}"] = holding
        if len(member) == 1 and not any(k.endswith("changed pages") for k in member):
            member.clear()  # one parameter changed: Figure 3's draw is its sample
        self.members, self.changed = dict(member), changed
        self.tested: Counter = Counter()  #: positives by parameter name (core/validation/narrow.py)
        self.positive_urls: list[str] = []
        self.of: dict[str, list[str]] = defaultdict(list)
        for s, us in self.members.items():
            for u in us:
                self.of[u].append(s)
        self.strata = {s: Family(s, len(us), True, True) for s, us in self.members.items()}

    def required(self, f: Family) -> int:
        return min(PARAM_MIN_POSITIVES, f.urls)

    def short_list(self) -> list[Family]:
        return [f for f in self.strata.values() if f.positives < self.required(f) and not f.gone]

    def _short(self, s: str) -> bool:
        f = self.strata[s]
        return f.positives < self.required(f) and f.skipped < FAMILY_GIVE_UP

    def order(self, draw: list[str]) -> list[str]:
        if not self.strata:
            return draw
        pos = {u: k for k, u in enumerate(draw)}
        firsts = [sorted(us, key=lambda u: pos.get(u, 0))[:PARAM_MIN_POSITIVES + 1] for us in self.members.values()]
        front = list(dict.fromkeys(u for k in range(PARAM_MIN_POSITIVES + 1) for us in firsts if k < len(us)
                                   for u in [us[k]]))
        lifted = set(front)
        return front + [u for u in draw if u not in lifted]

    def wanted(self, u: str) -> bool:
        return any(self._short(s) for s in self.of.get(u, ()))

    def open_short(self) -> bool:
        return any(self._short(s) for s in self.strata)

    def failed(self, u: str, reason: str) -> None:
        for s in self.of.get(u, ()):
            self.strata[s].skipped += 1
            self.strata[s].failures[reason or "failed"] += 1

    def compared(self, u: str, positive: bool) -> None:
        if positive:
            self.tested.update({s.split(" ", 2)[1] for s in self.changed.get(u, ())})
            self.positive_urls.append(u)
        for s in self.of.get(u, ()):
            if positive:
                self.strata[s].positives += 1
            else:
                self.strata[s].negatives += 1

    def evidence(self) -> list[dict]:
        return [f.to_json() | {"family": f.name, "required": self.required(f),
                               "short": f.positives < self.required(f)} for f in self.strata.values()]


class EvidenceStrata:
    """URL families (core/urls/families.py) and parameter strata together, as Figure 3's loop uses them;
    and the rule's made samples (core/validation/madesamples.py): drawn last, counted apart."""

    def __init__(self, fam: Strata, par: ParamStrata, made: MadeSamples | None = None) -> None:
        self.fam, self.par, self.made = fam, par, made or MadeSamples()

    def order(self, draw: list[str]) -> list[str]:
        return self.made.order(self.par.order(self.fam.order(draw)))

    def wanted(self, u: str, topping_up: bool) -> bool:
        if not topping_up:
            return self.fam.wanted(u, False)
        return self.fam.wanted(u, True) or self.par.wanted(u)

    def open_short(self) -> bool:
        return self.fam.open_short() or self.par.open_short()

    def failed(self, u: str, reason: str) -> None:
        self.fam.failed(u, reason)
        self.par.failed(u, reason)
        self.made.failed(u, reason)

    def compared(self, u: str, positive: bool) -> None:
        self.fam.compared(u, positive)
        self.par.compared(u, positive)
        self.made.compared(u, positive)

    def short(self) -> list[Family]:
        return self.fam.short() + self.par.short_list()

    def evidence(self) -> list[dict]:
        return self.fam.evidence()

    def param_evidence(self) -> list[dict]:
        return self.par.evidence()


def evidence_strata(cands: list[str], scope: str, rewrite: Callable[[str], str],
                    test_urls: Sequence[str], made: MadeSamples | None = None) -> EvidenceStrata:
    """The strata of ``cands`` and the made u's (``made``: drawn after them)."""
    urls = cands + made.urls if made is not None else cands
    return EvidenceStrata(Strata(urls, scope), ParamStrata(urls, rewrite, test_urls), made)


__all__ = ["PARAM_MIN_POSITIVES", "EvidenceStrata", "ParamStrata", "changed_pages", "changed_params",
           "evidence_strata", "revision_like"]
