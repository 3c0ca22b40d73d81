"""Issue 24: one rule interface and registry, one ``rules`` list — and every reader still accepts
what the version before wrote (tests/data/v1, written by the three-list code; see its README)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import dustcanon
from dustbuster.agents.validator import candidate_rules
from dustbuster.core.errors import RuleError
from dustbuster.core.model.rules import SCHEMA_MINE, document_rules_json, rule_from_json, rules_from_document
from dustbuster.core.model.ruletype import REGISTRY, RuleType, register
from dustbuster.stream.records import CandidateSet, candidates_from_json, decode_candidates, encode

V1 = Path(__file__).parent / "data" / "v1"
EXPECTED = json.loads((V1 / "expected-rules.json").read_text(encoding="utf-8"))


def _doc(name: str) -> dict:
    return json.loads((V1 / f"{name}.json").read_text(encoding="utf-8"))


@pytest.mark.parametrize("name", ["mine-secrepo", "mine-mediawiki", "ruleset-mediawiki"])
def test_v1_documents_read_as_before(name):
    assert [r.to_json() for r in rules_from_document(_doc(name))] == EXPECTED[name]


@pytest.mark.parametrize("name", ["mine-secrepo", "mine-mediawiki"])
def test_a_v1_mine_document_and_its_v2_form_give_the_same_rules(name):
    old = _doc(name)
    new = {k: v for k, v in old.items() if k not in ("param_rules", "general_rules")}
    new |= {"schema": SCHEMA_MINE, "rules": document_rules_json(old)}
    assert [r.to_json() for r in rules_from_document(new)] == EXPECTED[name]


def test_dustcanon_orders_a_v2_mine_document_by_type_as_a_v1_one():
    from dustbuster.core.model.rules import ParamRule, SubstringRule
    from dustbuster.core.model.scopedrules import CaseRule

    sub, par, case = SubstringRule.from_parts("/index.html", "/", anchor_end=True), ParamRule("sid", "remove"), CaseRule("/wiki")
    old = {"rules": [sub.to_json()], "param_rules": [par.to_json()], "general_rules": [case.to_json()]}
    new = {"schema": SCHEMA_MINE, "rules": document_rules_json(old)[::-1]}
    for doc in (old, new):
        assert [r.kind for r in dustcanon.RuleSet(doc, unvalidated=True).rules] == ["parameter", "case", "substring"]
    assert dustcanon.RuleSet(new, unvalidated=True).canonize("http://s.test/wiki/A/index.html?sid=1") == "http://s.test/wiki/a/"


def test_a_v1_candidates_record_decodes_to_one_list_with_the_same_rules():
    cand = decode_candidates((V1 / "candidates-mediawiki.record.json").read_bytes())
    pairs, others = candidate_rules(cand.site, cand)
    want = EXPECTED["candidates-mediawiki.validator"]
    assert [[p.alpha, p.beta, p.support, p.support_high] for p in pairs] == want["pairs"]
    assert [r.to_json() for r in others] == want["others"]
    assert cand.test_urls == ["http://wiki.quality.test/wiki/Main_Page"]
    again = decode_candidates(encode(cand))  # what the worker writes now: one list, the same rules
    assert again.rules == cand.rules and not hasattr(again, "param_rules")
    stored = json.loads((V1 / "candidates-mediawiki.record.json").read_text(encoding="utf-8"))
    assert candidates_from_json(stored).rules == cand.rules  # a set the validator stored before


def test_a_v1_ruleset_record_is_admitted_as_before():
    rec = json.loads((V1 / "ruleset-mediawiki.record.json").read_text(encoding="utf-8"))
    assert [r.to_json() for r in rules_from_document(rec)] == EXPECTED["ruleset-mediawiki"]
    assert dustcanon.RuleSet(rec).canonize("http://wiki.quality.test/wiki/Main_Page?utm_source=x") == \
        "http://wiki.quality.test/wiki/Main_Page"


def test_mine_writes_one_rules_list():
    from dustbuster.core.mining.mine import mine
    from dustbuster.core.urls.urllist import URLList

    ul = URLList()
    for i in range(40):
        for u in (f"http://s.test/story?id={i}", f"http://s.test/story?id={i}&sid={i * 7}", f"http://www.s.test/story?id={i}"):
            ul.add(u, 200, 1000 + i)
    doc = mine(ul).to_json()
    assert doc["schema"] == SCHEMA_MINE and "param_rules" not in doc and "general_rules" not in doc
    assert {r["type"] for r in doc["rules"]} <= set(REGISTRY)
    assert [r.text for r in rules_from_document(doc)] == [r.text for r in mine(ul).likely_rules()]


def test_every_registered_type_implements_the_interface():
    for kind, cls in REGISTRY.items():
        assert cls.type == kind and issubclass(cls, RuleType)
        for name in ("apply_internal", "to_json", "from_json"):
            assert getattr(cls, name) is not getattr(RuleType, name), f"{kind} lacks {name}"
        assert isinstance(cls.rank, (int, float))


def test_a_type_is_registered_once_and_unknown_types_are_refused():
    with pytest.raises(RuleError):
        register(type("Again", (RuleType,), {"type": "substring"}))
    with pytest.raises(RuleError, match="unknown rule type"):
        rule_from_json({"type": "no-such-type"})
    with pytest.raises(RuleError):
        rule_from_json({"type": ["not", "hashable"]})


def test_the_records_carry_one_rules_list():
    assert "param_rules" not in CandidateSet._options.fields and "general_rules" not in CandidateSet._options.fields


def test_a_types_miner_is_an_optional_hook_that_mine_calls(monkeypatch):
    """A registered type with a ``miner`` gets its candidates into mine's one list (language
    "extended"), through the registry only; the types without one (every core type) add nothing."""
    from dataclasses import dataclass

    from dustbuster.core.model import ruletype
    from dustbuster.core.mining.mine import mine
    from dustbuster.core.model.rules import ParamRule
    from dustbuster.core.urls.urllist import URLList

    calls = []

    @dataclass(frozen=True)
    class Mined(ParamRule):
        def miner(urllist, params, index):  # noqa: N805 - a staticmethod-like hook read from the class
            calls.append(len(urllist))
            return [ParamRule("hooked", "remove", evidence={"source": "hook"})]

    monkeypatch.setitem(ruletype.REGISTRY, "hooked-test-type", Mined)
    ul = URLList()
    for i in range(12):
        ul.add(f"http://s.test/a?id={i}", 200, 100 + i)
    doc = mine(ul).to_json()
    assert calls == [len(ul)]
    assert any(r.get("name") == "hooked" for r in doc["rules"])
    assert all(cls.miner is None for kind, cls in REGISTRY.items() if kind != "hooked-test-type")


def test_rule_dicts_reads_both_shapes_for_the_views():
    """The dashboard counts and shows every candidate of a one-list record and of a three-list one."""
    from dustbuster.core.model.rules import rule_dicts
    one = {"rules": [{"display": "a"}, {"display": "b"}, "junk"]}
    three = {"rules": [{"display": "a"}], "param_rules": [{"display": "p"}], "general_rules": [{"display": "g"}]}
    assert [r["display"] for r in rule_dicts(one)] == ["a", "b"]
    assert sorted(r["display"] for r in rule_dicts(three)) == ["a", "g", "p"]
    assert rule_dicts({"rules": "not a list"}) == []
