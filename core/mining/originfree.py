"""A path rewrite stated once for the site, not once per origin (beyond the papers; docs/rules.md).

Phase 1 (WWW 2007 Figure 1) finds a rewrite in the context it saw.  A site that answers under
several origins (the bare host and ``www.``, two ports) so gives one literal per origin:
``"^http://h:1/w/index.php/" → "^http://h:1/wiki/"``, the same under ``h:2``, and across origins
``"h:2/w/index.php/" → "h:1/wiki/"``.  Each has a few supports and few test URLs, often too few for
Figure 3 to decide (``too_few_samples``), while what they say is one law of the site: the path
``/w/index.php/X`` is ``/wiki/X``, whatever the origin (the host rules say which origin is the
site's: core/validation/implied.py ``one_rule_per_alias``).

Here every likely pair whose α and β both start in an authority — after a scheme
(``http://h:1/…``, anchored or not) or as ``host:port/…`` — gives the pair of what follows the
authority on both sides (``"/w/index.php/" → "/wiki/"``), when that differs, starts with ``/`` and
holds a letter or digit.  The pairs giving one path pair are its **members**; it is proposed once,
with their summed supports (at least MS), when they are stated under two origins or more (two
pairs of α's and β's authorities: a single-origin log's ``"^http://h/blog/" → "^http://h/"`` is
a rule of that origin's paths, no family), unless it is a likely pair already, as an unanchored
:class:`~dustbuster.core.model.rules.SubstringRule` carrying ``evidence.origin_free`` (its members'
texts, the first ten).  It is decided before the pairs (core/validation/validate.py: a rule of this
kind is not ``after_pairs``) on the test URLs of every origin that holds the path; once valid, its
members are covered and dropped unfetched; when refuted, they are decided one by one as before.
A host without a port and without a scheme (``h.example/w/…``) is not taken for an authority: it
reads as a path as well (``index.php/``).  Choices ours.

>>> from dustbuster.core.model.pair import Pair
>>> from dustbuster.core.params import DustParams
>>> pairs = [Pair("\\x02http://h:1/w/index.php/", "\\x02http://h:1/wiki/", 4, 4),
...          Pair("h:2/w/index.php/", "h:1/wiki/", 3, 3)]
>>> [(r.alpha, r.beta, r.support) for r in origin_free(pairs, DustParams())]
[('/w/index.php/', '/wiki/', 7)]
"""

from __future__ import annotations

import re
from collections import defaultdict
from typing import Sequence

from dustbuster.core.model.pair import Pair
from dustbuster.core.model.rules import SubstringRule
from dustbuster.core.params import DustParams
from dustbuster.core.urls.tokens import END, START

#: an authority at the start of α or β: after a scheme, or a host with an explicit port
_AUTHORITY = re.compile(r"^(?:[A-Za-z][A-Za-z0-9+.-]*://[^/?#\x03]*|[A-Za-z0-9.-]*[A-Za-z0-9]:\d+)(?=/)")
_ALNUM = re.compile(r"[A-Za-z0-9]")
MAX_EXAMPLES = 10


def split_authority(s: str) -> tuple[str, str] | None:
    """(the authority ``s`` starts in, what follows it: internal form, an end anchor kept), or None.

    >>> split_authority("\\x02http://h:1/wiki/"), split_authority("/w/index.php/")
    (('http://h:1', '/wiki/'), None)
    """
    body = s[1:] if s.startswith(START) else s
    m = _AUTHORITY.match(body)
    return (body[:m.end()], body[m.end():]) if m else None


def path_part(s: str) -> str | None:
    """What follows the authority ``s`` starts in, or None.

    >>> path_part("\\x02http://h:1/wiki/"), path_part("h:2/w/"), path_part("/w/index.php/")
    ('/wiki/', '/w/', None)
    """
    got = split_authority(s)
    return got[1] if got else None


def origin_free(pairs: Sequence[Pair], params: DustParams) -> list[SubstringRule]:
    """The path pairs of the likely pairs stated under origins (module docstring), by support
    (descending), then text."""
    members: dict[tuple[str, str], list[Pair]] = defaultdict(list)
    origins: dict[tuple[str, str], set[tuple[str, str]]] = defaultdict(set)
    for p in pairs:
        sa, sb = split_authority(p.alpha), split_authority(p.beta)
        if sa is None or sb is None:
            continue
        (oa, a), (ob, b) = sa, sb
        if a == b or not a.startswith("/") or not b.startswith("/"):
            continue
        if not _ALNUM.search(a.rstrip(END)) or a.rstrip(END) == "/":
            continue
        members[(a, b)].append(p)
        origins[(a, b)].add((oa, ob))
    known = {(p.alpha, p.beta) for p in pairs}
    out = []
    for (a, b), ms in members.items():
        support, high = sum(m.support for m in ms), sum(m.support_high for m in ms)
        if (a, b) in known or support < params.ms or len(origins[(a, b)]) < 2:
            continue  # one origin's literal is a rule of that origin's paths: no family
        texts = [SubstringRule(m.alpha, m.beta).text for m in ms[:MAX_EXAMPLES]]
        out.append(SubstringRule(a, b, support, high, "likely", {"origin_free": texts}))
    out.sort(key=lambda r: (-r.support, r.text))
    return out


__all__ = ["origin_free", "path_part", "split_authority"]
