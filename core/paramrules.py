"""Phase 3: parameter substitution rules (thesis §5.3).

"We can employ a simple regular expression search on URLs in the URL list in order to detect
popular parameters ... For each parameter p, we choose some value v_p and add two rules: the
first replaces the value of p with v_p, the second omits the parameter altogether."  Candidates
are kept when their supporting URL pairs are LikelySimilar, by the same size/digest/sketch test
as phase 1.

Choices (the thesis omits the details; docs/semantics.md):

* popular: the parameter occurs (as ``name=value``) in at least ``param_min_urls`` distinct URLs;
* v_p: the value seen in most distinct URLs; ties go to the smallest value;
* replace-rule evidence: the URLs with p are grouped by their text with p's (first) value blanked
  (the thesis' "buckets whose prefix ends with the parameter name"); in each group of two or more,
  every member is compared with the group's v_p member, or, without one, with the member of
  smallest value.  "Arbitrary value" evidence, as the thesis asks;
* remove-rule evidence: each URL with p whose p-less form is also in the list;
* support = likely-similar comparisons, ``disqualified`` = the others; a rule is kept when
  support >= MS and support / (support + disqualified) >= ``param_min_ratio``.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from dataclasses import dataclass

from . import query
from .params import DustParams
from .urllist import URLList


@dataclass(frozen=True, slots=True)
class ParamCandidate:
    name: str
    action: str  # "remove" | "replace"
    value: str | None
    support: int
    disqualified: int
    urls: int  # distinct URLs carrying the parameter

    @property
    def ratio(self) -> float:
        total = self.support + self.disqualified
        return self.support / total if total else 0.0


Occurrence = tuple[str, str, int, str, list]  #: (url, value, item index, base, items)


def param_occurrences(urllist: URLList, max_items: int = 0) -> dict[str, list[Occurrence]]:
    """Each parameter name → its first ``name=value`` item in every URL that has one, in list order
    (URLs with more than ``max_items`` query items left out when it is > 0)."""
    occ: dict[str, list[Occurrence]] = defaultdict(list)
    for url in urllist:
        base, items = query.split(url)
        if not items or (max_items and len(items) > max_items):
            continue
        seen: set[str] = set()
        for idx, (name, value) in enumerate(items):
            if value is None or not name or name in seen:
                continue
            seen.add(name)
            occ[name].append((url, value, idx, base, items))
    return occ


def detect_param_rules(urllist: URLList, params: DustParams | None = None) -> tuple[list[ParamCandidate], list[ParamCandidate]]:
    """Returns ``(kept, all_candidates)``, both sorted by support (desc), then name, remove first."""
    params = params or DustParams()
    occ = param_occurrences(urllist)
    cands: list[ParamCandidate] = []
    for name, rows in occ.items():
        if len(rows) < params.param_min_urls:
            continue
        counts = Counter(v for _, v, _, _, _ in rows)
        best = max(counts.values())
        default = min(v for v, c in counts.items() if c == best)
        # replace-rule evidence
        groups: dict[str, list[tuple[str, str]]] = defaultdict(list)
        for url, value, idx, base, items in rows:
            ctx = list(items)
            ctx[idx] = (name, "\x00")
            groups[query.join(base, ctx)].append((value, url))
        sup = dis = 0
        for members in groups.values():
            if len(members) < 2:
                continue
            rep = next((u for v, u in members if v == default), None) or min(members)[1]
            for _, u in members:
                if u == rep:
                    continue
                if urllist.similar(u, rep, params):
                    sup += 1
                else:
                    dis += 1
        cands.append(ParamCandidate(name, "replace", default, sup, dis, len(rows)))
        # remove-rule evidence
        sup = dis = 0
        for url, *_ in rows:
            v = query.remove_param(url, name)
            if v != url and v in urllist:
                if urllist.similar(url, v, params):
                    sup += 1
                else:
                    dis += 1
        cands.append(ParamCandidate(name, "remove", None, sup, dis, len(rows)))
    cands.sort(key=lambda c: (-c.support, c.name, c.action != "remove"))
    kept = [c for c in cands if c.support >= params.ms and c.ratio >= params.param_min_ratio]
    return kept, cands
