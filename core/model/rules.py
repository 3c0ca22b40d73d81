"""The rule model and its stable JSON form (docs/rules.md), used by every part of dustbuster.

Two rule types:

* :class:`SubstringRule` α → β (WWW 2007 Definition 3.1).  In JSON ``alpha``/``beta`` are the
  plain strings and the anchors are explicit booleans (both sides share them, §3: "these strings
  simultaneously start with ^ and/or simultaneously end with $").  Internally the anchors are the
  sentinel characters of :mod:`dustbuster.core.urls.tokens`.  Applying it replaces the first token-aligned
  occurrence of α by β (thesis Figure 5.5, footnote: "one standard way is always chosen").
* :class:`ParamRule`: remove parameter ``name`` or set its value to ``value`` (thesis §5.3).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any, Mapping, Sequence

from dustbuster.core.urls import query
from dustbuster.core.errors import RuleError
from dustbuster.core.model.pattern import PatternRule  # noqa: F401  (registers the type)
from dustbuster.core.model import regexforms as rx
from dustbuster.core.model.rulebase import AnchoredPair, check_status
from dustbuster.core.model.ruletype import REGISTRY, RuleType, load_plugins, register, type_of
from dustbuster.core.urls.scope import check_scope, scope_names, scope_text, url_in_scope
from dustbuster.core.model.scopedrules import CaseRule, QueryRule  # noqa: F401  (register the types)
from dustbuster.core.urls.tokens import END, START, find_aligned, tokenize

SCHEMA_RULESET = "dustbuster/ruleset@1"
#: ``dustbuster mine --json`` (and a window's candidate set): @2 has one ``rules`` list
SCHEMA_MINE = "dustbuster/mine@2"
SCHEMA_MINE_PREFIX = "dustbuster/mine@"
_check_status = check_status


@register
@dataclass(frozen=True)
class SubstringRule(AnchoredPair, RuleType):
    alpha: str  #: internal form (may start with \x02 and/or end with \x03)
    beta: str
    support: int = 0
    support_high: int = 0
    status: str = "likely"
    evidence: Mapping[str, Any] = field(default_factory=dict, compare=False, hash=False)

    type = "substring"
    reversible = True
    rank = 3  #: after the query and path normalisations, in the order given (rank order)

    def __post_init__(self) -> None:
        _check_status(self.status)
        self.check_pair()

    @property
    def alpha_text(self) -> str:
        return _strip(self.alpha)

    @property
    def beta_text(self) -> str:
        return _strip(self.beta)

    @property
    def scan_key(self) -> str:
        """A string that occurs in every wrapped URL the rule can change ("" = any URL)."""
        return self.alpha

    def apply_internal(self, w: str) -> str:
        """Apply to a wrapped URL ``^url$``: first token-aligned occurrence of α becomes β."""
        a = self.alpha
        if a and a not in w:
            return w
        # the empty α occurs between the sentinels only
        k = find_aligned(w, a, 0 if a else 1)
        if k < 0 or (not a and k >= len(w)):
            return w
        return w[:k] + self.beta + w[k + len(a):]

    def to_json(self) -> dict:
        return {
            "type": "substring",
            "alpha": self.alpha_text,
            "beta": self.beta_text,
            "anchor_start": self.anchor_start,
            "anchor_end": self.anchor_end,
            "display": self.text,
            "support": self.support,
            "support_high": self.support_high,
            "direction": self.direction,
            "status": self.status,
            "evidence": dict(self.evidence),
        }

    def reversed(self) -> "SubstringRule":
        """β → α: the other direction Figure 4 tries (a likely rule, no evidence)."""
        return SubstringRule(self.beta, self.alpha, self.support, self.support_high)

    def maps_values(self) -> bool:
        """α and β differ only in alphanumeric tokens at the same places (``"=50&" → "=20&"``)."""
        ta, tb = tokenize(self.alpha), tokenize(self.beta)
        return len(ta) == len(tb) and all(a == b or (a.isalnum() and b.isalnum()) for a, b in zip(ta, tb))

    def self_feeding(self) -> str | None:
        if not self.alpha_text:  # "", "^", "$", "^$": occurs in every URL, whatever it became
            return "self_feeding: empty alpha"
        if self.alpha in self.beta:
            return "self_feeding: alpha occurs in beta"
        return None

    def nutch_regexes(self) -> list[tuple[str, str]]:
        return rx.substring_regexes(self)

    def site_advice(self) -> dict[str, str]:
        if "://" in self.alpha_text:
            return {"redirect": f"a 301 from {self.alpha_text} to {self.beta_text} for every path (one host name)"}
        return {"redirect": f"a 301 from the URLs the rule rewrites to their rewritten form ({self.text})"}

    @classmethod
    def from_json(cls, obj: Mapping[str, Any], **common: Any) -> "SubstringRule":
        alpha, beta = obj["alpha"], obj["beta"]
        if not isinstance(alpha, str) or not isinstance(beta, str):
            raise RuleError("alpha and beta must be strings")
        return cls.from_parts(alpha, beta, bool(obj.get("anchor_start", False)), bool(obj.get("anchor_end", False)),
                              support=int(obj.get("support", 0)), support_high=int(obj.get("support_high", 0)), **common)

    @classmethod
    def from_parts(cls, alpha: str, beta: str, anchor_start: bool = False, anchor_end: bool = False, **kw: Any) -> "SubstringRule":
        pre = START if anchor_start else ""
        post = END if anchor_end else ""
        return cls(pre + alpha + post, pre + beta + post, **kw)


def _strip(s: str) -> str:
    if s.startswith(START):
        s = s[1:]
    if s.endswith(END):
        s = s[:-1]
    return s


@register
@dataclass(frozen=True)
class ParamRule(RuleType):
    name: str
    action: str  #: "remove" or "replace"
    value: str | None = None
    support: int = 0
    disqualified: int = 0
    status: str = "likely"
    evidence: Mapping[str, Any] = field(default_factory=dict, compare=False, hash=False)
    scope: str = ""  #: where it applies (dustbuster.core.urls.scope); "" = every URL, as in the thesis
    #: a remove rule that drops only these values of the parameter (ours: a parameter some of whose
    #: values are no-ops, ``action=view``, while others select other views); () = every value
    values: tuple[str, ...] = ()

    type = "parameter"
    rank = 0  #: first: they normalise the query the other rules see

    def __post_init__(self) -> None:
        _check_status(self.status)
        if not self.name or any(c in self.name for c in "&=?#"):
            raise RuleError(f"bad parameter name {self.name!r}")
        if self.action not in ("remove", "replace"):
            raise RuleError(f"parameter action must be remove or replace, not {self.action!r}")
        if self.action == "replace" and self.value is None:
            raise RuleError("a replace rule needs a value")
        if self.value is not None and any(c in self.value for c in "&#"):
            raise RuleError(f"bad parameter value {self.value!r}")
        check_scope(self.scope)
        if self.name in scope_names(self.scope):
            raise RuleError(f"a parameter rule cannot change {self.name}=, which its scope fixes")
        if self.values and (self.action != "remove" or len(set(self.values)) != len(self.values)
                            or any(not isinstance(v, str) or any(c in v for c in "&#") for v in self.values)):
            raise RuleError(f"'values' lists distinct values a remove rule drops: {self.values!r}")

    @property
    def direction(self) -> str:
        return "shrinking" if self.action == "remove" else "neutral"

    @property
    def text(self) -> str:
        if self.values:
            what = "remove " + ", ".join(f"{self.name}={v}" for v in self.values)
        else:
            what = f"remove {self.name}=*" if self.action == "remove" else f"{self.name}=* → {self.name}={self.value}"
        return what + scope_text(self.scope)

    @property
    def scan_key(self) -> str:
        return self.name + "="

    def apply_internal(self, w: str) -> str:
        url = w[1:-1]
        if self.scope and not url_in_scope(url, self.scope):
            return w
        if self.values:
            out = query.remove_param(url, self.name, self.values)
        else:
            out = query.remove_param(url, self.name) if self.action == "remove" else query.replace_param(url, self.name, self.value or "")
        return w if out == url else START + out + END

    def to_json(self) -> dict:
        return {
            "type": "parameter",
            "name": self.name,
            "action": self.action,
            "value": self.value,
            "scope": self.scope,
            **({"values": list(self.values)} if self.values else {}),
            "display": self.text,
            "support": self.support,
            "disqualified": self.disqualified,
            "direction": self.direction,
            "status": self.status,
            "evidence": dict(self.evidence),
        }

    def maps_values(self) -> bool:
        return self.action == "replace"

    def made_sample_param(self) -> str | None:
        """A remove rule under no query-parameter scope (core/validation/madesamples.py)."""
        return self.name if self.action == "remove" and "?" not in self.scope else None

    def nutch_regexes(self) -> list[tuple[str, str]]:
        return rx.param_regexes(self)

    def clearurls_item(self) -> tuple[str, str]:
        if self.action != "remove":
            raise rx.Unexpressible("ClearURLs removes fields, it cannot set a value")
        if self.values:
            raise rx.Unexpressible("ClearURLs removes a field whatever its value, not some values of it")
        return re.escape(self.name), "rules"

    def site_advice(self) -> dict[str, str]:
        if self.action != "remove":
            return {"redirect": f"a 301 from any {self.name}= value to {self.name}={self.value}"}
        return {"redirect": f"link without {self.name}= (or answer a URL with it by a 301 to the URL without it)",
                "robots": f"Clean-param: {self.name}" + (f" {self.scope}/" if self.scope else "")}

    def clean_param(self) -> list[str]:
        if self.action != "remove":
            raise rx.Unexpressible("Clean-param makes a robot ignore a parameter; it cannot set a value")
        if self.values:
            raise rx.Unexpressible("Clean-param makes a robot ignore a parameter whatever its value")
        return [self.name]

    def heritrix_regexes(self, per_param: int) -> list[tuple[str, str]] | None:
        if self.action != "remove":
            raise rx.Unexpressible("a value replacement rewrites every N= item; one whole-URI match cannot")
        return [rx.param_removal_regex(self)] * per_param

    @classmethod
    def from_json(cls, obj: Mapping[str, Any], **common: Any) -> "ParamRule":
        values = obj.get("values") or ()
        if not isinstance(values, (list, tuple)):
            raise RuleError("'values' must be a list of strings")
        return cls(str(obj["name"]), str(obj["action"]), obj.get("value"), support=int(obj.get("support", 0)),
                   disqualified=int(obj.get("disqualified", 0)), scope=obj.get("scope") or "", values=tuple(values),
                   **common)



#: any rule: an instance of a registered type (dustbuster.core.model.ruletype.REGISTRY)
Rule = RuleType
#: the rule types of the papers (WWW 2007 substring rules, thesis §5.3 global parameter rules)
PAPER_TYPES = ("substring", "parameter")


def rule_from_json(obj: Mapping[str, Any]) -> Rule:
    """Parse one rule's JSON form by its registered type; raises RuleError with the reason."""
    if not isinstance(obj, Mapping):
        raise RuleError(f"a rule must be a JSON object, not {type(obj).__name__}")
    kind = obj.get("type", "substring")
    if not isinstance(obj.get("evidence") or {}, Mapping):
        raise RuleError("a rule's evidence must be a JSON object")
    common = {"status": obj.get("status", "likely"), "evidence": obj.get("evidence") or {}}
    try:
        return type_of(kind).from_json(obj, **common)
    except KeyError as exc:
        raise RuleError(f"{kind} rule lacks field {exc.args[0]!r}") from None
    except (TypeError, ValueError, OverflowError) as exc:  # OverflowError: int(1e400)
        raise RuleError(f"bad {kind} rule: {exc}") from None


