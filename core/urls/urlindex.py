"""Every URL of the list parsed once, for the miners of one ``mine()`` call (thesis §5.3 and the
scoped miners of docs/rules.md).

Phase 3 (thesis §5.3, core/mining/paramrules.py) and the miners beyond the papers (core/mining/scoped.py,
core/mining/casemine.py) read the same facts of each URL: its base and query items
(:func:`dustbuster.core.urls.query.split`), its path and the scopes that cover it
(:func:`dustbuster.core.urls.scope.split_url`, :func:`~dustbuster.core.urls.scope.scopes_of`), the URL
without one parameter (:func:`~dustbuster.core.urls.query.remove_param`) and LikelySimilar of a pair
(WWW 2007 §4, :meth:`URLList.similar`).  :class:`URLIndex` computes each of them once per URL,
name or pair and returns exactly what those functions return; the miners share one index.

The index is built for one URL list and one :class:`DustParams`.  A change of the list is allowed
in one way only, the way a streaming window's list changes (state/partitions.py, beyond the
papers): URLs appended and the records of some URLs replaced; :meth:`URLIndex.refresh` then brings
the index up to date: the new URLs parsed, what depends on the URLs' texts kept, what read a
changed or appended URL's record dropped.  The refreshed index answers as a new one of the list
would (tests/test_window_reuse.py), so a window parses only its new URLs.  Pure: no I/O.
"""

from __future__ import annotations

import sys
from collections import defaultdict
from itertools import islice
from typing import Any, Iterable

from dustbuster.core.params import DustParams
from dustbuster.core.urls.scope import scopes_of, split_url
from dustbuster.core.urls.urllist import URLList, likely_similar

Item = tuple[str, "str | None"]
#: (base, query items): the items None without "?", empty after a bare "?".  Tuples, not lists: the
#: garbage collector need not walk them.  Parameter names are interned (a few names, many URLs:
#: an index kept between windows holds one copy of each), the raw items not kept (split again)
Entry = tuple[str, "tuple[Item, ...] | None"]
#: a parameter's first ``name=value`` item in one URL: (url, value, where the value starts and
#: ends in the URL, number of query items)
Occurrence = tuple[str, str, int, int, int]
#: removal answers, and derivations per base, kept per URL at most across :meth:`URLIndex.refresh`
KEPT_OUTCOMES = 8
_ANSWERS = (None, False, True)  #: a removal answer by its packed code (URLIndex._removed)


