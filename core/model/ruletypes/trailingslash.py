"""The trailing-slash rule: under a path scope, ``/dir/`` and ``/dir`` are one page (ours, beyond
the papers; docs/rules.md "Trailing-slash rule").

Many servers answer a directory both with and without its final ``/`` (Apache's ``mod_dir``
redirects one to the other, many applications route both): one substring rule per directory
(``"/docs/$" → "/docs$"``) says it for one path only, this type says it for every path under its
scope.  It drops the ``/`` that ends a path after a segment (``/a/b/`` → ``/a/b``); the root ``/``
and a path ending in ``//`` are left alone, so it never feeds itself.  Validated by Figure 3 like
every rule that is not a pair (WWW 2007 §5.3); it has no miner yet (``miner`` is None): it comes
from rule sets written or declared for a site and checked by the validator.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Mapping

from dustbuster.core.errors import RuleError
from dustbuster.core.model.regexforms import java_escape
from dustbuster.core.model.rulebase import apply_to_url, check_status
from dustbuster.core.model.ruletype import RuleType, register
from dustbuster.core.urls.scope import check_scope, in_scope, scope_text, split_url


@register
@dataclass(frozen=True)
class TrailingSlashRule(RuleType):
    scope: str = ""  #: a path scope (dustbuster.core.urls.scope): "" = every path
    support: int = 0
    status: str = "likely"
    evidence: Mapping[str, Any] = field(default_factory=dict, compare=False, hash=False)

    type = "trailing_slash"
    rank = 2.5  #: a path normalisation: after the case rules, before the substring rules

    def __post_init__(self) -> None:
        check_status(self.status)
        check_scope(self.scope)
        if "?" in self.scope:
            raise RuleError("a trailing-slash rule's scope is a path (no query-parameter scope)")

    @property
    def direction(self) -> str:
        return "shrinking"

    @property
    def text(self) -> str:
        return "drop the path's trailing /" + scope_text(self.scope)

    @property
    def scan_key(self) -> str:
        return "/"

    def rewrite(self, url: str) -> str:
        head, path, tail = split_url(url)
        if not head or path[-1:] != "/" or path[-2:-1] in ("", "/") or not in_scope(path, self.scope):
            return url
        return head + path[:-1] + tail

    def apply_internal(self, w: str) -> str:
        return apply_to_url(w, self.rewrite)

    def nutch_regexes(self) -> list[tuple[str, str]]:
        """scheme://authority, the scope, the path's last segment, its ``/``, then the query."""
        body = r"(?:/[^?]*[^/?])?" if self.scope else r"/[^?]*[^/?]"
        return [(rf"^([^?]*?://[^/?]*{java_escape(self.scope)}{body})/((?:\?[\s\S]*)?)$", "$1$2")]

    def site_advice(self) -> dict[str, str]:
        where = f" under {self.scope}" if self.scope else ""
        return {"redirect": f"a 301 from a path ending in / to the path without it{where} (one form per page)"}

    def to_json(self) -> dict:
        return {"type": self.type, "scope": self.scope, "display": self.text, "support": self.support,
                "direction": self.direction, "status": self.status, "evidence": dict(self.evidence)}

    @classmethod
    def from_json(cls, obj: Mapping[str, Any], **common: Any) -> "TrailingSlashRule":
        return cls(obj.get("scope") or "", int(obj.get("support", 0)), **common)

    @classmethod
    def samples(cls) -> list[RuleType]:
        return [cls(""), cls("/a"), cls("/A")]
