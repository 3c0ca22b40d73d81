"""The query-to-path mapping rule: a parameter whose value names the page in the path (ours, beyond
the papers; docs/rules.md "Query-to-path mapping").

Many applications answer one page under a script with a query and under a "pretty" path:
MediaWiki's ``/w/index.php?title=X`` and ``/wiki/X``, a blog's ``/index.php?p=X`` and ``/X``.
Figure 1 sees the two spellings as a substring pair (``"/w/index.php?title=" → "/wiki/"``), and a
substring rule glues whatever follows the value onto the path: ``…?title=X&action=diff`` becomes
``/wiki/X&action=diff``, another page or none (the validator's parameter strata ask for positives
where it does: docs/validation.md).  This type says the mapping itself: on a URL whose
path *is* ``scope`` and whose query holds ``name`` once with a plain value ``v``, the path becomes
``prefix + v`` and ``name=v`` leaves the query; the rest of the query stays a query, in its order:

>>> r = QueryPathRule("/w/index.php", "title", "/wiki/")
>>> r.rewrite("http://wiki.test/w/index.php?title=Main_Page")
'http://wiki.test/wiki/Main_Page'
>>> r.rewrite("http://wiki.test/w/index.php?action=history&title=Main_Page")
'http://wiki.test/wiki/Main_Page?action=history'
>>> r.rewrite("http://wiki.test/w/index.php?title=A+B")      # "+" is a space in a query, not in a path
'http://wiki.test/w/index.php?title=A+B'

A value is moved only when it reads the same in a path as in a query: letters, digits, the
characters ``._~:!$'()*,;@-`` and ``/`` (not first), and percent-escapes other than an escaped
``/``, ``?``, ``#`` or ``%``; never ``+`` (a space in a query, a plus in a path), never a value with
a ``.`` or ``..`` segment.  A URL with the parameter twice, or with an empty or other value, is left
alone.

Mined by dustbuster.core.mining.querypath (``mine_query_paths``: the log's values of a
parameter found as paths under one prefix, LikelySimilar, on at least MS distinct pages) and
decided by Figure 3 like every rule that is not a pair (WWW 2007 §5.3); its positives must show
:data:`~dustbuster.core.model.evidence.MIN_DISTINCT_VALUE_PAGES` different pages (a mapping seen on
two pages is a coincidence, not a law of the site).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any, Mapping

from dustbuster.core.errors import RuleError
from dustbuster.core.model.evidence import MIN_DISTINCT_VALUE_PAGES
from dustbuster.core.model.rulebase import apply_to_url, check_status
from dustbuster.core.model.ruletype import RuleType, Unexpressible, register
from dustbuster.core.urls.scope import split_url

#: a value that reads the same in a path as in a query (module docstring)
PLAIN_VALUE = re.compile(r"(?:[A-Za-z0-9._~:!$'()*,;@-]|%(?![2][Ff35]|[3][Ff])[0-9A-Fa-f]{2})"
                         r"(?:[A-Za-z0-9._~:!$'()*,;@/-]|%(?![2][Ff35]|[3][Ff])[0-9A-Fa-f]{2})*")
_NAME = re.compile(r"[^&=?#/\s]+")


def plain_value(v: str) -> bool:
    """``v`` may move into a path (module docstring).

    >>> [plain_value(v) for v in ("Main_Page", "Help:Contents", "A/B", "A%C3%A9", "A+B", "/x", "a%2Fb", "..", "a/./b")]
    [True, True, True, True, False, False, False, False, False]
    """
    if not PLAIN_VALUE.fullmatch(v):
        return False
    return not any(seg in (".", "..") for seg in v.split("/"))


def _check_path(p: str, what: str) -> None:
    if not p.startswith("/") or any(c in p for c in "?#&= \t\r\n") or "//" in p:
        raise RuleError(f"a query-to-path rule's {what} is a path starting with / (no query), not {p!r}")


@register
@dataclass(frozen=True)
class QueryPathRule(RuleType):
    scope: str  #: the script's path, matched exactly (``/w/index.php``)
    name: str  #: the parameter whose value names the page (``title``)
    prefix: str  #: the path the value goes under (``/wiki/``)
    support: int = 0
    status: str = "likely"
    evidence: Mapping[str, Any] = field(default_factory=dict, compare=False, hash=False)

    type = "query_path"
    #: after the substring rules, before the pattern rules: the literal rules of the query spelling
    #: (``"&LastView=&Close=$" → "$"``) see it first, as the log wrote it
    rank = 3.5

    def __post_init__(self) -> None:
        check_status(self.status)
        _check_path(self.scope, "scope")
        _check_path(self.prefix, "prefix")
        if not _NAME.fullmatch(self.name or ""):
            raise RuleError(f"bad parameter name {self.name!r}")

    @property
    def direction(self) -> str:
        return "shrinking" if len(self.prefix) < len(self.scope) + len(self.name) + 2 else "neutral"

    @property
    def text(self) -> str:
        return f"{self.scope}?{self.name}=X → {self.prefix}X (the rest of the query kept)"

    @property
    def scan_key(self) -> str:
        return self.name + "="

    def rewrite(self, url: str) -> str:
        head, path, tail = split_url(url)
        if not head or path != self.scope or not tail:
            return url
        query, hash_, frag = tail[1:].partition("#")
        items = query.split("&")
        key = self.name + "="
        hits = [k for k, it in enumerate(items) if it.startswith(key) or it == self.name]
        if len(hits) != 1:
            return url
        value = items[hits[0]][len(key):]
        if not plain_value(value):
            return url
        rest = [it for k, it in enumerate(items) if k != hits[0] and it]
        return head + self.prefix + value + ("?" + "&".join(rest) if rest else "") + hash_ + frag

    def apply_internal(self, w: str) -> str:
        return apply_to_url(w, self.rewrite)

    def min_distinct_pages(self) -> int | None:
        return MIN_DISTINCT_VALUE_PAGES

    def nutch_regexes(self) -> list[tuple[str, str]]:
        raise Unexpressible("a query-to-path mapping keeps the rest of the query after the new path: one regex "
                            "substitution cannot rejoin it without a stray '&' (declare it with a 301 redirect)")

    def site_advice(self) -> dict[str, str]:
        return {"redirect": f"a 301 from {self.scope}?{self.name}=X to {self.prefix}X (one form per page)"}

    def to_json(self) -> dict:
        return {"type": self.type, "scope": self.scope, "name": self.name, "prefix": self.prefix,
                "display": self.text, "support": self.support, "direction": self.direction,
                "status": self.status, "evidence": dict(self.evidence)}

    @classmethod
    def from_json(cls, obj: Mapping[str, Any], **common: Any) -> "QueryPathRule":
        for k in ("scope", "name", "prefix"):
            if not isinstance(obj.get(k), str):
                raise RuleError(f"a query_path rule needs a string {k!r}")
        return cls(obj["scope"], obj["name"], obj["prefix"], int(obj.get("support", 0)), **common)

    @classmethod
    def samples(cls) -> list[RuleType]:
        return [cls("/w/index.php", "title", "/wiki/"), cls("/index.php", "p", "/"), cls("/a", "id", "/a/")]
