"""Mining the scoped rules: parameter rules per path scope, whole-query rules and parameter order
(beyond the papers; docs/rules.md).  The likely-similar test is the thesis' (§5.3): a comparison of
two URLs of the list counts as support when LikelySimilar (core/urls/urllist.py), else as disqualified.

Evidence, per comparison (u, v), is attributed to every scope that covers u's path
(:func:`dustbuster.core.urls.scope.scopes_of`): the whole site ``""``, ``/a``, ``/a/b``, ...

* parameter ``p``, remove: u carries p and its p-less form v is in the list (as the thesis); where
  the p-less form of a replace group (below) is in no log line, the group's comparisons (each member
  with the member of smallest value) count as remove evidence too (thesis §5.3 draws the omit rule
  from the replace rule's buckets; core/mining/paramrules.py :func:`replace_removals`).  A remove rule that
  holds only with that evidence is narrowed as a replace rule is (its evidence is a replace rule's),
  and listed beside the replace rule (not instead of it: the p-less page may not exist, and the
  validator decides each);
* parameter ``p``, replace with v_p: u and v differ only in p's value, v has the scope's most
  common value v_p (as core/mining/paramrules.py, the value chosen per scope);
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
every script, and the validator tests it on every test URL that carries it); where it holds at no
path scope, it is tried under query-parameter scopes (``?title=Special:UserLogin``, core/mining/qscope.py).  A query
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
from operator import itemgetter
from typing import Any, Iterable, Sequence

from dustbuster.core.mining.paramrules import param_occurrences, replace_groups, replace_removals
from dustbuster.core.errors import RuleError
from dustbuster.core.params import DustParams
from dustbuster.core.mining.qscope import query_scoped_removes
from dustbuster.core.model.rules import ParamRule
from dustbuster.core.urls.scope import scope_names, scopes_of
from dustbuster.core.model.scopedrules import QueryRule
from dustbuster.core.urls.urlindex import Occurrence, URLIndex
from dustbuster.core.urls.urllist import URLList

Tally = dict[str, list[int]]  #: scope -> [support, disqualified]
MAX_KEEP = 4  #: a "drop the query but K" rule keeps at most this many parameters
#: a "drop the query but K" rule drops exactly the names its evidence compared (a closed list: a
#: name first seen later is kept, never dropped unseen), and is not proposed when they are more
MAX_DROPPED = 32
#: URLs with more query items than this are left out of the scoped miners (each item of each URL is
#: compared: quadratic in the items; no real page has that many parameters, a hostile log may)
MAX_ITEMS = 64
_NAME = itemgetter(0)  #: a query item's name
_NO_EVIDENCE: tuple[int, int, set[str]] = (0, 0, set())  #: a path's "drop but K" evidence without comparisons (never changed)

#: characters no parameter name a query rule lists may hold (core/model/scopedrules.py)
_UNLISTABLE = frozenset("&=?#")
_UNVALUED = frozenset("&#")  #: characters no value a value-level rule lists may hold
#: a parameter with more values than this is no enumeration (a session id, a search term): no value-level rule
MAX_ENUMERATED = 64
#: values one value-level rule removes at most
MAX_VALUE_RULE_VALUES = 8


@dataclass
class _Evidence:
    tally: Tally = field(default_factory=lambda: defaultdict(lambda: [0, 0]))
    names: dict[str, set] = field(default_factory=lambda: defaultdict(set))
    spread: dict[str, Sequence[str]] = field(default_factory=dict)  #: scope -> scopes_of its evidence's LCA

    def add(self, path: str, similar: bool, names: tuple[str, ...] = ()) -> None:
        self.add_many(scopes_of(path), int(similar), int(not similar), names)

    def add_many(self, path_scopes: Sequence[str], sup: int, dis: int, names: Iterable[str] = ()) -> None:
        """``sup + dis`` comparisons of URLs of one path (``path_scopes`` = its scopes), counted for
        every scope of the path, ``names`` the union of their parameter names."""
        for s in path_scopes:
            self.count_many(s, sup, dis, path_scopes)
            if names:
                self.names[s].update(names)

    def count(self, scope: str, similar: bool, path_scopes: Sequence[str]) -> None:
        self.count_many(scope, int(similar), int(not similar), path_scopes)

    def count_many(self, scope: str, sup: int, dis: int, path_scopes: Sequence[str]) -> None:
        """``sup`` likely-similar and ``dis`` other comparisons of URLs whose path has
        ``path_scopes``, counted for ``scope`` (as many :meth:`count` calls)."""
        t = self.tally[scope]
        t[0] += sup
        t[1] += dis
        if sup:
            old = self.spread.get(scope)
            self.spread[scope] = path_scopes if old is None else _common(old, path_scopes)

    def narrowed(self, scope: str) -> str:
        """The narrowest scope around ``scope``'s supporting comparisons (their paths' common
        scope): a rule seen only under ``/report/1`` is not stated for the whole site."""
        return self.spread[scope][-1] if scope in self.spread else scope


def _common(a: Sequence[str], b: Sequence[str]) -> Sequence[str]:
    if a is b:
        return a
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


def failing_scopes(tally: Tally, params: DustParams) -> list[str]:
    """The scopes the evidence refutes: at least MS comparisons, the similar share below
    ``param_min_ratio`` (what vetoes a wider scope in :func:`holding_scopes`)."""
    ms, ratio = params.ms, params.param_min_ratio
    return [s for s, (sup, dis) in tally.items() if sup + dis >= ms and sup < ratio * (sup + dis)]


def _within(inner: str, outer: str) -> bool:
    return not outer or inner == outer or inner.startswith(outer + "/")


def _remove_evidence(ix: URLIndex, name: str, rows: list[Occurrence],
                     derived: Sequence[tuple[str, bool]] = ()) -> _Evidence:
    """Each URL with the parameter whose parameter-less form is listed (thesis §5.3), and the
    ``derived`` comparisons (:func:`replace_removals`), counted per path (the comparisons of one path
    share their scopes)."""
    url_scopes = ix.url_scopes()
    per_path: dict[int, list] = {}
    own = ((row[0], ix.removal(row[0], name)) for row in rows)
    for url, similar in (*own, *derived):
        if similar is not None:
            scopes = url_scopes[url]
            acc = per_path.get(id(scopes))
            if acc is None:
                acc = per_path[id(scopes)] = [scopes, 0, 0]
            acc[1 if similar else 2] += 1
    ev = _Evidence()
    for scopes, sup, dis in per_path.values():
        ev.add_many(scopes, sup, dis)
    return ev


def _replace_evidence(ix: URLIndex, name: str, rows: list[Occurrence]) -> tuple[_Evidence, dict[str, str]]:
    """Comparisons with the most common value of each group's widest scope; returns the evidence
    and each scope's value (its most common value, ties to the smallest)."""
    url_scopes = ix.url_scopes()
    per_path: dict[int, tuple[tuple[str, ...], Counter]] = {}
    for url, value, *_ in rows:
        scopes = url_scopes[url]
        acc = per_path.get(id(scopes))
        if acc is None:
            acc = per_path[id(scopes)] = (scopes, Counter())
        acc[1][value] += 1
    counts: dict[str, Counter] = defaultdict(Counter)
    for scopes, c in per_path.values():
        for s in scopes:
            counts[s].update(c)
    default = {s: min(c, key=lambda v: (-c[v], v)) for s, c in counts.items()}
    ev = _Evidence()
    for members in replace_groups(ix, name, MAX_ITEMS):
        mine = url_scopes[members[0][1]]
        smallest = min(members)[1]
        outcome: dict[str, tuple[int, int]] = {}  # representative -> (sup, dis)
        for s in mine:
            rep = next((u for v, u in members if v == default[s]), None) or smallest
            if rep not in outcome:
                sims = [ix.similar(u, rep) for _, u in members if u != rep]
                outcome[rep] = (sum(sims), len(sims) - sum(sims))
            ev.count_many(s, *outcome[rep], mine)
    return ev, default


