"""The topic table (stream/topics.py, issue 24): every topic is declared there once, and the
settings' names, the topics admin creates and the Faust app's topics all derive from it.  No broker:
admin's plan (``wanted_topics``) and the Faust topics are data."""

from __future__ import annotations

import ast
import dataclasses
from pathlib import Path

import pytest

from dustbuster.stream import admin, records, topics
from dustbuster.stream.settings import Settings

ROOT = Path(__file__).resolve().parents[1]

#: the topics as admin created them before the table (issue 24): name suffix, partitions, configs
BEFORE_TABLE = [
    ("raw", 6, {}), ("candidates", 6, {}), ("rules", 6, {"cleanup.policy": "compact"}),
    ("rejects", 1, {}), ("urls-changelog", 6, {"cleanup.policy": "compact"}), ("frontier", 6, {}),
    ("canonical", 6, {}), ("seen-changelog", 6, {"cleanup.policy": "compact"}),
]


def test_admin_creates_the_same_topics_as_before_the_table():
    s = Settings(topic_prefix="t", partitions=6)
    got = [(t.name, t.num_partitions, t.replication_factor, t.topic_configs) for t in admin.wanted_topics(s)]
    assert got == [(f"t-{suffix}", n, 1, configs) for suffix, n, configs in BEFORE_TABLE]


def test_every_settings_topic_name_is_a_row():
    s = Settings(topic_prefix="p")
    names = {a: getattr(s, a) for a in dir(Settings) if a.endswith("_topic")}
    assert names == {f"{spec.key}_topic": spec.name("p") for spec in topics.TOPICS}
    assert s.topic("seen_changelog") == "p-seen-changelog" == s.seen_changelog_topic
    with pytest.raises(KeyError, match="known: raw"):
        s.topic("nope")


def test_settings_declares_one_topic_property_per_row():
    """``Settings.<key>_topic`` are properties written in the class body (a type checker sees them),
    exactly one per row of the table, each the name of its row's topic."""
    declared = {name: value for name, value in vars(Settings).items() if name.endswith("_topic")}
    assert sorted(declared) == sorted(f"{spec.key}_topic" for spec in topics.TOPICS)
    assert all(isinstance(value, property) for value in declared.values())
    s = Settings(topic_prefix="x")
    for spec in topics.TOPICS:
        assert declared[f"{spec.key}_topic"].fget(s) == spec.name("x") == s.topic(spec.key)


def test_admin_creates_every_row_and_a_new_row_too(monkeypatch):
    s = Settings(topic_prefix="q", partitions=3)
    assert [t.name for t in admin.wanted_topics(s)] == [spec.name("q") for spec in topics.TOPICS]
    extra = topics.TopicSpec("audit", "audit", False, True, "Reject", "dead_letter", None, "an added row",
                             retention_ms=3_600_000)
    monkeypatch.setattr(topics, "TOPICS", (*topics.TOPICS, extra))
    made = {t.name: t for t in admin.wanted_topics(s)}
    assert made["q-audit"].num_partitions == 1
    assert made["q-audit"].topic_configs == {"cleanup.policy": "compact", "retention.ms": "3600000"}


def test_the_app_topics_are_the_rows_agents_use(tmp_path):
    from dustbuster.stream.app import Topics, create_app, topics as app_topics

    s = Settings(topic_prefix="f", partitions=5, data_dir=tmp_path)
    used = [spec for spec in topics.TOPICS if spec.faust]
    assert [f.name for f in dataclasses.fields(Topics)] == [spec.key for spec in used]
    got = app_topics(create_app(s), s)
    for spec in used:
        t = getattr(got, spec.key)
        assert t.get_topic_name() == spec.name("f")
        assert t.partitions == spec.partitions(5)
    assert got.canonical.value_type is records.CanonicalURL
    assert got.raw.value_type is bytes and got.frontier.value_type is bytes and got.candidates.value_type is bytes


def test_every_record_and_decoder_named_is_in_records():
    for spec in topics.TOPICS:
        for name in (spec.record, spec.decoder.split()[0]):
            if name.isidentifier():
                assert hasattr(records, name), f"{spec.key}: {name} is not in stream/records.py"


def test_no_topic_name_is_made_outside_the_table():
    """No module but the table joins the prefix to a suffix (a topic declared elsewhere)."""
    for folder in ("stream", "state", "agents", "dustbuster"):
        for path in (ROOT / folder).rglob("*.py"):
            if path.name == "topics.py" and path.parent.name == "stream":
                continue
            for node in ast.walk(ast.parse(path.read_text())):
                if isinstance(node, ast.JoinedStr):
                    text = ast.unparse(node)
                    assert "topic_prefix}-" not in text, f"{path.relative_to(ROOT)}: {text}"
