"""Mining case rules (beyond the papers; docs/rules.md): where does the site case-fold its paths?

A :class:`~dustbuster.core.model.scopedrules.CaseRule` lower-cases the path below a scope.  Its
evidence is in the URL list itself: two URLs that differ only in the case of their path
(``/wiki/Main_Page`` and ``/wiki/main_page``, same scheme, host and query).  Each such pair is
compared with LikelySimilar (WWW 2007 §4, :meth:`URLList.similar`), in the style of the thesis'
parameter rules (§5.3, core/mining/paramrules.py): a likely-similar comparison supports, another one
disqualifies.

Choices:

* only URLs with a scheme and host take part (a :class:`CaseRule` leaves other strings alone);
* URLs are grouped by (head, lower-cased path, query); in a group, every pair of distinct members
  is compared, the members taken in sorted order and at most :data:`MAX_GROUP` of them;
* a pair's outcome counts for every scope of its path (``scopes_of``) whose literal is identical
  in both spellings: the scope ends before the first character where the two paths differ (the
  rule keeps the scope's text and lower-cases what follows, so both spellings meet);
* a scope holds when support >= ``params.ms`` and support / (support + disqualified) >=
  ``params.param_min_ratio``; the widest holding scopes are returned (a holding scope inside a
  wider holding one is dropped), sorted by scope; ``evidence``: ``pairs`` (comparisons counted for
  the scope) and ``examples`` (the first supporting pair, ``[u, v]``).
"""

from __future__ import annotations

from collections import defaultdict
from itertools import combinations

from dustbuster.core.params import DustParams
from dustbuster.core.urls.scope import in_scope, scopes_of, split_url
from dustbuster.core.model.scopedrules import CaseRule
from dustbuster.core.urls.urlindex import URLIndex
from dustbuster.core.urls.urllist import URLList

#: the most spellings of one URL compared pairwise (k spellings make k(k-1)/2 comparisons)
MAX_GROUP = 16


def case_groups(urllist: URLList, index: URLIndex | None = None) -> list[list[str]]:
    """Groups (sorted, two or more members) of listed URLs that differ only in the case of their
    path; the groups are sorted by their first member.  ``index``: the shared parse of the list
    (core/urls/urlindex.py), when there is one."""
    groups: dict[tuple[str, str, str], set[str]] = defaultdict(set)
    if index is None or index.urllist is not urllist:
        for url in urllist:
            head, path, tail = split_url(url)
            if head and path:
                groups[(head, path.lower(), tail)].add(url)
    else:
        paths = index.paths()
        first: dict[tuple[str, str, str], str] = {}  # a set only for a key seen twice (few)
        for url, (base, _) in index.entries.items():
            path = paths[base][0]
            if path and len(base) > len(path):  # split_url's head: the base before its path
                key = (base[:len(base) - len(path)], path.lower(), url[len(base):])
                other = first.setdefault(key, url)
                if other != url:
                    groups[key].update((other, url))
    return sorted((sorted(g) for g in groups.values() if len(g) > 1), key=lambda g: g[0])


def _first_difference(a: str, b: str) -> int:
    for k, (x, y) in enumerate(zip(a, b)):
        if x != y:
            return k
    return min(len(a), len(b))


def _pair_scopes(u: str, v: str) -> list[str]:
    """The scopes of the pair whose literal both spellings share (module docstring)."""
    pu, pv = split_url(u)[1], split_url(v)[1]
    d = _first_difference(pu, pv)
    return [s for s in scopes_of(pu) if len(s) <= d and in_scope(pv, s)]


def mine_case_rules(urllist: URLList, params: DustParams | None = None,
                    index: URLIndex | None = None) -> list[CaseRule]:
    """The widest scopes under which paths differing only in case look like the same page.
    ``index``: the shared parse of the list and its LikelySimilar outcomes (core/urls/urlindex.py)."""
    from dustbuster.core.mining.scoped import _Evidence, holding_scopes  # one scope test for every scoped miner

    params = params or DustParams()
    ix = URLIndex.of(urllist, params, index)
    ev = _Evidence()
    example: dict[str, list[str]] = {}
    for group in case_groups(urllist, ix):
        for u, v in combinations(group[:MAX_GROUP], 2):
            similar = ix.similar(u, v)
            scopes = _pair_scopes(u, v)
            for s in scopes:
                ev.count(s, similar, scopes)
                if similar:
                    example.setdefault(s, [u, v])
    out = []
    for s in holding_scopes(ev.tally, params):
        scope = ev.narrowed(s)  # as a whole query: a case rule is stated where it was seen
        sup, dis = ev.tally[scope]
        out.append(CaseRule(scope, sup, dis, evidence={"pairs": sup + dis, "examples": example[s]}))
    return out
