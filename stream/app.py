"""The Faust app factory and the topics.  Only the entry point and agents/ import this module.

The Faust topics are the rows of the topic table (stream/topics.py) that an agent reads or writes
(``faust`` set): :class:`Topics` has one field per such row, named by its key."""

from __future__ import annotations

import logging
from dataclasses import dataclass

import faust

from . import records
from .settings import Settings
from .topics import FAUST_RAW, FAUST_RECORD, TOPICS, TopicSpec

log = logging.getLogger(__name__)


@dataclass
class Topics:
    raw: faust.TopicT
    candidates: faust.TopicT
    rules: faust.TopicT
    rejects: faust.TopicT
    frontier: faust.TopicT
    canonical: faust.TopicT


def create_app(settings: Settings) -> faust.App:
    (settings.data_dir / "faust").mkdir(parents=True, exist_ok=True)
    return faust.App(
        settings.app_id,
        broker=f"kafka://{settings.kafka_bootstrap}",
        datadir=str(settings.data_dir / "faust"),
        store="memory://",
        web_enabled=settings.web_port > 0,
        web_port=settings.web_port or 6066,
        topic_partitions=settings.partitions,
        producer_acks=-1,
        producer_max_request_size=settings.max_message_bytes,  # what we produce fits it (stream/fit.py)
        consumer_auto_offset_reset="earliest",
        broker_commit_every=50,
        broker_commit_interval=1.0,
        broker_session_timeout=settings.session_timeout_s,
        broker_heartbeat_interval=max(1.0, settings.session_timeout_s / 10),
    )


def topics(app: faust.App, settings: Settings) -> Topics:
    """The Faust topics of the table's rows that agents use; a row whose key is no field of
    :class:`Topics` is a programming error (tests/test_topics.py checks they match)."""
    return Topics(**{spec.key: faust_topic(app, settings, spec) for spec in TOPICS if spec.faust})


def faust_topic(app: faust.App, settings: Settings, spec: TopicSpec) -> faust.TopicT:
    """One row as a Faust topic: keys are raw bytes (the site); values as ``spec.faust`` says
    (raw bytes that the readers decode with stream/records.py's bounded, strict decoders; Faust's
    JSON; or the row's record class)."""
    kw: dict = {"key_serializer": "raw", "partitions": spec.partitions(settings.partitions)}
    if spec.faust == FAUST_RAW:
        kw.update(key_type=bytes, value_type=bytes, value_serializer="raw")
    elif spec.faust == FAUST_RECORD:
        kw["value_type"] = getattr(records, spec.record)
    return app.topic(spec.name(settings.topic_prefix), **kw)
