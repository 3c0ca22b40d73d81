"""Generalised query and path rules (beyond the papers; docs/rules.md):

* :class:`QueryRule` — under a path scope the query does not matter: ``drop`` it (keeping only the
  parameters named in ``keep``), or ``sort`` its items by name when the site ignores their order;
* :class:`CaseRule` — under a path scope the site case-folds the path: lower-case the part of the
  path below the scope.

Both are idempotent: a dropped query stays dropped, a sorted query stays sorted, a lower-cased
path stays lower-case (tests/test_generalrules.py checks it with Hypothesis).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any, Mapping

from dustbuster.core.urls import query
from dustbuster.core.errors import RuleError
from dustbuster.core.model import regexforms as rx
from dustbuster.core.model.rulebase import apply_to_url, check_status
from dustbuster.core.model.ruletype import RuleType, Unexpressible, register
from dustbuster.core.urls.scope import check_scope, in_scope, scope_names, scope_text, split_url, url_in_scope

QUERY_ACTIONS = ("drop", "sort")
_ESCAPE = re.compile(r"%[0-9a-f]{2}")  #: percent-escapes stay upper-case (RFC 3986 §6.2.2.1)


@register
@dataclass(frozen=True)
class QueryRule(RuleType):
    scope: str
    action: str  #: "drop" or "sort"
    keep: tuple[str, ...] = ()  #: drop: the parameters that stay (in their order in the URL)
    support: int = 0
    disqualified: int = 0
    status: str = "likely"
    evidence: Mapping[str, Any] = field(default_factory=dict, compare=False, hash=False)
    #: drop: when given, the closed list of the parameters dropped — the names its evidence covered;
    #: any other name (``keep``'s, and one first seen later) stays
    only: tuple[str, ...] = ()

    type = "query"
    rank = 1  #: after the parameter rules; drop before sort (order_key)

    def __post_init__(self) -> None:
        check_status(self.status)
        check_scope(self.scope)
        if self.action not in QUERY_ACTIONS:
            raise RuleError(f"query action must be one of {QUERY_ACTIONS}, not {self.action!r}")
        if self.action == "sort" and self.keep:
            raise RuleError("a sort rule keeps every parameter (no 'keep' list)")
        if any(not isinstance(n, str) or not n or any(c in n for c in "&=?#") for n in self.keep):
            raise RuleError(f"bad parameter name in keep: {self.keep!r}")
        if self.action == "drop" and not scope_names(self.scope) <= set(self.keep):
            raise RuleError("a drop rule under a query-parameter scope keeps the scope's parameters")
        if self.only and (self.action != "drop" or set(self.only) & (set(self.keep) | scope_names(self.scope))
                          or any(not isinstance(n, str) or not n or any(c in n for c in "&=?#") for n in self.only)):
            raise RuleError(f"'only' lists the parameters a drop rule drops, none it keeps: {self.only!r}")

    @property
    def direction(self) -> str:
        return "shrinking" if self.action == "drop" else "neutral"

    @property
    def text(self) -> str:
        if self.action == "sort":
            what = "sort the query by name"
        elif self.only:
            what = "drop " + ", ".join(self.only) + " from the query"
        elif self.keep:
            what = "drop the query but " + ", ".join(self.keep)
        else:
            what = "drop the query"
        return what + scope_text(self.scope)

    @property
    def scan_key(self) -> str:
        return "?"

    def rewrite(self, url: str) -> str:
        body, hash_, frag = url.partition("#")  # a fragment stays out of the query
        if "?" not in body or (self.scope and not url_in_scope(body, self.scope)):
            return url
        base, items = query.split(body)
        if items is None:
            return url
        if self.action == "drop" and self.only:
            kept = [(n, v) for n, v in items if n not in self.only]
        elif self.action == "drop":
            kept = [(n, v) for n, v in items if n in self.keep]
        else:
            kept = sorted(items, key=lambda it: it[0])
        return query.join(base, kept) + hash_ + frag

    def apply_internal(self, w: str) -> str:
        return apply_to_url(w, self.rewrite)

    def to_json(self) -> dict:
        return {"type": "query", "scope": self.scope, "action": self.action, "keep": list(self.keep),
                "display": self.text, "support": self.support, "disqualified": self.disqualified,
                "direction": self.direction, "status": self.status, "evidence": dict(self.evidence),
                **({"only": list(self.only)} if self.only else {})}

    def order_key(self) -> tuple:
        return (self.rank, self.action == "sort")

    def min_distinct_pages(self) -> int | None:
        """1 for dropping the whole query: that one script ignores its query is shown by many URLs
        of its one page (core/model/evidence.py)."""
        return 1 if self.action == "drop" else None

    def nutch_regexes(self) -> list[tuple[str, str]]:
        return rx.query_regexes(self)

    def clearurls_item(self) -> tuple[str, str]:
        if self.action != "drop":
            raise Unexpressible("ClearURLs cannot reorder the query")
        if self.only:
            return "(?:" + "|".join(map(re.escape, self.only)) + ")", "rules"
        if self.keep:
            return "(?!(?:" + "|".join(map(re.escape, self.keep)) + ")$).*", "rules"
        return r"\?.*", "rawRules"

    def site_advice(self) -> dict[str, str]:
        what = {"drop": "without the query" if not self.keep else f"with only {', '.join(self.keep)} in the query",
                "sort": "with the query's parameters in one order"}[self.action]
        return {"redirect": f"link to the page {what}" + (f" under {self.scope}" if self.scope else "")}

    def clean_param(self) -> list[str]:
        if self.only:
            return list(self.only)
        raise Unexpressible("Clean-param names the parameters to ignore; it cannot say every parameter or all but some")

    def heritrix_regexes(self, per_param: int) -> list[tuple[str, str]] | None:
        if self.keep or self.only:
            raise Unexpressible("keeping some items rewrites the query item by item; one whole-URI match cannot")
        return None

    @classmethod
    def from_json(cls, obj: Mapping[str, Any], **common: Any) -> "QueryRule":
        keep, only = obj.get("keep") or [], obj.get("only") or []
        if not isinstance(keep, list) or not isinstance(only, list):
            raise RuleError("'keep' and 'only' must be lists of parameter names")
        return cls(obj.get("scope") or "", str(obj["action"]), tuple(keep),
                   int(obj.get("support", 0)), int(obj.get("disqualified", 0)), only=tuple(only), **common)


@register
@dataclass(frozen=True)
class CaseRule(RuleType):
    scope: str
    support: int = 0
    disqualified: int = 0
    status: str = "likely"
    evidence: Mapping[str, Any] = field(default_factory=dict, compare=False, hash=False)

    type = "case"
    rank = 2  #: the path's spelling, before the substring rules

    def __post_init__(self) -> None:
        check_status(self.status)
        check_scope(self.scope)
        if "?" in self.scope:
            raise RuleError("a case rule's scope is a path (no query-parameter scope)")

    @property
    def direction(self) -> str:
        return "neutral"

    @property
    def text(self) -> str:
        return "lower-case the path" + (f" below {self.scope}" if self.scope else "")

    @property
    def scan_key(self) -> str:
        return self.scope

    def rewrite(self, url: str) -> str:
        head, path, tail = split_url(url)
        if not head or not in_scope(path, self.scope):
            return url
        k = len(self.scope)
        low = path[:k] + _ESCAPE.sub(lambda m: m.group(0).upper(), path[k:].lower())
        return url if low == path else head + low + tail

    def apply_internal(self, w: str) -> str:
        return apply_to_url(w, self.rewrite)

    def to_json(self) -> dict:
        return {"type": "case", "scope": self.scope, "display": self.text, "support": self.support,
                "disqualified": self.disqualified, "direction": self.direction, "status": self.status,
                "evidence": dict(self.evidence)}

    def nutch_regexes(self) -> list[tuple[str, str]]:
        raise Unexpressible("a Java regex replacement cannot change letter case")

    def site_advice(self) -> dict[str, str]:
        return {"redirect": f"a 301 to the lower-case path under {self.scope or '/'}"}

    def clearurls_item(self) -> tuple[str, str]:
        raise Unexpressible("ClearURLs cannot change letter case")

    @classmethod
    def from_json(cls, obj: Mapping[str, Any], **common: Any) -> "CaseRule":
        return cls(obj.get("scope") or "", int(obj.get("support", 0)), int(obj.get("disqualified", 0)), **common)