def nameable(name: str) -> bool:
    """A parameter rule can name ``name`` (dustbuster.core.model.rules.ParamRule's own check)."""
    try:
        ParamRule(name, "remove")
    except RuleError:
        return False
    return True


def mine_scoped_param_rules(urllist: URLList, params: DustParams, index: URLIndex | None = None,
                            refuted: dict | None = None) -> list[ParamRule]:
    """Scoped parameter rules (remove, replace) at their widest holding scopes; a rule whose
    scope is the whole site is the thesis' global rule.  ``index``: the shared parse; ``refuted``
    (when given) gets each rule shape's refuted scopes (core/mining/siblings.py)."""
    refuted = {} if refuted is None else refuted
    ix = URLIndex.of(urllist, params, index)
    out: list[ParamRule] = []
    occ = param_occurrences(urllist, MAX_ITEMS, ix)
    for name, rows in sorted((n, r) for n, r in occ.items() if len(r) >= params.param_min_urls):
        if not nameable(name):  # a name no rule can hold ("?" of "??=1", "a#"): hostile or broken URLs
            continue
        ev = _remove_evidence(ix, name, rows)
        removed = holding_scopes(ev.tally, params)
        for s in removed:
            sup, dis = ev.tally[s]
            out.append(ParamRule(name, "remove", None, sup, dis, "likely", _ev(len(rows), sup, dis), s))
        gone = refuted[("parameter", "remove", name, None)] = failing_scopes(ev.tally, params)
        out += value_removes(ix, name, rows, gone, removed, params)
        derived = replace_removals(ix, name, MAX_ITEMS)
        narrowed = _derived_removes(ix, name, rows, derived, removed, params, out) if derived else []
        out += query_scoped_removes(ix, name, rows, removed + narrowed, params, holding_scopes, failing_scopes,
                                    gone, derived)
        rev, default = _replace_evidence(ix, name, rows)
        for s in failing_scopes(rev.tally, params):
            refuted.setdefault(("parameter", "replace", name, default[s]), []).append(s)
        for s in holding_scopes(rev.tally, params):
            if any(_within(s, r) for r in removed):
                continue  # removing it there says more
            scope = rev.narrowed(s)
            sup, dis = rev.tally[scope]
            out.append(ParamRule(name, "replace", default[s], sup, dis, "likely", _ev(len(rows), sup, dis), scope))
    out.sort(key=lambda r: (-r.support, r.name, r.scope, r.action != "remove"))
    return out


