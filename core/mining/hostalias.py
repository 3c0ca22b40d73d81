"""Host aliases from the origins a site declares (ours, beyond the papers; docs/validation.md
"Host aliases").

A site answers under several host names — ``www.`` and the bare host, another port, an old name —
and a crawler entering by all of them fetches each page once per name: on a real wiki, 1,446 of a
crawl's 1,524 repeated downloads.  Figure 1 cannot see it when the log names no host, and a log
that does yields one literal rule per path.  The operator already said which origins are the
site's (the sites file's ``origins``); each of them is a candidate alias of one *target* origin:

* the target is the origin the site itself points to — where the other origins' front pages
  redirect, or the origin of their declared canonical — else the one with the shortest host (then
  https before http, then the first in sort order: the choice is reproducible);
* each other origin ``a`` gives one rule ``"^a/" → "^target/"`` (anchored at the URL's start: the
  scheme, host and port, nothing of the path), decided by Figure 3 like any rule — on *made*
  samples: the paths of the site's test URLs put under ``a`` (:func:`alias_samples`), fetched and
  compared with the same paths under the target.  Sections served under their own host
  (``politics.`` and ``movies.`` of the simulator) are refuted by their pages;
* one rule per alias, never one per path: the rule covers every page of the alias.
"""

from __future__ import annotations

import random
from collections import Counter
from typing import Mapping, Sequence
from urllib.parse import urlsplit

from dustbuster.core.model.rules import START, SubstringRule

#: made samples per alias (twice Figure 3's N: a path's page may fail or be a soft error)
SAMPLES_PER_ALIAS = 80


def origin_of(url: str) -> str | None:
    """``scheme://host[:port]`` of an absolute http(s) URL, lower case, the default port left out."""
    try:
        parts = urlsplit(url)
        port = parts.port
    except ValueError:
        return None
    if parts.scheme.lower() not in ("http", "https") or not parts.hostname:
        return None
    default = {"http": 80, "https": 443}[parts.scheme.lower()]
    return f"{parts.scheme.lower()}://{parts.hostname.lower()}" + (f":{port}" if port and port != default else "")


def _host_length(origin: str) -> tuple[int, bool, str]:
    """The order of preference among targets: the shorter host, https before http, then the text."""
    return len(origin.split("://", 1)[1]), not origin.startswith("https://"), origin


def alias_target(origins: Sequence[str], pointed: Mapping[str, str] | None = None) -> str:
    """The origin the others are aliases of: the one most of them point to (``pointed``: origin →
    the origin its front page redirects to or declares canonical), else the shortest host.

    >>> alias_target(["http://www.wiki.test", "http://wiki.test", "http://wiki.test:8080"])
    'http://wiki.test'
    >>> alias_target(["http://www.wiki.test", "http://wiki.test"], {"http://wiki.test": "http://www.wiki.test"})
    'http://www.wiki.test'
    """
    known = set(origins)
    votes = Counter(t for o, t in (pointed or {}).items() if o in known and t in known and t != o)
    if votes:
        best = max(votes.values())
        return min((o for o, n in votes.items() if n == best), key=_host_length)
    return min(origins, key=_host_length)


def alias_candidates(origins: Sequence[str], pointed: Mapping[str, str] | None = None) -> list[SubstringRule]:
    """One candidate rule per declared origin that is not the target: ``"^a/" → "^target/"``.

    >>> [r.text for r in alias_candidates(["http://www.wiki.test", "http://wiki.test"])]
    ['"^http://www.wiki.test/" → "^http://wiki.test/"']
    """
    if len(set(origins)) < 2:
        return []
    target = alias_target(sorted(set(origins)), pointed)
    return [SubstringRule.from_parts(o + "/", target + "/", anchor_start=True,
                                     evidence={"source": "declared_origins", "alias_of": target})
            for o in sorted(set(origins)) if o != target]


def alias_samples(rule: SubstringRule, test_urls: Sequence[str], origins: Sequence[str],
                  k: int = SAMPLES_PER_ALIAS, seed: int = 0) -> list[str]:
    """Made u's for an alias rule: the paths (with their queries) of test URLs under any of the
    site's origins, put under the rule's alias origin; at most ``k``, drawn in an order fixed by
    ``seed``, one per path.

    >>> r = alias_candidates(["http://www.w.test", "http://w.test"])[0]
    >>> alias_samples(r, ["http://w.test/a?x=1", "http://w.test/b", "http://other.test/c"], ["http://w.test", "http://www.w.test"])
    ['http://www.w.test/a?x=1', 'http://www.w.test/b']
    """
    alias = rule.alpha.replace(START, "").rstrip("/")
    own = set(origins)
    paths: list[str] = []
    for u in test_urls:
        o = origin_of(u)
        if o is None or o not in own:
            continue
        parts = urlsplit(u)
        rest = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
        if rest.startswith("/"):
            paths.append(rest)
    paths = list(dict.fromkeys(paths))
    if len(paths) > k:
        paths = sorted(random.Random(seed).sample(paths, k), key=paths.index)
    return [alias + p for p in paths]


__all__ = ["alias_candidates", "alias_samples", "alias_target", "origin_of"]
