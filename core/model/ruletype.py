"""The rule interface and the registry of rule types, keyed by ``type`` (docs/rules.md).

Every rule type is a class derived from :class:`RuleType` and registered with :func:`register`; the
consumers (JSON parsing, canonization order, evidence, safety checks, exports) ask the rule, never
switch on its class.  What a type must give: ``type``, ``rank``, ``text``, ``scan_key``,
``apply_internal``, ``to_json`` and ``from_json``; the rest has defaults here.

The papers know two types (WWW 2007 §3 substring rules, thesis §5.3 parameter rules); the registry,
and every type beyond those two, is ours.  A type beyond the core's is one module of
:mod:`dustbuster.core.model.ruletypes` (loaded by :func:`load_plugins`) and its twin in ``dustcanon.py``.
"""

from __future__ import annotations

import importlib
import pkgutil
from typing import TYPE_CHECKING, Any, Callable, ClassVar, Mapping, Sequence

from dustbuster.core.errors import RuleError

if TYPE_CHECKING:
    from dataclasses import Field


class Unexpressible(ValueError):
    """A rule the target format cannot say exactly; the message is the reason."""


#: why a type with no ClearURLs form is skipped by that export
NOT_CLEARURLS = "ClearURLs only removes query fields (or text); it cannot rewrite a URL"


class RuleType:
    """The interface of a rule (ours: the papers' two types share no base).

    Required of a type: ``type`` (its JSON name), ``rank`` (its place in canonization order,
    docs/rules.md), ``text`` (the readable line), ``scan_key`` (a string in every wrapped URL it
    can change; "" = any), ``apply_internal(w)`` (the rule on a wrapped URL ``^url$``),
    ``to_json()`` and the class method ``from_json(obj, **common)``.

    Optional hooks (defaults below): the evidence policy (:meth:`maps_values`,
    :meth:`min_distinct_pages`, :meth:`made_sample_param`), the per-type safety checks (:meth:`self_feeding`,
    :meth:`is_inverse_of`), the export mapping (:meth:`nutch_regexes`, :meth:`clearurls_item`,
    :meth:`clean_param`, :meth:`heritrix_regexes`), and a candidate source (``miner``)."""

    type: ClassVar[str] = ""
    rank: ClassVar[float] = 5
    #: Figure 4 tries it in both directions, among the likely pairs (the substring rule; ``reversed()``)
    reversible: ClassVar[bool] = False
    #: a candidate source of the type beyond the core miners, a staticmethod ``(URLList, DustParams,
    #: URLIndex) -> rules`` that core/mining/mine.py calls in language "extended"; None: none
    miner: ClassVar[Callable[..., Sequence["RuleType"]] | None] = None

    status: str
    evidence: Mapping[str, Any]

    if TYPE_CHECKING:  # declared for the type checker only: each type defines them as fields or properties
        #: every rule type is a frozen dataclass (rules are copied with ``dataclasses.replace``)
        __dataclass_fields__: ClassVar[dict[str, Field[Any]]]
        support: int

        @property
        def text(self) -> str: ...

        @property
        def scan_key(self) -> str: ...

        @property
        def direction(self) -> str: ...

    def apply_internal(self, w: str) -> str:  # pragma: no cover - every type defines it
        raise NotImplementedError

    def to_json(self) -> dict:  # pragma: no cover - every type defines it
        raise NotImplementedError

    @classmethod
    def from_json(cls, obj: Mapping[str, Any], **common: Any) -> "RuleType":  # pragma: no cover
        raise NotImplementedError

    @classmethod
    def samples(cls) -> list["RuleType"]:
        """A few rules of the type for the tests that compare it with its ``dustcanon.py`` twin
        (tests/test_dustcanon.py draws them among the core types' generated rules); [] for the core's
        five, which the tests generate themselves."""
        return []

    def order_key(self) -> tuple:
        """Its key in canonization order (stable within a type)."""
        return (self.rank, False)

    # evidence policy (core/model/evidence.py)
    def maps_values(self) -> bool:
        """Does it rewrite one literal value into another (fetched again sooner, more pages)?"""
        return False

    def min_distinct_pages(self) -> int | None:
        """Pages its positives must show, where the type decides it (None: the policy's default)."""
        return None

    def after_pairs(self) -> bool:
        """Is it decided after the likely pairs in Figure 4 (core/validation/validate.py)?  Default: before."""
        return False

    def made_sample_param(self) -> str | None:
        """The parameter the validator may add to test URLs lacking it to make more samples when the
        logs hold too few (core/validation/madesamples.py; ours); None: it makes none."""
        return None

    def site_advice(self) -> dict[str, str]:
        """What the site could do itself (core/report/sitereport.py): ``redirect``, ``robots``; {}: none."""
        return {}

    # safety checks (core/canon/rulecheck.py)
    def self_feeding(self) -> str | None:
        """Why it can fire again on its own output (None: it cannot by itself)."""
        return None

    def is_inverse_of(self, other: "RuleType") -> bool:
        """Does ``other`` undo it (both kept, canonization would flip between the two)?"""
        return False

    # export mapping (core/report/export.py, core/report/crawlerexport.py)
    def nutch_regexes(self) -> list[tuple[str, str]]:
        """(pattern, substitution) pairs for Nutch's regex normalizer; raises Unexpressible."""
        raise Unexpressible(f"no Nutch form for {self.type} rules")

    def clearurls_item(self) -> tuple[str, str]:
        """(regex, ``rules`` or ``rawRules``) of a ClearURLs provider; raises Unexpressible."""
        raise Unexpressible(NOT_CLEARURLS)

    def clean_param(self) -> list[str]:
        """The parameters a robots.txt ``Clean-param`` line names for it; raises Unexpressible."""
        raise Unexpressible("not a parameter: declare it with a 301 redirect or a canonical link instead")

    def heritrix_regexes(self, per_param: int) -> list[tuple[str, str]] | None:
        """Its own Heritrix RegexRules (None: derived from :meth:`nutch_regexes`); raises Unexpressible."""
        return None


#: type name → class, in registration order
REGISTRY: dict[str, type[RuleType]] = {}


def register(cls: type[RuleType]) -> type[RuleType]:
    """Class decorator: add a rule type to :data:`REGISTRY` (its ``type`` must be new)."""
    if not cls.type or cls.type in REGISTRY and REGISTRY[cls.type] is not cls:
        raise RuleError(f"rule type {cls.type!r} is empty or already registered")
    REGISTRY[cls.type] = cls
    return cls


def load_plugins(package: str = "dustbuster.core.model.ruletypes") -> None:
    """Import every module of ``package``: each registers its rule type."""
    pkg = importlib.import_module(package)
    for mod in pkgutil.iter_modules(pkg.__path__):
        importlib.import_module(f"{package}.{mod.name}")


def type_of(kind: str) -> type[RuleType]:
    cls = REGISTRY.get(kind)
    if cls is None:
        raise RuleError(f"unknown rule type {kind!r}")
    return cls