def value_removes(ix: URLIndex, name: str, rows: list[Occurrence], failing: Sequence[str], removed: Sequence[str],
                  params: DustParams) -> list[ParamRule]:
    """Value-level remove rules (docs/rules.md "Value-level parameter rule"): where removing the
    parameter is refuted (``failing``: its comparisons below ``param_min_ratio``) because some of
    its values select other views, the values whose own comparisons are no-ops there — thesis
    §5.3's remove evidence counted per value: each value with MS similar comparisons of its own
    (a value seen on a page or two is a coincidence, not an enumeration: a search term), at least
    ``param_min_ratio`` of them similar, never refuted in a narrower scope — are one candidate
    ``remove name=v1, name=v2`` at the widest such scope.  Only for a parameter with a few values
    (2 to :data:`MAX_ENUMERATED`: ``action``, ``printable``, not a session id), at most
    :data:`MAX_VALUE_RULE_VALUES` values per rule, and only where at least one value is refuted
    (else the parameter rule says it)."""
    if not failing:
        return []
    by_value: dict[str, list[Occurrence]] = defaultdict(list)
    for row in rows:
        by_value[row[1]].append(row)
    if not 2 <= len(by_value) <= MAX_ENUMERATED:
        return []
    evs = {v: _remove_evidence(ix, name, rs) for v, rs in sorted(by_value.items()) if not _UNVALUED & set(v)}
    fails = {v: failing_scopes(ev.tally, params) for v, ev in evs.items()}
    out: list[ParamRule] = []
    for s in sorted(failing, key=lambda x: (x.count("/") + ("?" in x), x)):  # the widest first
        if any(_within(s, r.scope) for r in out) or any(_within(s, r) for r in removed) or "?" in s:
            continue
        good, bad, sup, dis = [], 0, 0, 0
        for v, ev in evs.items():
            t = ev.tally.get(s)
            if not t or not t[0] + t[1]:
                continue
            if (t[0] >= params.ms and t[0] >= params.param_min_ratio * (t[0] + t[1])
                    and not any(_within(f, s) for f in fails[v])):
                good.append(v)
                sup, dis = sup + t[0], dis + t[1]
            else:
                bad += 1
        if good and bad and len(good) <= MAX_VALUE_RULE_VALUES and sup >= params.ms:
            try:
                out.append(ParamRule(name, "remove", None, sup, dis, "likely",
                                     {**_ev(len(rows), sup, dis), "values_refuted": bad}, s, tuple(good)))
            except RuleError:
                continue
    return out


def _derived_removes(ix: URLIndex, name: str, rows: list[Occurrence], derived: list[tuple[str, bool]],
                     removed: list[str], params: DustParams, out: list[ParamRule]) -> list[str]:
    """Remove rules that hold only with the replace groups' evidence (module docstring), outside
    the scopes where the thesis' own evidence holds already, narrowed to their supporting paths;
    appended to ``out``; returns their scopes."""
    ev = _remove_evidence(ix, name, rows, derived)
    scopes: list[str] = []
    for s in holding_scopes(ev.tally, params):
        scope = ev.narrowed(s)
        if any(_within(scope, r) for r in removed) or scope in scopes:
            continue
        sup, dis = ev.tally[scope]
        scopes.append(scope)
        out.append(ParamRule(name, "remove", None, sup, dis, "likely",
                             {**_ev(len(rows), sup, dis), "from_replace_groups": True}, scope))
    return scopes


