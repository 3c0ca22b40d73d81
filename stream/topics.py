"""The topic table: every Kafka topic of the product, declared once.

One row per topic: its name (``<DUST_TOPIC_PREFIX>-<suffix>``), its partitions (DUST_PARTITIONS, or
one), its cleanup policy and retention, the record it carries (a class of stream/records.py) and the
function a reader decodes it with, and how the Faust app declares it.  From it are derived
:class:`~dustbuster.stream.settings.Settings`' ``<key>_topic`` names (one property per row, spelled
out in the class so that a type checker sees it, returning the row's name), the topics
:func:`~dustbuster.stream.admin.ensure_topics` creates, and the Faust topics of
:func:`~dustbuster.stream.app.topics`.  So a new topic is a row here, its ``<key>_topic`` property
in stream/settings.py (tests/test_topics.py checks there is one per row), (when an agent reads or
writes it) a field of ``stream.app.Topics``, plus its row in docs/topics.md.

No Faust or Kafka import: the record classes are named, and resolved by the Faust app only
(``feed``, ``frontier`` and the settings read this table too).
"""

from __future__ import annotations

from dataclasses import dataclass

#: how the Faust app declares a topic's values: bytes decoded by hand (a size cap, strict JSON),
#: Faust's default JSON serializer, or ``value_type`` = the row's record class
FAUST_RAW, FAUST_JSON, FAUST_RECORD = "raw", "json", "record"


@dataclass(frozen=True)
class TopicSpec:
    """One topic of the table."""

    key: str  #: short name: ``Settings.<key>_topic``, and the field of ``stream.app.Topics``
    suffix: str  #: the name is ``<prefix>-<suffix>``
    per_partition: bool  #: DUST_PARTITIONS partitions when true, else one
    compacted: bool  #: cleanup.policy=compact (the latest value per key is kept) instead of delete
    record: str  #: what a value is: a record class of stream/records.py, or where the format is told
    decoder: str  #: how a reader decodes a value (a function of stream/records.py, or a module)
    faust: str | None  #: FAUST_RAW, FAUST_JSON or FAUST_RECORD; None: no agent reads or writes it
    doc: str  #: one line: what the topic holds
    retention_ms: int | None = None  #: retention.ms; None: the broker's default (7 days)

    def name(self, prefix: str) -> str:
        return f"{prefix}-{self.suffix}"

    def partitions(self, partitions: int) -> int:
        """The partitions of the topic, given DUST_PARTITIONS."""
        return partitions if self.per_partition else 1

    def configs(self) -> dict[str, str]:
        """The topic configs ``ensure_topics`` creates it with (none: the broker's defaults)."""
        out = {"cleanup.policy": "compact"} if self.compacted else {}
        if self.retention_ms is not None:
            out["retention.ms"] = str(self.retention_ms)
        return out


#: every topic, in the order they are created
TOPICS: tuple[TopicSpec, ...] = (
    TopicSpec("raw", "raw", True, False, "RawBatch", "decode_raw", FAUST_RAW,
              "access-log lines of one site (key = site): the ingest agent's input"),
    TopicSpec("candidates", "candidates", True, False, "CandidateSet", "decode_candidates", FAUST_RAW,
              "likely rules of one site at one window, with its newest test URLs (key = site)"),
    TopicSpec("rules", "rules", True, True, "RuleSet", "stream/rulesview.py (bounded, strict)", FAUST_JSON,
              "the validated rules of one site (key = site; the latest set per site is kept)"),
    TopicSpec("rejects", "rejects", False, False, "Reject", "dead_letter (written only)", FAUST_JSON,
              "dead letters: junk messages and bad lines, with the reason"),
    TopicSpec("changelog", "urls-changelog", True, True, "URL records, counters, applied offset",
              "stream/changelog.py Changelog", None,
              "the URL records of every site, per raw partition: the source of truth of the miner's state"),
    TopicSpec("frontier", "frontier", True, False, "URL lists", "decode_frontier", FAUST_RAW,
              "URLs a crawler wants canonicalized (key = site)"),
    TopicSpec("canonical", "canonical", True, False, "CanonicalURL", "CanonicalURL (Faust)", FAUST_RECORD,
              "the frontier's URLs with their canonical URL and seen flag (key = site)"),
    TopicSpec("seen_changelog", "seen-changelog", True, True, "seen signatures, applied offset",
              "stream/changelog.py SeenChangelog", None,
              "the seen signatures of every frontier partition (state/seen.py)"),
)


def topic_spec(key: str) -> TopicSpec:
    """The row of ``key``; KeyError naming the known keys otherwise."""
    for spec in TOPICS:
        if spec.key == key:
            return spec
    raise KeyError(f"no topic {key!r} in stream/topics.py (known: {', '.join(s.key for s in TOPICS)})")
