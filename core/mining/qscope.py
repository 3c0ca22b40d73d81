"""Mining query-parameter scopes (beyond the papers; docs/rules.md "Query-parameter scopes").

Wiki engines name the page and the tool in the query (``index.php?title=Special:UserLogin&returnto=…``,
``doku.php?id=…&do=edit``): a parameter is often a no-op for one value of another parameter only, and
then no path scope holds for it (it matters elsewhere under the same script).  Where the remove rule
of a parameter ``p`` holds at no path scope covering a URL (core/mining/scoped.py), its remove evidence (the
thesis' §5.3: a URL with ``p`` whose ``p``-less form is listed, LikelySimilar or not) is tallied again
under scopes that also fix one other parameter's value.  Choices (ours; the validator decides every
candidate by fetching, drawing its samples among the URLs inside the scope):

* **keys** — the items ``q=v`` (``q`` ≠ ``p``, valued, a name and value a scope can hold) of the URLs
  with evidence; ``q`` is a *selector* when it takes at most :data:`MAX_KEY_VALUES` distinct values
  among them (``title=`` among the URLs with ``returnto=``; not a page id that changes with every
  URL); at most :data:`MAX_KEYS` keys per parameter, by comparisons (descending), then text.  One
  key per scope, no combinations: keys × path scopes bounds the work;
* **evidence** — each comparison counts for ``S?q=v`` for every path scope S of the URL's path;
* **holds** — per key, as path scopes hold (:func:`dustbuster.core.mining.scoped.holding_scopes`: support
  ≥ MS, similar share ≥ ``param_min_ratio``, no narrower scope of the key with ≥ MS comparisons below
  it), the widest of them;
* **left out** — a scope whose path lies inside a path scope where the rule holds already; keys are
  taken most supported first, and one whose supporting URLs all lie in rules already taken is left
  out (a page named by ``title=`` and a constant ``uselang=`` gives one rule, not two);
* **evidence from replace groups** — the comparisons of URLs that differ only in ``p``'s
  value, where their ``p``-less form is in no log line (core/mining/paramrules.py :func:`replace_removals`;
  the thesis draws the omit rule from the replace rule's buckets, §5.3) count as remove evidence too;
* **one fixed selector** — a URL inside a path scope where the rule holds already is left
  out as above, unless every supporting URL of that path scope shares an item ``q=v`` (a parameter
  with one fixed value across the evidence: every ``returnto=`` URL has ``title=Special:UserLogin``).
  Then the query-scoped rule is emitted too: the evidence shows one page, and only the query-scoped
  rule can be decided on it (core/validation/onepage.py); the path-scoped rule keeps the multi-page guard.
"""

from __future__ import annotations

import re
from collections import Counter, defaultdict
from typing import Sequence

from dustbuster.core.errors import RuleError
from dustbuster.core.params import DustParams
from dustbuster.core.model.rules import ParamRule
from dustbuster.core.urls.scope import check_scope, make_scope
from dustbuster.core.urls.urlindex import Occurrence, URLIndex

MAX_KEYS = 8  #: keys tried per parameter
_UNFIT = re.compile("[\x00-\x1f?#]")  #: a character no scope's name or value holds
MAX_KEY_VALUES = 16  #: a parameter with more distinct values among the URLs of p is no selector
Key = tuple[str, str]
_NO_KEYS: list[Key] = []  #: the keys of a URL without any (shared by them; never changed)


def _keys_of(items, name: str) -> list[Key]:
    """The ``q=v`` items of one URL a scope can fix: valued, another name, one value per name."""
    seen: dict[str, str | None] = {}
    for n, v in items or ():
        if v is not None and n != name:
            seen[n] = v if seen.setdefault(n, v) == v else None
    return [(n, v) for n, v in seen.items() if v is not None and _fixable(n, v)]