def _ev(urls: int, sup: int, dis: int) -> dict:
    return {"urls_with_param": urls, "similar_ratio": round(sup / (sup + dis), 4) if sup + dis else 0.0}


def mine_query_rules(urllist: URLList, params: DustParams, index: URLIndex | None = None,
                     refuted: dict | None = None) -> list[QueryRule]:
    """Whole-query (drop) and order (sort) rules at their widest holding scopes.  ``index``: the
    shared parse (core/urls/urlindex.py); ``refuted``: as :func:`mine_scoped_param_rules` (a "drop but
    K" refuted where one was tried and failed; the sort rule where its order evidence fails)."""
    refuted = {} if refuted is None else refuted
    ix = URLIndex.of(urllist, params, index)
    by_path: dict[str, list[str]] = defaultdict(list)
    for url, entry in ix.entries.items():
        if url.count("&") < MAX_ITEMS:
            by_path[entry[0]].append(url)
    drop, order = _Evidence(), _Evidence()
    for urls in by_path.values():
        if len(urls) >= 2:
            _query_evidence(ix, urls, drop, order)
    held = holding_scopes(drop.tally, params)
    out = [_query_rule(drop, s, "drop") for s in held if len(drop.names[s]) >= 2]
    held_set = set(held)
    failed = sorted(s for s, (sup, dis) in drop.tally.items()
                    if sup + dis >= params.ms and not held_set.intersection(scopes_of(s)))
    paths = ix.paths()
    open_paths = {b: us for b, us in by_path.items() if not held_set.intersection(paths[b][1])}
    out += _keep_rules(ix, open_paths, failed, refuted.setdefault(("query", "drop"), []))
    out += [_query_rule(order, s, "sort") for s in holding_scopes(order.tally, params)]
    refuted[("query", "sort")] = failing_scopes(order.tally, params)
    return out


def _query_evidence(ix: URLIndex, urls: list[str], drop: _Evidence, order: _Evidence) -> None:
    """One path's comparisons: each spelling of a query (its items sorted by name, as the sort rule
    writes it) once with the path's shortest URL (drop), the other spellings with the shortest of
    theirs (order).  Representatives are the shortest URLs, whatever the list's order."""
    entries = ix.entries
    path_scopes = ix.url_scopes()[urls[0]]
    rep = min(urls, key=lambda u: (len(u), u))
    forms: dict[tuple, list[str]] = defaultdict(list)
    for u in urls:
        forms[tuple(sorted(entries[u][1] or (), key=_NAME))].append(u)
    rep_names = {n for n, _ in entries[rep][1] or ()}
    tallies: dict[str, list[Any]] = {"order": [0, 0, set()], "drop": [0, 0, set()]}  # sup, dis, names
    for key, members in forms.items():
        first = min(members, key=lambda u: (len(u), u))
        names = {n for n, _ in key}
        acc = tallies["order"]
        for u in members:
            if u != first:
                acc[0 if ix.similar(u, first) else 1] += 1
                acc[2] |= names
        if first != rep:
            acc = tallies["drop"]
            acc[0 if ix.similar(first, rep) else 1] += 1
            acc[2] |= names ^ rep_names
    for ev, (sup, dis, union) in ((order, tallies["order"]), (drop, tallies["drop"])):
        if sup + dis:
            ev.add_many(path_scopes, sup, dis, union)


def _query_rule(ev: _Evidence, held: str, action: str) -> QueryRule:
    scope = ev.narrowed(held)
    sup, dis = ev.tally[scope]
    names = sorted(ev.names[scope])
    return QueryRule(scope, action, (), sup, dis, "likely",
                     {"comparisons": sup + dis, "parameters": names[:10], "similar_ratio": round(sup / (sup + dis), 4)})


