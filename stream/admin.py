"""Creating the topics before anything produces to them (no Faust import: ``feed`` and
``frontier`` use it too).

Producing to a topic that does not exist makes the broker auto-create it with its default
partitions (not ours), and the first sends log ``Topic ... not found in cluster metadata`` and
``NotLeaderForPartitionError`` while the new partitions elect leaders.  So every command that
produces first creates all topics with the configured partitions and configs, then waits until
each partition has a leader.
"""

from __future__ import annotations

import asyncio
import logging

from aiokafka.admin import AIOKafkaAdminClient, NewTopic
from aiokafka.errors import KafkaError, TopicAlreadyExistsError

from . import topics
from .settings import Settings

log = logging.getLogger(__name__)


def wanted_topics(settings: Settings) -> list[NewTopic]:
    """Every topic of the topic table (stream/topics.py) with its partitions and configs."""
    return [_new_topic(spec, settings) for spec in topics.TOPICS]


def _new_topic(spec: topics.TopicSpec, settings: Settings) -> NewTopic:
    return NewTopic(spec.name(settings.topic_prefix), spec.partitions(settings.partitions), 1,
                    topic_configs=spec.configs())


async def ensure_topics(settings: Settings, wait_s: float = 30.0) -> None:
    """Create the topics of the topic table with their partitions and configs (the rules topic and
    the changelogs are compacted), then wait (up to ``wait_s``) until every partition has a leader."""
    admin = AIOKafkaAdminClient(bootstrap_servers=settings.kafka_bootstrap)
    await admin.start()
    try:
        want = wanted_topics(settings)
        existing = set(await admin.list_topics())
        new = [t for t in want if t.name not in existing]
        if new:
            try:
                await admin.create_topics(new)
                log.info("created topics %s", [t.name for t in new])
            except TopicAlreadyExistsError:
                pass
            await _wait_for_leaders(admin, [t.name for t in new], wait_s)
    finally:
        await admin.close()


async def _wait_for_leaders(admin: AIOKafkaAdminClient, names: list[str], wait_s: float) -> None:
    loop = asyncio.get_running_loop()
    deadline = loop.time() + wait_s
    while True:
        try:
            desc = await admin.describe_topics(names)
        except KafkaError:
            desc = []
        ready = {d.get("topic") for d in desc if not d.get("error_code") and d.get("partitions")
                 and all(p.get("leader", -1) >= 0 for p in d["partitions"])}
        if ready >= set(names) or loop.time() >= deadline:
            return
        await asyncio.sleep(0.2)
