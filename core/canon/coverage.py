"""Covered candidates (ours; docs/validation.md): a candidate rule adds nothing to the
valid set when that set already gives u and R(u) one canonical form on every test URL u the rule
changes (``"?fbclid=IwAR0x$" → "$"`` once ``drop the query`` is valid): Figure 4 drops it unfetched
(:func:`dustbuster.core.validation.validate.validate`)."""

from __future__ import annotations

from typing import Sequence

from dustbuster.core.canon.canonize import Canonizer, canonical
from dustbuster.core.model.rules import Rule, canonization_order
from dustbuster.core.canon.urlreach import URLReach


def apply_rule(rule: Rule, url: str) -> str:
    return canonical(url, [rule], ma=1)


def covered_by(rule: Rule, valid: Sequence[Rule], test_urls: Sequence[str]) -> bool:
    """True when ``valid`` already gives u and R(u) one canonical form for every test URL u that
    ``rule`` changes (there is at least one): the rule would add nothing to the set."""
    return Coverage(test_urls)(rule, valid)


class Coverage:
    """:func:`covered_by` over one round: the valid set's canonizer and the canonical forms it gives
    are built again only when the valid set has grown, not for every candidate; a candidate is
    applied only to the test URLs holding its key (``reach``, core/canon/urlreach.py: the round's index,
    shared with the other fetch-free checks; built here when not given)."""

    def __init__(self, test_urls: Sequence[str], reach: URLReach | None = None) -> None:
        self.reach = reach if reach is not None else URLReach(test_urls)
        self.urls = self.reach.urls
        self.size = 0
        self.canon: Canonizer | None = None
        self.forms: dict[str, str] = {}

    def form(self, u: str) -> str:
        got = self.forms.get(u)
        if got is None:
            got = self.forms[u] = self.canon(u)  # type: ignore[misc]
        return got

    def __call__(self, rule: Rule, valid: Sequence[Rule]) -> bool:
        if not valid:
            return False
        if len(valid) != self.size:
            self.canon, self.size, self.forms = Canonizer(canonization_order(valid)), len(valid), {}
        changes = self.reach.changes(rule)
        return bool(changes) and all(self.form(u) == self.form(v) for u, v in changes)


__all__ = ["Coverage", "apply_rule", "covered_by"]
