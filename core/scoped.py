"""Mining the scoped rules: parameter rules per path scope, whole-query rules and parameter order
(beyond the papers; docs/rules.md).  The likely-similar test is the thesis' (§5.3): a comparison of
two URLs of the list counts as support when LikelySimilar (core/urllist.py), else as disqualified.

Evidence, per comparison (u, v), is attributed to every scope that covers u's path
(:func:`dustbuster.core.scope.scopes_of`): the whole site ``""``, ``/a``, ``/a/b``, ...

* parameter ``p``, remove: u carries p and its p-less form v is in the list (as the thesis);
* parameter ``p``, replace with v_p: u and v differ only in p's value, v has the scope's most
  common value v_p (as core/paramrules.py, the value chosen per scope);
* whole query: u and v have the same scheme, host and path and different queries (v is the
  query-less URL when listed, else the member with the shortest query);
* order: u and v have the same path and the same query items in another order.

A scope **holds** when support >= MS and support / (support + disqualified) >= ``param_min_ratio``
and no narrower scope inside it with at least MS comparisons falls below that ratio (a parameter
that is a no-op under ``/wiki`` and meaningful under ``/wiki/History`` does not hold at ``/wiki``).
The rules are the widest holding scopes (a scope inside a holding one is not listed).  A rule
that sets a value or drops or sorts the whole query is narrowed to the common scope of the paths of
its supporting comparisons (``sort=* → sort=ticket`` seen only under ``/report/1`` is a rule for
``/report/1``, not for the whole site: a value and a whole query mean something per script); a
remove rule keeps the widest holding scope (a session id seen on one script is a session id on
every script, and the validator tests it on every test URL that carries it).  A query
rule is only listed when its evidence involves at least two parameter names (otherwise the
parameter rule says the same, and says it more narrowly).  Where dropping the whole query does not
hold, "drop the query but K" is tried with K = the scope's meaningful parameters (those whose
removal mostly changes the page there, at least MS times): URLs of one path with the same K items
and other queries are compared.  Choices are ours; the validator
decides every rule by fetching.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from dataclasses import dataclass, field

from . import query
from .paramrules import Occurrence, param_occurrences
from .params import DustParams
from .rules import ParamRule
from .scope import scopes_of, split_url
from .scopedrules import QueryRule
from .urllist import URLList

Tally = dict[str, list[int]]  #: scope -> [support, disqualified]
MAX_KEEP = 4  #: a "drop the query but K" rule keeps at most this many parameters
#: URLs with more query items than this are left out of the scoped miners (each item of each URL is
#: compared: quadratic in the items; no real page has that many parameters, a hostile log may)
MAX_ITEMS = 64


@dataclass
class _Evidence:
    tally: Tally = field(default_factory=lambda: defaultdict(lambda: [0, 0]))
    names: dict[str, set] = field(default_factory=lambda: defaultdict(set))
    spread: dict[str, list[str]] = field(default_factory=dict)  #: scope -> scopes_of its evidence's LCA

    def add(self, path: str, similar: bool, names: tuple[str, ...] = ()) -> None:
        mine = scopes_of(path)
        for s in mine:
            self.count(s, similar, mine)
            if names:
                self.names[s].update(names)

    def count(self, scope: str, similar: bool, path_scopes: list[str]) -> None:
        self.tally[scope][0 if similar else 1] += 1
        if similar:
            old = self.spread.get(scope)
            self.spread[scope] = path_scopes if old is None else _common(old, path_scopes)

    def narrowed(self, scope: str) -> str:
        """The narrowest scope around ``scope``'s supporting comparisons (their paths' common
        scope): a rule seen only under ``/report/1`` is not stated for the whole site."""
        return self.spread[scope][-1] if scope in self.spread else scope


def _common(a: list[str], b: list[str]) -> list[str]:
    k = 0
    while k < len(a) and k < len(b) and a[k] == b[k]:
        k += 1
    return a[:k]


def holding_scopes(tally: Tally, params: DustParams) -> list[str]:
    """The widest scopes that hold (module docstring), sorted."""
    ms, ratio = params.ms, params.param_min_ratio

    def ok(s: str) -> bool:
        sup, dis = tally[s]
        return sup >= ms and sup >= ratio * (sup + dis)

    vetoed: set[str] = set()  # every scope around a failing one (linear, not pairwise)
    for s, (sup, dis) in tally.items():
        if sup + dis >= ms and not ok(s):
            vetoed.update(scopes_of(s))
    holds = sorted(s for s in tally if ok(s) and s not in vetoed)
    held = set(holds)
    return [s for s in holds if not any(a in held for a in scopes_of(s)[:-1])]


def _within(inner: str, outer: str) -> bool:
    return not outer or inner == outer or inner.startswith(outer + "/")


def _param_rows(urllist: URLList, min_urls: int) -> dict[str, list[Occurrence]]:
    occ = param_occurrences(urllist, MAX_ITEMS)
    return {n: rows for n, rows in occ.items() if len(rows) >= min_urls}


def _remove_evidence(urllist: URLList, name: str, rows: list, params: DustParams) -> _Evidence:
    ev = _Evidence()
    for url, *_ in rows:
        v = query.remove_param(url, name)
        if v != url and v in urllist:
            ev.add(split_url(url)[1], urllist.similar(url, v, params))
    return ev


def _replace_evidence(urllist: URLList, name: str, rows: list, params: DustParams) -> tuple[_Evidence, dict[str, str]]:
    """Comparisons with the most common value of each group's widest scope; returns the evidence
    and each scope's value (its most common value, ties to the smallest)."""
    counts: dict[str, Counter] = defaultdict(Counter)
    for url, value, *_ in rows:
        for s in scopes_of(split_url(url)[1]):
            counts[s][value] += 1
    default = {s: min(c, key=lambda v: (-c[v], v)) for s, c in counts.items()}
    groups: dict[str, list[tuple[str, str]]] = defaultdict(list)
    for url, value, idx, base, items in rows:
        ctx = list(items)
        ctx[idx] = (name, "\x00")
        groups[query.join(base, ctx)].append((value, url))
    ev = _Evidence()
    for members in groups.values():
        if len(members) < 2:
            continue
        mine = scopes_of(split_url(members[0][1])[1])
        for s in mine:
            rep = next((u for v, u in members if v == default[s]), None) or min(members)[1]
            for _, u in members:
                if u != rep:
                    ev.count(s, urllist.similar(u, rep, params), mine)
    return ev, default