def canonization_order(rules: Sequence[Rule]) -> list[Rule]:
    """Each type's ``rank`` (docs/rules.md "Canonization order"): query normalisation first —
    parameter rules (narrow scopes before wide ones do not matter: each removes or sets its own
    parameter), then query rules (drop before sort) — so the substring rules see canonical queries
    and a query never ends up in the path with parameters in it; then case rules (the path's
    spelling), the substring rules in the order given (rank order), and pattern rules last (they
    generalise literal substring rules).  Stable within a type."""
    return sorted(rules, key=lambda r: r.order_key())


#: the lists of a mine@1 document (and of a candidates record written before mine@2), in the order the
#: one ``rules`` list of mine@2 keeps them: parameter rules, the other types, substring rules by rank
LEGACY_LISTS = ("param_rules", "general_rules", "rules")


def is_legacy(doc: Mapping[str, Any]) -> bool:
    """A mine@1 document or an old candidates record: the three lists."""
    return "param_rules" in doc or "general_rules" in doc


def document_rules_json(doc: Mapping[str, Any]) -> list:
    """The rules of a document as one JSON list: its ``rules`` (a RuleSet, mine@2, a candidates
    record), or the three lists of mine@1 joined as :data:`LEGACY_LISTS` orders them."""
    for key in LEGACY_LISTS:
        if not isinstance(doc.get(key) or [], list):
            raise RuleError(f"'{key}' must be a list")
    if not is_legacy(doc):
        return list(doc.get("rules") or [])
    return [r for key in LEGACY_LISTS for r in doc.get(key) or []]


