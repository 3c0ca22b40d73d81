"""Mining query-to-path mappings (ours, beyond the papers; the rule type is
dustbuster.core.model.ruletypes.querypath, docs/rules.md "Query-to-path mapping").

A candidate ``scope?name=X → prefix X`` comes from the log alone: for each URL whose query is one
item ``name=v`` (``v`` a value that reads the same in a path, ``plain_value``) under the path
``scope``, the listed query-less URLs of the same scheme and host whose path is ``prefix + v``
(``prefix`` ending where a token of the path starts: ``/wiki/``, WWW 2007's ``/story_``) are its
counterparts; each (scope, name, prefix) counts the distinct
values whose two URLs are LikelySimilar (WWW 2007 §4, the size test: support) and those whose are
not (disqualified).  The best prefix of each (scope, name) is a candidate when its support is at
least MS distinct values and its similar share at least ``param_min_ratio`` (the thresholds of the
parameter rules, thesis §5.3).  The validator decides it by Figure 3, on 5 distinct pages at least.

>>> from dustbuster.core.urls.urllist import URLList
>>> ul = URLList()
>>> for t in ("A", "B", "C", "D"):
...     _ = ul.add(f"http://w.test/w/index.php?title={t}", 200, 1000 + ord(t))
...     _ = ul.add(f"http://w.test/wiki/{t}", 200, 1000 + ord(t))
>>> [r.text for r in mine_query_paths(ul)]
['/w/index.php?title=X → /wiki/X (the rest of the query kept)']
"""

from __future__ import annotations

import re
from collections import defaultdict

from dustbuster.core.errors import RuleError
from dustbuster.core.model.ruletypes.querypath import QueryPathRule, plain_value
from dustbuster.core.params import DustParams
from dustbuster.core.urls.scope import split_url
from dustbuster.core.urls.urlindex import URLIndex
from dustbuster.core.urls.urllist import URLList

#: examples kept in a candidate's evidence
EXAMPLES = 5
#: values of a (scope, name) on which its prefixes are looked for, paths tried per value, prefixes kept
PROBE_VALUES = 64
PROBE_PATHS = 2_000
MAX_PREFIXES = 3


_TAIL = re.compile(r"[A-Za-z0-9]*\Z")


def _last_token(text: str) -> str:
    """The alphanumeric run that ends ``text`` ("" when it ends with another character): a path
    ``prefix + v`` and its value ``v`` end with the same one."""
    m = _TAIL.search(text)
    return m.group(0) if m else ""


def mine_query_paths(urllist: URLList, params: DustParams | None = None,
                     index: URLIndex | None = None) -> list[QueryPathRule]:
    """The query-to-path candidates of the list (module docstring), best supported first.

    Two passes, each bounded: the prefixes are found on the first :data:`PROBE_VALUES` values of
    each (scope, name) (a value's counterparts looked up among the paths that end with its last
    token, at most :data:`PROBE_PATHS` of them), then every value is checked under each prefix
    found by an exact lookup of ``prefix + v``."""
    params = params or DustParams()
    ix = URLIndex.of(urllist, params, index)
    plain: dict[tuple[str, str], str] = {}  # (head, path) -> the query-less URL
    by_leaf: dict[tuple[str, str], list[str]] = defaultdict(list)  # (head, last token) -> paths
    for url, (base, items) in ix.entries.items():
        if items is None:
            head, path, _tail = split_url(base)
            if head and path:
                plain[(head, path)] = url
                by_leaf[(head, _last_token(path))].append(path)
    if not plain:
        return []
    groups: dict[tuple[str, str], list[tuple[str, str, str]]] = defaultdict(list)  # (scope, name) -> (head, v, url)
    for name, rows in ix.occurrences().items():
        for url, value, _s, _e, n in rows:
            if n == 1 and value and plain_value(value):
                head, scope, _tail = split_url(ix.entries[url][0])
                if head and scope:
                    groups[(scope, name)].append((head, value, url))
    out = []
    for (scope, name), members in sorted(groups.items()):
        if len({v for _, v, _ in members}) < params.ms:
            continue
        prefixes = _prefixes(scope, members[:PROBE_VALUES], by_leaf)
        best: tuple[int, int, str, list] | None = None
        for prefix in prefixes:
            verdicts: dict[str, bool] = {}
            examples: list[list[str]] = []
            for head, value, url in members:
                other = plain.get((head, prefix + value))
                if other is None or value in verdicts:
                    continue
                verdicts[value] = similar = ix.similar(url, other)
                if similar and len(examples) < EXAMPLES:
                    examples.append([url, other])
            sup = sum(verdicts.values())
            dis = len(verdicts) - sup
            if sup < params.ms or sup < params.param_min_ratio * (sup + dis):
                continue
            if best is None or (-sup, dis, prefix) < (-best[0], best[1], best[2]):
                best = (sup, dis, prefix, examples)
        if best is None:
            continue
        sup, dis, prefix, examples = best
        try:
            out.append(QueryPathRule(scope, name, prefix, sup, "likely",
                                     {"distinct_values": sup + dis, "similar_ratio": round(sup / (sup + dis), 4),
                                      "samples": examples}))
        except RuleError:  # a scope or prefix no rule can hold (a space in a path)
            continue
    out.sort(key=lambda r: (-r.support, r.scope, r.name, r.prefix))
    return out


def _prefixes(scope: str, members: list[tuple[str, str, str]], by_leaf: dict[tuple[str, str], list[str]]) -> list[str]:
    """The prefixes under which at least two of ``members``' values are listed paths (the value
    starting a token of the path), most values first."""
    found: dict[str, set[str]] = defaultdict(set)
    for head, value, _url in members:
        for path in by_leaf.get((head, _last_token(value)), ())[:PROBE_PATHS]:
            if path == scope or len(path) <= len(value) or not path.endswith(value):
                continue
            prefix = path[: len(path) - len(value)]
            if not (prefix[-1:].isalnum() or prefix[-1:] == "%"):  # the value starts a token of the path
                found[prefix].add(value)
    return sorted((p for p, vs in found.items() if len(vs) >= 2), key=lambda p: (-len(found[p]), p))[:MAX_PREFIXES]


__all__ = ["mine_query_paths"]