def mine_scoped_param_rules(urllist: URLList, params: DustParams) -> list[ParamRule]:
    """Scoped parameter rules (remove, replace) at their widest holding scopes; a rule whose
    scope is the whole site is the thesis' global rule."""
    out: list[ParamRule] = []
    for name, rows in sorted(_param_rows(urllist, params.param_min_urls).items()):
        ev = _remove_evidence(urllist, name, rows, params)
        removed = holding_scopes(ev.tally, params)
        for s in removed:
            sup, dis = ev.tally[s]
            out.append(ParamRule(name, "remove", None, sup, dis, "likely", _ev(len(rows), sup, dis), s))
        rev, default = _replace_evidence(urllist, name, rows, params)
        for s in holding_scopes(rev.tally, params):
            if any(_within(s, r) for r in removed):
                continue  # removing it there says more
            scope = rev.narrowed(s)
            sup, dis = rev.tally[scope]
            out.append(ParamRule(name, "replace", default[s], sup, dis, "likely", _ev(len(rows), sup, dis), scope))
    out.sort(key=lambda r: (-r.support, r.name, r.scope, r.action != "remove"))
    return out


def _ev(urls: int, sup: int, dis: int) -> dict:
    return {"urls_with_param": urls, "similar_ratio": round(sup / (sup + dis), 4) if sup + dis else 0.0}


def mine_query_rules(urllist: URLList, params: DustParams) -> list[QueryRule]:
    """Whole-query (drop) and order (sort) rules at their widest holding scopes."""
    by_path: dict[str, list[str]] = defaultdict(list)
    for url in urllist:
        if url.count("&") < MAX_ITEMS:
            by_path[url.split("?", 1)[0]].append(url)
    drop, order = _Evidence(), _Evidence()
    for base, urls in by_path.items():
        if len(urls) >= 2:
            _query_evidence(urllist, params, urls, drop, order)
    held = holding_scopes(drop.tally, params)
    out = [_query_rule(drop, s, "drop") for s in held if len(drop.names[s]) >= 2]
    held_set = set(held)
    failed = sorted(s for s, (sup, dis) in drop.tally.items()
                    if sup + dis >= params.ms and not held_set.intersection(scopes_of(s)))
    out += _keep_rules(urllist, params, {b: us for b, us in by_path.items()
                                         if not held_set.intersection(scopes_of(split_url(b)[1]))}, failed)
    out += [_query_rule(order, s, "sort") for s in holding_scopes(order.tally, params)]
    return out


