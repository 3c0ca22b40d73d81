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
* remove-rule evidence: each URL with p whose p-less form is also in the list; and, where a replace
  group's p-less form is not listed, the group's own comparisons (:func:`replace_removals`: the
  thesis derives the omit rule from the same evidence as the replace rule, §5.3; used by the scoped
  miners, core/mining/scoped.py and core/mining/qscope.py, not by the paper-language candidates below);
* support = likely-similar comparisons, ``disqualified`` = the others; a rule is kept when
  support >= MS and support / (support + disqualified) >= ``param_min_ratio``.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from dataclasses import dataclass

from dustbuster.core.params import DustParams
from dustbuster.core.urls.urlindex import Occurrence, URLIndex
from dustbuster.core.urls.urllist import URLList


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


def param_occurrences(urllist: URLList, max_items: int = 0, index: URLIndex | None = None,
                      params: DustParams | None = None) -> dict[str, list[Occurrence]]:
    """Each parameter name → its first ``name=value`` item in every URL that has one, in list order
    (URLs with more than ``max_items`` query items left out when it is > 0).  Rows are
    :data:`~dustbuster.core.urls.urlindex.Occurrence` tuples, from the shared parse (``index``)."""
    same = index is not None and index.urllist is urllist  # occurrences depend on no parameter
    occ = (index if same else URLIndex(urllist, params)).occurrences()  # type: ignore[union-attr]
    if not max_items:
        return dict(occ)
    out: dict[str, list[Occurrence]] = {}
    for name, rows in occ.items():
        kept = [r for r in rows if r[4] <= max_items]
        if kept:
            out[name] = kept
    return out


def detect_param_rules(urllist: URLList, params: DustParams | None = None,
                       index: URLIndex | None = None) -> tuple[list[ParamCandidate], list[ParamCandidate]]:
    """Returns ``(kept, all_candidates)``, both sorted by support (desc), then name, remove first.
    ``index``: the URLs already parsed for this list and ``params`` (core/urls/urlindex.py)."""
    params = params or DustParams()
    ix = URLIndex.of(urllist, params, index)
    cands: list[ParamCandidate] = []
    for name, rows in ix.occurrences().items():
        if len(rows) < params.param_min_urls:
            continue
        counts = Counter(r[1] for r in rows)
        best = max(counts.values())
        default = min(v for v, c in counts.items() if c == best)
        sup, dis = _replace_support(ix, name, default)
        cands.append(ParamCandidate(name, "replace", default, sup, dis, len(rows)))
        # remove-rule evidence
        sup = dis = 0
        for row in rows:
            similar = ix.removal(row[0], name)
            if similar is not None:
                if similar:
                    sup += 1
                else:
                    dis += 1
        cands.append(ParamCandidate(name, "remove", None, sup, dis, len(rows)))
    cands.sort(key=lambda c: (-c.support, c.name, c.action != "remove"))
    kept = [c for c in cands if c.support >= params.ms and c.ratio >= params.param_min_ratio]
    return kept, cands


def replace_groups(ix: URLIndex, name: str, max_items: int = 0) -> list[list[tuple[str, str]]]:
    """The URLs with the parameter grouped by their text with its (first) value blanked, in order
    of first appearance: the thesis' "buckets whose prefix ends with the parameter name" (§5.3);
    each member is ``(value, url)``.  Groups of one member left out, and with ``max_items`` the
    groups of URLs with more query items (the members of a group have as many).  Made once per
    name and index."""
    key = ("replace_groups", name)
    groups = ix.cache.get(key)
    if groups is None:
        by_key: dict[str, list[tuple[str, str]]] = defaultdict(list)
        for url, value, start, end, _ in ix.occurrences().get(name, ()):
            by_key[url[:start] + "\x00" + url[end:]].append((value, url))
        groups = ix.cache[key] = [g for g in by_key.values() if len(g) > 1]
    if max_items:
        entries = ix.entries
        return [g for g in groups if len(entries[g[0][1]][1]) <= max_items]  # type: ignore[arg-type]
    return groups


def replace_removals(ix: URLIndex, name: str, max_items: int = 0) -> list[tuple[str, bool]]:
    """Remove-rule evidence read off the replace evidence (thesis §5.3: "for each parameter p, we
    choose some value v_p and add two rules: the first replaces the value of p with v_p, the second
    omits the parameter altogether" -- both from the same buckets).  For each replace group
    (:func:`replace_groups`) whose p-less form is **not** in the list (where it is listed, each
    member's own removal is the evidence, :meth:`URLIndex.removal`): every member other than the
    member of smallest value, with whether the two are LikelySimilar.  URLs that differ only in
    p's value and show one page say p is a no-op there, whether or not a p-less link was ever
    followed (a site that always links its login page with ``returnto=`` never logs the bare URL).
    Beyond the paper: the thesis keeps both rules on one support count; we count these comparisons
    as remove evidence only where the p-less form is unlisted, and the validator decides the rule by
    fetching the p-less form (core/validation/validate.py)."""
    key = ("replace_removals", name, max_items)
    out = ix.cache.get(key)
    if out is None:
        out = []
        for members in replace_groups(ix, name, max_items):
            rep = min(members)[1]
            if ix.without(rep, name) in ix.entries:
                continue  # the p-less form is listed: the thesis' own remove evidence speaks
            out += [(u, ix.similar(u, rep)) for _, u in members if u != rep]
        ix.cache[key] = out
    return out


def _replace_support(ix: URLIndex, name: str, default: str) -> tuple[int, int]:
    """Replace-rule evidence: each group member compared with the group's v_p member (or, without
    one, the member of smallest value)."""
    sup = dis = 0
    for members in replace_groups(ix, name):
        rep = next((u for v, u in members if v == default), None) or min(members)[1]
        for _, u in members:
            if u == rep:
                continue
            if ix.similar(u, rep):
                sup += 1
            else:
                dis += 1
    return sup, dis
