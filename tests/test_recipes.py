"""docs/architecture.md's recipes, followed (issue 24 item 6): the files "Where to add: A rule type"
names are exactly the places every registered rule type has (dustbuster.core.model.ruletype.REGISTRY)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

import dustcanon
from dustbuster.core.model import rules as _rules  # noqa: F401 - importing the rule model loads the plug-ins
from dustbuster.core.model.ruletype import REGISTRY, RuleType

ROOT = Path(__file__).resolve().parents[1]
CORE_TYPES = {"substring", "parameter", "query", "case", "pattern"}  #: the core's own, in its older modules


def recipe_files() -> list[str]:
    text = (ROOT / "docs" / "architecture.md").read_text(encoding="utf-8")
    m = re.search(r"^\* \*\*A rule type\.\*\*(.*?)^\* \*\*", text, re.S | re.M)
    assert m, "docs/architecture.md has no 'A rule type' recipe"
    return re.findall(r"^\s+\d+\. `([^`]+)`", m.group(1), re.M)


def _module(kind: str, cls: type) -> str | None:
    mod = cls.__module__
    if kind in CORE_TYPES:
        return None if mod.startswith("dustbuster.core.") else f"{kind}: in {mod}, not the core"
    if not mod.startswith("dustbuster.core.model.ruletypes."):
        return f"{kind}: in {mod}, not a module of core/model/ruletypes/"
    return None if (ROOT / "core" / "model" / "ruletypes" / (mod.rsplit(".", 1)[1] + ".py")).exists() else f"{kind}: no file"


def _twin(kind: str, cls: type) -> str | None:
    if kind not in dustcanon._TYPES:
        return f"{kind}: no twin in dustcanon._TYPES"
    ranks = [REGISTRY[k].rank for k in dustcanon._TYPES if k in REGISTRY]
    return None if ranks == sorted(ranks) else f"dustcanon._TYPES is not in canonization order: {list(dustcanon._TYPES)}"


def _doc(kind: str, cls: type) -> str | None:
    text = (ROOT / "docs" / "rules.md").read_text(encoding="utf-8")
    return None if f'{{"type": "{kind}"' in text else f"{kind}: docs/rules.md shows no JSON form"


def _schema(kind: str, cls: type) -> str | None:
    schema = json.loads((ROOT / "docs" / "ruleset.schema.json").read_text(encoding="utf-8"))
    kinds = [e.get("properties", {}).get("type", {}).get("const") for e in schema["properties"]["rules"]["items"]["oneOf"]]
    return None if kind in kinds else f"{kind}: no entry in docs/ruleset.schema.json"


#: each file of the recipe → the check that a registered type has its place there
PLACES = {"core/model/ruletypes/<name>.py": _module, "dustcanon.py": _twin, "docs/rules.md": _doc,
          "docs/ruleset.schema.json": _schema}


def test_the_recipe_names_exactly_the_places_the_registry_needs():
    assert recipe_files() == list(PLACES)


@pytest.mark.parametrize("kind", sorted(REGISTRY))
def test_every_registered_type_has_its_place_in_every_file_of_the_recipe(kind):
    cls = REGISTRY[kind]
    assert issubclass(cls, RuleType)
    problems = [why for check in PLACES.values() if (why := check(kind, cls))]
    assert not problems, problems


def test_every_dustcanon_type_is_registered():
    assert set(dustcanon._TYPES) == set(REGISTRY)


@pytest.mark.parametrize("kind", sorted(set(REGISTRY) - CORE_TYPES))
def test_a_type_beyond_the_core_gives_samples_for_its_twin_test(kind):
    """tests/test_dustcanon.py compares the core and the twin on these (the core's five it generates)."""
    samples = REGISTRY[kind].samples()
    assert samples and all(r.type == kind for r in samples)