def rule_dicts(doc: Mapping[str, Any]) -> list[dict]:
    """Every rule object of a document of either shape (one ``rules`` list, or mine@1's three), for
    views that show what they are given: entries that are not objects are left out, not refused."""
    lists = [doc.get(key) for key in LEGACY_LISTS]
    return [r for v in lists if isinstance(v, list) for r in v if isinstance(r, dict)]


def rules_from_document(doc: Mapping[str, Any]) -> list[Rule]:
    """Rules of a RuleSet document or of ``dustbuster mine --json`` output, in canonization order.

    A RuleSet lists them in ``rules``, in its own order; a mine output (``dustbuster/mine@2``: one
    ``rules`` list; ``dustbuster/mine@1``: substring rules in ``rules``, parameter rules in
    ``param_rules``, the other types in ``general_rules``) is put in canonization order
    (:func:`canonization_order`: parameter and query rules first, they normalise the query).
    """
    if not isinstance(doc, Mapping):
        raise RuleError("a rule document must be a JSON object")
    if "rules" not in doc and "param_rules" not in doc:
        raise RuleError("no 'rules' (or 'param_rules') list in the document")
    rules = [rule_from_json(r) for r in document_rules_json(doc)]
    mined = is_legacy(doc) or str(doc.get("schema", "")).startswith(SCHEMA_MINE_PREFIX)
    return canonization_order(rules) if mined else rules  # a RuleSet: its own order


def ruleset_document(site: str, version: int | None, rules: list, created: float | None = None,
                     stats: Any = None) -> dict:
    """A rule set as the plain JSON document a file holds (``dustbuster validate -o``, ``dustbuster
    export --to json``): the fields of the rules topic's RuleSet record (docs/topics.md), schema
    first; ``created`` and ``stats`` only when given."""
    doc: dict = {"schema": SCHEMA_RULESET, "site": site, "version": version}
    if created is not None:
        doc["created"] = created
    doc["rules"] = rules
    if stats is not None:
        doc["stats"] = stats
    return doc


load_plugins()
#: canonization rank of each registered type (docs/rules.md "Canonization order")
TYPE_ORDER = {kind: cls.rank for kind, cls in REGISTRY.items()}