class URLIndex:
    """The parsed URLs of ``urllist`` (module docstring), in list order."""

    def __init__(self, urllist: URLList, params: DustParams | None = None) -> None:
        self.urllist = urllist
        self.params = params or DustParams()
        self.entries: dict[str, Entry] = {}
        #: (base, number of query items) of every URL: a URL without a (base, n - 1) one keeps no
        #: listed URL when one of its items goes
        self._shapes: set[tuple[str, int]] = set()
        self._repeated: set[tuple[str, str]] = set()  #: (url, name) with two valued name items
        self._occurrences: dict[str, list[Occurrence]] = defaultdict(list)
        for url in urllist:
            self._parse(url)
        self._occurrences = dict(self._occurrences)
        self._paths: dict[str, tuple[str, tuple[str, ...]]] | None = None
        self._url_scopes: dict[str, tuple[str, ...]] | None = None
        self._similar: dict[tuple[str, str], bool] = {}
        #: (url, name) -> :meth:`removal`'s answer, packed with the hash h of the URL without the
        #: name (what :meth:`refresh` checks): h << 2 | 0 (None), 1 (False) or 2 (True)
        self._removed: dict[tuple[str, str], int] = {}
        #: what the miners derive from the above once per index (e.g. paramrules.replace_groups)
        self.cache: dict = {}
        #: what the miners derive from the URLs' texts alone, under keys of their own (e.g. per URL
        #: and parameter): kept by :meth:`refresh` (a URL's text never changes)
        self.texts: dict = {}
        #: what the miners derive from the URLs of one base (the URL before ``?``) with their
        #: records, under tuple keys that start with the base: :meth:`refresh` drops those of the
        #: bases of the appended and the changed URLs
        self.by_base: dict = {}
        #: Figure 1's token ids of the list (core/urls/substrings.py ``TokenNames``), made by the
        #: first count of its supports given this index (core/mining/detect.py), kept by
        #: :meth:`refresh`: they depend on the URLs' texts only
        self.token_names: Any = None

    def _parse(self, url: str) -> None:
        """``query.split(url)`` as tuples and the URL's parameter occurrences."""
        q = url.find("?")
        rest = url[q + 1:] if q >= 0 else ""
        if not rest:
            base = url if q < 0 else sys.intern(url[:q])
            self.entries[url] = (base, None) if q < 0 else (base, ())
            self._shapes.add((base, 0))
            if q >= 0:
                self._shapes.add((base, 1))  # "b?x=1&" less x=1 is "b?": one (empty) item, none parsed
            return
        parts = rest.split("&")
        items: list[Item] = []
        seen: set[str] = set()
        offset, n = q + 1, len(parts)  # where the item starts in the URL, number of items
        intern = sys.intern
        for part in parts:
            name, eq, value = part.partition("=")
            name = intern(name)
            if eq:
                items.append((name, value))
                if name in seen:
                    self._repeated.add((url, name))
                else:
                    seen.add(name)
                    if name:
                        self._occurrences[name].append((url, value, offset + len(name) + 1, offset + len(part), n))
            else:
                items.append((part, None))
            offset += len(part) + 1
        base = sys.intern(url[:q])
        self.entries[url] = (base, tuple(items))
        self._shapes.add((base, n))

    def refresh(self, changed: Iterable[str] = ()) -> None:
        """Bring the index up to date with its list, to which URLs were appended since it was built
        or last refreshed, and where the records of ``changed`` (URLs listed before) were replaced;
        nothing else of the list may have changed (module docstring).  The appended URLs are
        parsed (their rows go after the others': list order); the paths and scopes, which depend
        on the texts only, are extended, and the miners' derivations of the texts (``texts``)
        kept; the LikelySimilar outcomes are dropped (cheap to make again, and many); the
        removal answers that read a changed or appended URL's record are dropped, and so are the
        miners' derivations of their bases (``by_base``); ``cache`` (the miners' other
        derivations) is emptied.  Memory stays bounded: the answers and derivations are dropped
        altogether once they are more than :data:`KEPT_OUTCOMES` per URL (what no miner asks for
        any more)."""
        known = len(self.entries)
        fresh = list(islice(self.urllist.infos, known, None))
        self._occurrences = defaultdict(list, self._occurrences)
        for url in fresh:
            self._parse(url)
        self._occurrences = dict(self._occurrences)
        if self._paths is not None:
            by_path = {path: scopes for path, scopes in self._paths.values()}  # one tuple per path
            for url in fresh:
                base = self.entries[url][0]
                if base not in self._paths:
                    path = split_url(base)[1]
                    scopes = by_path.get(path)
                    if scopes is None:
                        scopes = by_path[path] = tuple(scopes_of(path))
                    self._paths[base] = (path, scopes)
            if self._url_scopes is not None:
                for url in fresh:
                    self._url_scopes[url] = self._paths[self.entries[url][0]][1]
        else:
            self._url_scopes = None
        gone = set(changed)
        self._similar = {}
        bound = KEPT_OUTCOMES * max(1, len(self.entries))
        if len(self._removed) > bound:
            self._removed = {}
        if len(self.by_base) > bound:
            self.by_base = {}
        bases = {self.entries[u][0] for u in (*fresh, *gone)}
        if bases and self.by_base:
            self.by_base = {k: v for k, v in self.by_base.items() if k[0] not in bases}
        gone.update(fresh)
        if gone and self._removed:  # a URL's answer reads the URL without the name: listed now, or changed
            hashes = {hash(u) for u in gone}
            self._removed = {k: v for k, v in self._removed.items() if v >> 2 not in hashes and k[0] not in gone}
        self.cache = {}

    @classmethod
    def of(cls, urllist: URLList, params: DustParams, index: "URLIndex | None" = None) -> "URLIndex":
        """``index`` when it was built for this list and these parameters, else a new one."""
        if index is not None and index.urllist is urllist and index.params == params:
            return index
        return cls(urllist, params)

    def paths(self) -> dict[str, tuple[str, tuple[str, ...]]]:
        """Each base (the URL before ``?``) → its path (``split_url``) and the path's scopes
        (``scopes_of``), one shared tuple per path; computed once, on first use."""
        if self._paths is None:
            by_path: dict[str, tuple[str, ...]] = {}
            out: dict[str, tuple[str, tuple[str, ...]]] = {}
            for base, _ in self.entries.values():
                if base not in out:
                    path = split_url(base)[1]
                    scopes = by_path.get(path)
                    if scopes is None:
                        scopes = by_path[path] = tuple(scopes_of(path))
                    out[base] = (path, scopes)
            self._paths = out
        return self._paths

    def url_scopes(self) -> dict[str, tuple[str, ...]]:
        """Each URL → the scopes of its path (as :meth:`paths`)."""
        if self._url_scopes is None:
            paths = self.paths()
            self._url_scopes = {url: paths[e[0]][1] for url, e in self.entries.items()}
        return self._url_scopes

    def similar(self, u: str, v: str) -> bool:
        """LikelySimilar of two listed URLs (``urllist.similar(u, v, params)``), computed once."""
        key = (u, v)
        out = self._similar.get(key)
        if out is None:
            infos = self.urllist.infos
            out = self._similar[key] = likely_similar(infos[u], infos[v], self.params)
        return out

    def without(self, url: str, name: str) -> str:
        """``query.remove_param(url, name)`` from the parsed items (no new split)."""
        base, items = self.entries[url]
        if not items:
            return url
        parts = url[len(base) + 1:].split("&")  # the raw items (the base holds no "?")
        kept = [p for p, (n, v) in zip(parts, items) if not (n == name and v is not None)]
        if len(kept) == len(items):
            return url
        return base + "?" + "&".join(kept) if kept else base

    def removal(self, url: str, name: str) -> bool | None:
        """The thesis' remove-rule evidence of one URL (§5.3): None when dropping ``name`` leaves
        the URL as it is or gives a URL not in the list, else whether the two are LikelySimilar.
        No URL is built where no listed URL has the base and one item less."""
        key = (url, name)
        got = self._removed.get(key)
        if got is not None:
            return _ANSWERS[got & 3]
        base, items = self.entries[url]
        if items and (base, len(items) - 1) not in self._shapes and key not in self._repeated:
            return None  # at most one item goes: no listed URL is left
        v = self.without(url, name)
        out = self.similar(url, v) if v != url and v in self.entries else None
        self._removed[key] = hash(v) << 2 | (0 if out is None else 1 + out)
        return out

    def occurrences(self) -> dict[str, list[Occurrence]]:
        """Each parameter name → its first ``name=value`` item in every URL that has one, in list
        order (callers filter, never modify)."""
        return self._occurrences
