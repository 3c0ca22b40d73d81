"""URLs sent to the frontier topic, and the workers' answers read back from the canonical topic
(what ``dustbuster frontier`` does; docs/canonizer.md).

The URLs go in JSON batches (``{"urls": [...]}``) keyed by site, with an idempotent producer
(acks=all).  To wait for the answers, the end of every canonical-topic partition is noted
*before* the first URL is sent, so that each answer to these URLs is read, and none older.
"""

from __future__ import annotations

import asyncio
import json
import logging
from typing import Callable

from aiokafka import AIOKafkaConsumer, AIOKafkaProducer, TopicPartition

from dustbuster.core.errors import DustError

from .admin import ensure_topics
from .rulesview import topic_partitions
from .settings import Settings

log = logging.getLogger(__name__)


async def send_frontier(settings: Settings, site: str, urls: list[str], batch: int = 500, wait: bool = False,
                        timeout: float = 120.0, on_answer: Callable[[dict], None] | None = None) -> list[dict]:
    """Sends ``urls`` of ``site`` to the frontier topic, ``batch`` a message.  With ``wait``, reads
    the canonical topic until every URL has its answer (each passed to ``on_answer`` as it comes)
    and returns them; fewer within ``timeout`` seconds is a DustError."""
    await ensure_topics(settings)  # our partitions, leaders elected: no auto-creation noise
    consumer = await _answer_consumer(settings) if wait else None
    try:
        await _send_batches(settings, site, urls, batch)
        if consumer is None:
            return []
        answers = await _collect_answers(consumer, site, urls, timeout, on_answer)
    finally:
        if consumer is not None:
            await consumer.stop()
    if len(answers) < len(urls):
        raise DustError(f"{len(answers)} of {len(urls)} answers within {timeout:.0f}s: is a worker running?")
    return answers


async def _answer_consumer(s: Settings) -> AIOKafkaConsumer:
    """A consumer of every canonical-topic partition, at its current end."""
    c = AIOKafkaConsumer(bootstrap_servers=s.kafka_bootstrap, group_id=None, enable_auto_commit=False)
    await c.start()
    try:
        tps = [TopicPartition(s.canonical_topic, p) for p in await topic_partitions(s.kafka_bootstrap, s.canonical_topic, 10)]
        if not tps:
            raise DustError(f"no topic {s.canonical_topic}: is a worker running?")
        c.assign(tps)
        for tp, off in (await c.end_offsets(tps)).items():
            c.seek(tp, off)
    except BaseException:
        await c.stop()
        raise
    return c


async def _send_batches(s: Settings, site: str, urls: list[str], batch: int) -> None:
    p = AIOKafkaProducer(bootstrap_servers=s.kafka_bootstrap, acks="all", enable_idempotence=True)
    await p.start()
    try:
        for i in range(0, len(urls), batch):
            await p.send_and_wait(s.frontier_topic, json.dumps({"urls": urls[i:i + batch]}).encode(), key=site.encode())
    finally:
        await p.stop()
    log.debug("sent %s URLs of %s to %s", len(urls), site, s.frontier_topic)


async def _collect_answers(c: AIOKafkaConsumer, site: str, urls: list[str], timeout: float,
                           on_answer: Callable[[dict], None] | None) -> list[dict]:
    """The answers to ``urls`` of ``site`` (keyed by the site, or naming it) within ``timeout``."""
    answers: list[dict] = []
    want = set(urls)
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while len(answers) < len(urls) and loop.time() < deadline:
        for msgs in (await c.getmany(timeout_ms=500)).values():
            for m in msgs:
                try:
                    d = json.loads(m.value)
                except (TypeError, ValueError):
                    continue
                if d.get("url") in want and (m.key or b"").decode("utf-8", "replace") in (site, d.get("site")):
                    answers.append(d)
                    if on_answer is not None:
                        on_answer(d)
    return answers
