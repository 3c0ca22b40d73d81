"""The one ``rules`` list of a mine@2 document or candidate set, seen as the three lists tests
compared before issue 24: substring rules, parameter rules, the other types (each in list order)."""

from __future__ import annotations

from dustbuster.core.model.rules import document_rules_json


def by_list(doc: dict) -> dict[str, list]:
    every = document_rules_json(doc)
    kind = lambda r: r.get("type", "substring")  # noqa: E731
    return {"rules": [r for r in every if kind(r) == "substring"],
            "param_rules": [r for r in every if kind(r) == "parameter"],
            "general_rules": [r for r in every if kind(r) not in ("substring", "parameter")]}
