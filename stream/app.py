"""The Faust app factory and the topics.  Only the entry point and agents/ import this module."""

from __future__ import annotations

import logging
from dataclasses import dataclass

import faust

from .records import CanonicalURL
from .settings import Settings

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
    return Topics(
        raw=app.topic(settings.raw_topic, key_type=bytes, value_type=bytes, value_serializer="raw",
                      key_serializer="raw", partitions=settings.partitions),
        # bytes, decoded by the validator with records.decode_candidates (a size cap, strict JSON)
        candidates=app.topic(settings.candidates_topic, key_type=bytes, value_type=bytes, value_serializer="raw",
                             key_serializer="raw", partitions=settings.partitions),
        rules=app.topic(settings.rules_topic, key_serializer="raw", partitions=settings.partitions),
        rejects=app.topic(settings.rejects_topic, key_serializer="raw", partitions=1),
        frontier=app.topic(settings.frontier_topic, key_type=bytes, value_type=bytes, value_serializer="raw",
                           key_serializer="raw", partitions=settings.partitions),
        canonical=app.topic(settings.canonical_topic, key_serializer="raw", partitions=settings.partitions,
                            value_type=CanonicalURL),
    )