def _meaningful(ix: URLIndex, params: DustParams) -> dict[str, set[str]]:
    """Scope → the parameters whose removal mostly changes the page there (at least MS comparisons
    not likely similar, more than the similar ones): what a "drop but …" rule must keep."""
    per_path: dict[tuple[int, str], list] = {}  # (path's scopes, name) -> [scopes, sup, dis]
    url_scopes = ix.url_scopes()
    for url, (_, items) in ix.entries.items():
        if not items or len(items) > MAX_ITEMS:
            continue
        path_scopes = url_scopes[url]
        for name in {n for n, v in items if v is not None}:
            ok = ix.removal(url, name)
            if ok is not None:
                acc = per_path.get((id(path_scopes), name))
                if acc is None:
                    acc = per_path[(id(path_scopes), name)] = [path_scopes, 0, 0]
                acc[1 if ok else 2] += 1
    tally: dict[tuple[str, str], list[int]] = defaultdict(lambda: [0, 0])
    for (_, name), (path_scopes, sup, dis) in per_path.items():
        for s in path_scopes:
            t = tally[(s, name)]
            t[0] += sup
            t[1] += dis
    out: dict[str, set[str]] = defaultdict(set)
    for (s, name), (sup, dis) in tally.items():
        if dis >= params.ms and dis > sup:
            out[s].add(name)
    return out


def _keep_rules(ix: URLIndex, by_path: dict[str, list[str]], failed: list[str],
                refuted: list[str] | None = None) -> list[QueryRule]:
    """"Drop the query but K" where dropping it all fails (``by_path`` holds no URL of a scope where
    it holds): K = the scope's meaningful parameters; evidence = URLs of one path with the same K
    items and other queries (compared with the shortest of them); kept when the scope holds and at
    least two other names are involved.  Each scope reads only its own paths (an index by scope);
    a path's comparisons for one K are made once, whichever of its scopes asks, and kept in the
    index while no URL of the path changes (a streaming window's next one reuses them)."""
    params, paths = ix.params, ix.paths()
    meaningful = _meaningful(ix, params) if failed else {}
    bases: dict[str, list[str]] = defaultdict(list)
    for base, urls in by_path.items():
        if len(urls) >= 2:  # one URL makes no comparison
            for s in paths[base][1]:
                bases[s].append(base)
    out: list[QueryRule] = []
    memo: dict[tuple[str, str, frozenset], tuple[int, int, set[str]]] = ix.by_base  # a window keeps them (URLIndex.refresh)
    for scope in failed:
        keep = meaningful.get(scope)
        # a name a query rule cannot keep (empty: "?=1"; with "&=?#") makes no "drop but K" rule there
        if (not keep or len(keep) > MAX_KEEP or any(not n or _UNLISTABLE & set(n) for n in keep)
                or any(_within(scope, r.scope) for r in out)):
            continue
        ev = _Evidence()
        frozen = frozenset(keep)
        for base in bases.get(scope, ()):
            done = memo.get((base, "keep", frozen))
            if done is None:
                done = _keep_evidence(ix, by_path[base], keep)
                memo[(base, "keep", frozen)] = done if done[0] + done[1] else _NO_EVIDENCE  # most paths: one URL
            sup, dis, names = done
            if sup + dis:
                ev.count_many(scope, sup, dis, paths[base][1])
                ev.names[scope].update(names)
        if refuted is not None:
            refuted += failing_scopes({scope: ev.tally[scope]}, params)
        if scope in holding_scopes({scope: ev.tally[scope]}, params) and 2 <= len(ev.names[scope]) <= MAX_DROPPED:
            sup, dis = ev.tally[scope]  # the comparisons counted for this scope
            narrowed = ev.narrowed(scope)
            # a name a query rule cannot list (with "&=?#": a query's stray "?") is not dropped: kept
            only = tuple(sorted(n for n in ev.names[scope] - keep - scope_names(narrowed) if n and not _UNLISTABLE & set(n)))
            if not only:
                continue
            out.append(QueryRule(narrowed, "drop", tuple(sorted(keep)), sup, dis, "likely",
                                 {"comparisons": sup + dis, "parameters": sorted(ev.names[scope])[:10],
                                  "similar_ratio": round(sup / (sup + dis), 4)}, only=only))
    return out


def _keep_evidence(ix: URLIndex, urls: list[str], keep: set[str]) -> tuple[int, int, set[str]]:
    """One path's comparisons for "drop the query but ``keep``": (support, disqualified, the
    other parameter names of the compared URLs)."""
    entries = ix.entries
    groups: dict[tuple, list[str]] = defaultdict(list)
    for u in urls:
        groups[tuple([it for it in entries[u][1] or () if it[0] in keep])].append(u)
    sup = dis = 0
    names: set[str] = set()
    for members in groups.values():
        if len(members) < 2:
            continue
        rep = min(members, key=lambda u: (len(u), u))
        for u in members:
            if u != rep:
                if ix.similar(u, rep):
                    sup += 1
                else:
                    dis += 1
                names.update([n for n, _ in entries[u][1] or () if n not in keep])
    return sup, dis, names
