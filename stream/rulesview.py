"""Every site's current rule set, followed live from the compacted rules topic (issue 5).

This is our "global table": every worker (and ``dustbuster rules`` / ``canonize --from-topic``)
reads *all* partitions of the rules topic from the start with a group-less consumer, so each
instance holds every site's rule set whatever partitions of other topics it owns, nothing is lost
on a rebalance (there is no partition to lose), and a new version is applied the moment it is
read.  ``ready`` is set once the consumer has read up to the end offsets it found at start, so a
worker does not canonicalize a frontier with rules it has not read yet.  A faust GlobalTable would
keep a second changelog copy of the same compacted topic; reading the topic itself is simpler.

Values are RuleSet JSON (docs/topics.md); a tombstone (null) removes the site.  A value that is
not a valid rule set is counted, logged and skipped: the site keeps its previous set.
"""

from __future__ import annotations

import asyncio
import json
import logging
from typing import Callable

from aiokafka import AIOKafkaConsumer, TopicPartition
from aiokafka.errors import KafkaError

from dust.errors import DustError, StreamError

log = logging.getLogger(__name__)

Update = Callable[[str, "dict | None"], None]


class RulesFollower:
    def __init__(self, bootstrap: str, topic: str, on_update: Update, poll_ms: int = 250) -> None:
        self.bootstrap = bootstrap
        self.topic = topic
        self.on_update = on_update
        self.poll_ms = poll_ms
        self.ready = asyncio.Event()
        self.read = 0
        self.bad = 0
        self._consumer: AIOKafkaConsumer | None = None
        self._ends: dict[TopicPartition, int] = {}

    async def start(self, wait_s: float = 30.0) -> None:
        c = AIOKafkaConsumer(bootstrap_servers=self.bootstrap, group_id=None, enable_auto_commit=False,
                             auto_offset_reset="earliest")
        try:
            await c.start()
            parts = await topic_partitions(self.bootstrap, self.topic, wait_s)
            if not parts:
                raise StreamError(f"topic {self.topic} does not exist at {self.bootstrap}")
            tps = [TopicPartition(self.topic, p) for p in sorted(parts)]
            c.assign(tps)
            await c.seek_to_beginning(*tps)
            self._ends = await c.end_offsets(tps)
        except KafkaError as exc:
            await c.stop()
            raise StreamError(f"cannot read {self.topic} at {self.bootstrap}: {exc}") from exc
        except BaseException:
            await c.stop()
            raise
        self._consumer = c
        await self._check_ready()

    async def _check_ready(self) -> None:
        if self.ready.is_set() or self._consumer is None:
            return
        for tp, end in self._ends.items():
            if await self._consumer.position(tp) < end:
                return
        self.ready.set()
        log.info("rules topic %s read to its end: %s records", self.topic, self.read)

    async def poll(self) -> int:
        """Read what is there (up to poll_ms); apply it; returns the number of records."""
        assert self._consumer is not None, "start() first"
        got = await self._consumer.getmany(timeout_ms=self.poll_ms)
        n = 0
        for msgs in got.values():
            for m in msgs:
                n += 1
                self.apply(m.key, m.value, f"{m.topic}/{m.partition}@{m.offset}")
        await self._check_ready()
        return n

    def apply(self, key: bytes | None, value: bytes | None, where: str = "") -> None:
        self.read += 1
        site = (key or b"").decode("utf-8", "replace").strip().lower()
        try:
            if not site:
                raise DustError("a rules record without a site key")
            doc = None if value is None else json.loads(value)
            if doc is not None and not isinstance(doc, dict):
                raise DustError("the value is not a JSON object")
            self.on_update(site, doc)
        except (ValueError, DustError) as exc:
            self.bad += 1
            log.warning("skipping a bad rules record %s (site %r): %s", where, site, exc)

    async def run(self) -> None:
        """Follow the topic until cancelled; a broker hiccup is retried."""
        while True:
            try:
                await self.poll()
            except KafkaError as exc:
                log.warning("rules topic %s: %s; retrying", self.topic, exc)
                await asyncio.sleep(1.0)

    async def stop(self) -> None:
        if self._consumer is not None:
            await self._consumer.stop()
            self._consumer = None


async def topic_partitions(bootstrap: str, topic: str, wait_s: float = 0.0) -> list[int]:
    """The partition ids of ``topic`` (waiting up to ``wait_s`` for it to appear); [] if none."""
    from aiokafka.admin import AIOKafkaAdminClient

    admin = AIOKafkaAdminClient(bootstrap_servers=bootstrap)
    try:
        await admin.start()
    except KafkaError as exc:
        await admin.close()
        raise StreamError(f"cannot reach Kafka at {bootstrap}: {exc}") from exc
    try:
        loop = asyncio.get_running_loop()
        deadline = loop.time() + wait_s
        while True:
            try:
                desc = await admin.describe_topics([topic])
            except KafkaError:
                desc = []
            parts = [p["partition"] for d in desc if d.get("topic") == topic and not d.get("error_code")
                     for p in d.get("partitions", [])]
            if parts or loop.time() >= deadline:
                return sorted(parts)
            await asyncio.sleep(0.5)
    finally:
        await admin.close()