def _query_evidence(urllist: URLList, params: DustParams, urls: list[str], drop: _Evidence,
                    order: _Evidence) -> None:
    """One path's comparisons: each spelling of a query (its items sorted by name, as the sort rule
    writes it) once with the path's shortest URL (drop), the other spellings with the shortest of
    theirs (order).  Representatives are the shortest URLs, whatever the list's order."""
    path = split_url(urls[0])[1]
    rep = min(urls, key=lambda u: (len(u), u))
    forms: dict[tuple, list[str]] = defaultdict(list)
    for u in urls:
        forms[tuple(sorted(query.split(u)[1] or (), key=lambda it: it[0]))].append(u)
    rep_names = {n for n, _ in query.split(rep)[1] or ()}
    for key, members in forms.items():
        first = min(members, key=lambda u: (len(u), u))
        names = tuple(sorted({n for n, _ in key}))
        for u in members:
            if u != first:
                order.add(path, urllist.similar(u, first, params), names)
        if first != rep:
            drop.add(path, urllist.similar(first, rep, params), tuple(sorted(set(names) ^ rep_names)))


def _query_rule(ev: _Evidence, held: str, action: str) -> QueryRule:
    scope = ev.narrowed(held)
    sup, dis = ev.tally[scope]
    names = sorted(ev.names[scope])
    return QueryRule(scope, action, (), sup, dis, "likely",
                     {"comparisons": sup + dis, "parameters": names[:10], "similar_ratio": round(sup / (sup + dis), 4)})


def _meaningful(urllist: URLList, params: DustParams) -> dict[str, set[str]]:
    """Scope → the parameters whose removal mostly changes the page there (at least MS comparisons
    not likely similar, more than the similar ones): what a "drop but …" rule must keep."""
    tally: dict[tuple[str, str], list[int]] = defaultdict(lambda: [0, 0])
    for url in urllist:
        base, items = query.split(url)
        if items and len(items) > MAX_ITEMS:
            continue
        for name in {n for n, v in items or () if v is not None}:
            v = query.remove_param(url, name)
            if v != url and v in urllist:
                ok = urllist.similar(url, v, params)
                for s in scopes_of(split_url(base)[1]):
                    tally[(s, name)][0 if ok else 1] += 1
    out: dict[str, set[str]] = defaultdict(set)
    for (s, name), (sup, dis) in tally.items():
        if dis >= params.ms and dis > sup:
            out[s].add(name)
    return out


def _keep_rules(urllist: URLList, params: DustParams, by_path: dict[str, list[str]],
                failed: list[str]) -> list[QueryRule]:
    """"Drop the query but K" where dropping it all fails (``by_path`` holds no URL of a scope where
    it holds): K = the scope's meaningful parameters; evidence = URLs of one path with the same K
    items and other queries (compared with the shortest of them); kept when the scope holds and at
    least two other names are involved.  Each scope reads only its own paths (an index by scope)."""
    meaningful = _meaningful(urllist, params)
    bases: dict[str, list[str]] = defaultdict(list)
    for base in by_path:
        for s in scopes_of(split_url(base)[1]):
            bases[s].append(base)
    out: list[QueryRule] = []
    for scope in failed:
        keep = meaningful.get(scope)
        if not keep or len(keep) > MAX_KEEP or any(_within(scope, r.scope) for r in out):
            continue
        ev = _Evidence()
        for base in bases.get(scope, ()):
            _keep_evidence(urllist, params, by_path[base], keep, scope, ev)
        if scope in holding_scopes({scope: ev.tally[scope]}, params) and len(ev.names[scope]) >= 2:
            sup, dis = ev.tally[scope]  # the comparisons counted for this scope
            out.append(QueryRule(ev.narrowed(scope), "drop", tuple(sorted(keep)), sup, dis, "likely",
                                 {"comparisons": sup + dis, "parameters": sorted(ev.names[scope])[:10],
                                  "similar_ratio": round(sup / (sup + dis), 4)}))
    return out


def _keep_evidence(urllist: URLList, params: DustParams, urls: list[str], keep: set[str], scope: str,
                   ev: _Evidence) -> None:
    """One path's comparisons for "drop the query but ``keep``" in ``scope``."""
    path_scopes = scopes_of(split_url(urls[0])[1])
    groups: dict[tuple, list[str]] = defaultdict(list)
    for u in urls:
        groups[tuple(it for it in query.split(u)[1] or () if it[0] in keep)].append(u)
    for members in groups.values():
        rep = min(members, key=lambda u: (len(u), u))
        for u in members:
            if u != rep:
                ev.count(scope, urllist.similar(u, rep, params), path_scopes)
                ev.names[scope].update(n for n, _ in query.split(u)[1] or () if n not in keep)