def _fixable(n: str, v: str) -> bool:
    """True when ``?n=v`` is a scope (``check_scope``), for an item of a parsed query (``n`` holds
    no ``&`` or ``=``, ``v`` no ``&``): ``n`` not empty, neither holds ``?``, ``#`` or a control
    character.  The same answer as :func:`_fixable_by_check_scope` without building the scope text
    (tests/test_qscope_fixable.py); any other item takes that slow path."""
    if "&" in n or "=" in n or "&" in v:
        return _fixable_by_check_scope(n, v)
    return bool(n) and _UNFIT.search(n) is None and _UNFIT.search(v) is None


def _fixable_by_check_scope(n: str, v: str) -> bool:
    try:
        check_scope(make_scope("", ((n, v),)))
    except RuleError:
        return False
    return True


def _selector_keys(rows: list[tuple[str, bool, list[Key]]], params: DustParams) -> list[Key]:
    counts: Counter = Counter()
    values: dict[str, set[str]] = defaultdict(set)
    for _, _, keys in rows:
        for n, v in keys:
            counts[(n, v)] += 1
            values[n].add(v)
    keys = [k for k, c in counts.items() if c >= params.ms and len(values[k[0]]) <= MAX_KEY_VALUES]
    return sorted(keys, key=lambda k: (-counts[k], k))[:MAX_KEYS]


def query_scoped_removes(ix: URLIndex, name: str, rows: list[Occurrence], path_scopes: list[str],
                         params: DustParams, holding, failing, refuted: list[str],
                         derived: Sequence[tuple[str, bool]] = ()) -> list[ParamRule]:
    """Remove rules of ``name`` under query-parameter scopes (module docstring); ``path_scopes``:
    the path scopes where its remove rule holds already; ``holding``, ``failing``: the tests of
    core/mining/scoped.py; ``refuted`` gets the query-parameter scopes the evidence refutes; ``derived``:
    the replace groups' remove evidence (url, similar)."""
    url_scopes = ix.url_scopes()
    own = ((row[0], ix.removal(row[0], name)) for row in rows)
    memo: dict[str, list[Key]] = ix.texts.setdefault(("qscope_keys", name), {})  # of the texts: kept
    keyed = []
    for url, similar in (*own, *derived):
        if similar is not None:
            keys = memo.get(url)
            if keys is None:
                keys = memo[url] = _keys_of(ix.entries[url][1], name) or _NO_KEYS
            keyed.append((url, similar, keys))
    shared = _shared_keys(keyed, path_scopes, url_scopes)
    evidence = [(url, similar, keys) for url, similar, keys in keyed if keys
                and all(shared.get(p) for p in path_scopes if _covers(p, url_scopes[url]))]
    out: list[ParamRule] = []
    covered: set[str] = set()
    for key in _selector_keys(evidence, params):
        tally: dict[str, list[int]] = defaultdict(lambda: [0, 0])
        support: dict[str, set[str]] = defaultdict(set)
        for url, similar, keys in evidence:
            if key in keys:
                for s in url_scopes[url]:
                    tally[s][0 if similar else 1] += 1
                    if similar:
                        support[s].add(url)
        refuted += [make_scope(s, (key,)) for s in failing(tally, params)]
        for s in holding(tally, params):
            if support[s] <= covered:
                continue
            covered |= support[s]
            sup, dis = tally[s]
            out.append(ParamRule(name, "remove", None, sup, dis, "likely",
                                 {"urls_with_param": len(rows), "similar_ratio": round(sup / (sup + dis), 4),
                                  "scope_key": f"{key[0]}={key[1]}"}, make_scope(s, (key,))))
    return out


def _covers(path_scope: str, url_path_scopes: tuple[str, ...]) -> bool:
    return path_scope in url_path_scopes


def _shared_keys(keyed: list[tuple[str, bool, list[Key]]], path_scopes: list[str],
                 url_scopes: dict[str, tuple[str, ...]]) -> dict[str, set[Key]]:
    """Each held path scope → the items ``q=v`` every supporting URL inside it has (module
    docstring, "one fixed selector"); empty when they share none."""
    out: dict[str, set[Key]] = {}
    for url, similar, keys in keyed:
        if similar:
            for p in path_scopes:
                if _covers(p, url_scopes[url]):
                    out[p] = out[p] & set(keys) if p in out else set(keys)
    return out
