"""Pages lost by the rules (issue 28): what the rules hide, apart from the budget, computed offline
from the crawls' JSON.

A crawl with a fixed download budget that skips duplicates spends the budget elsewhere, so it reaches
another set of pages than the plain crawl: *missed* (contents the plain crawl reached that this crawl
never did) mixes that budget effect with pages the rules hide.  This module separates the two.

Definitions (beyond the papers: DUST, Bar-Yossef/Keidar/Schonfeld WWW 2007, counts false merges on
URL pairs of a log, Sec. 6; here the unit is a content a crawler can or cannot reach):

* A *content* is a content cluster of dustbuster.core.report.truth over the 200 pages of all the crawls (as
  crawls.numbers computes them).  A URL *shows* a content when some crawl got that content at it,
  as the first URL requested or as the URL a redirect ended at; a URL may show several contents
  (a page that changed between crawls): it shows each of them.
* ``key(url)`` is the crawl's request key: its fingerprinter applied to a request of that URL
  (:func:`rules_key`: dustbuster.scrapy.DustRequestFingerprinter on the rule set, the code path the
  crawl used; :func:`hand_key`: the hand canonicalizer's HandFingerprinter of crawl_scrapy.py).
* A key is *taken from* content C when some URL with that key shows a content and never showed C:
  a crawler with the rules may fetch that URL first and drop every other URL of the key.
* A fetch *reaches* C safely when the first URL requested (u) showed C, key(u) is not taken from C,
  and, after a redirect to w, either key(w) equals key(u) (the fingerprinter gives a redirect that
  continues its own fetch a key of its own) or key(w) is not taken from C either.
* A content is *at risk* under the key when the plain crawl reached it and no fetch seen in any
  crawl reaches it safely: every URL of it is merged with another content.  One URL of C merged
  wrongly and another safe: C is not at risk.  This is independent of the budget and of the order.
* **Lost by the rules**: the contents at risk that this crawl never reached: it fetched another
  content under each of their keys (or the budget ran out first; one of the contents of a wrong
  merge is lost in any order).  A content at risk that this crawl reached all the same (its URL came
  first) is not lost here but counted apart (``at_risk_reached``): another order loses it.
* **Not reached within the budget**: the contents the plain crawl reached and this crawl did not
  (*missed*), less those lost by the rules.

*Versions* (:func:`versions`): the contents one page of the deployment showed to different
crawls — at one URL, or at URLs that differ only in the origin the harness serves the app under
(``www.`` and the second port, run.py ``port_aliases``: one app, by construction) — are one page
that changed between the crawls (Trac's relative times: "5 minutes ago" became "7 minutes ago"),
so a URL showing one version never takes its key from another.  Without it the hand
canonicalizer, which merges no different pages, "lost" 29 of Trac's old wiki versions.  Only the
page a fetch ended at counts (a redirect's first URL, ``Special:Random``, shows many pages).

A non-200 response (a 404) has no content in the truth and reaches nothing, but it takes its key
from every content its URL never showed (a crawler that fetches it first sees no page): its
"content" is its status.  Only the first and last URL of a redirect chain are recorded by
crawl_scrapy.py; the intermediate ones are not judged.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Iterable
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

Key = Callable[[str], bytes]


def rules_key(rules: Path) -> Key:
    """The key of the ``scrapy + our rules`` crawl: DustRequestFingerprinter on ``rules``."""
    import scrapy

    from dustbuster.rulesource import LiveRules
    from dustbuster.scrapy import DustRequestFingerprinter

    fp = DustRequestFingerprinter(LiveRules(str(rules)))
    return lambda url: fp.fingerprint(scrapy.Request(url))


def hand_key(app: str) -> Key:
    """The key of the ``scrapy + hand canonicalizer`` crawl: crawl_scrapy.HandFingerprinter."""
    import scrapy
    from crawl_scrapy import HandFingerprinter  # bench/quality/crawl_scrapy.py

    fp = HandFingerprinter(app)
    return lambda url: fp.fingerprint(scrapy.Request(url))


def fetches(pages: Iterable[tuple[dict, int]]) -> list[tuple[str, str, int]]:
    """``(first URL, final URL, content)`` of each 200 page (response record, content cluster)."""
    return [(r["url"], r.get("response_url") or r["url"], c) for r, c in pages]


def errors(docs: Iterable[dict]) -> list[tuple[str, str, int]]:
    """``(first URL, final URL, -status)`` of each non-200 response of the crawls: they take keys."""
    return [(r["url"], r.get("response_url") or r["url"], -int(r["status"]))
            for d in docs for r in d["responses"] if r["status"] != 200]


def shown(seen: list[tuple[str, str, int]]) -> dict[str, set[int]]:
    """Every URL and the contents it showed."""
    out: dict[str, set[int]] = defaultdict(set)
    for first, final, c in seen:
        out[first].add(c)
        out[final].add(c)
    return out


def deployment_url(url: str) -> str:
    """``url`` under the deployment's main origin: ``www.`` dropped, a second port mapped to the
    main one (run.py ``port_aliases``); path and query as they are."""
    from handcanon import port_aliases  # bench/quality/handcanon.py

    u = urlsplit(url)
    host = u.netloc[4:] if u.netloc.startswith("www.") else u.netloc
    name, sep, port = host.rpartition(":")
    if sep and port in (aliases := port_aliases()):
        host = f"{name}:{aliases[port]}"
    return urlunsplit((u.scheme, host, u.path, u.query, ""))


def versions(seen: list[tuple[str, str, int]]) -> dict[int, int]:
    """Each content → the least content of its page's versions (module docstring): the contents
    shown at one final URL under the deployment's main origin are one page."""
    parent: dict[int, int] = {}

    def find(c: int) -> int:
        while parent.setdefault(c, c) != c:
            parent[c] = parent[parent[c]]
            c = parent[c]
        return c

    first_of: dict[str, int] = {}
    for _, final, c in seen:
        if c < 0:
            continue  # an error's "content" is its status
        page = deployment_url(final)
        if page in first_of:
            a, b = find(first_of[page]), find(c)
            parent[max(a, b)] = min(a, b)
        else:
            first_of[page] = c
    return {c: find(c) for c in parent}


def at_risk(seen: list[tuple[str, str, int]], reached: set[int], key: Key) -> set[int]:
    """The contents of ``reached`` (the plain crawl's) that no fetch of ``seen`` reaches safely
    under ``key`` (see the module's docstring), a page's versions taken as one."""
    ver = versions(seen)

    def v(c: int) -> int:
        return ver.get(c, c)

    urls = {u: {v(c) for c in cs} for u, cs in shown(seen).items()}
    keys = {u: key(u) for u in urls}
    by_key: dict[bytes, list[set[int]]] = defaultdict(list)
    for u, contents in urls.items():
        by_key[keys[u]].append(contents)

    def free(k: bytes, c: int) -> bool:
        return all(v(c) in contents for contents in by_key[k])

    safe = {v(c) for first, final, c in seen
            if free(keys[first], c) and (keys[final] == keys[first] or free(keys[final], c))}
    return {c for c in reached if v(c) not in safe}
