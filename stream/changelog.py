"""The URL changelog: the source of truth of the streaming state, in Kafka (docs/state.md).

Partition N of the changelog describes the sites of input partition N: one record per URL
(key ``site \\0 url``, value the URL's record), one per site for its counters (``site \\0\\0count``)
and the input offset the partition has applied (``\\0applied``).  The topic is compacted, so it
holds the latest value of each key.  A worker writes a group of messages' records, and waits for the
broker's acknowledgement, *before* it commits the same group to its local RocksDB; so the
changelog is never behind the local state, and a worker that lacks a partition's state (or has a
stale copy) rebuilds it by reading the partition from the start.
"""

from __future__ import annotations

import asyncio
import logging
from dataclasses import dataclass, field
from typing import Awaitable, Callable

import orjson
from aiokafka import AIOKafkaConsumer, AIOKafkaProducer, TopicPartition

log = logging.getLogger(__name__)

APPLIED = b"\0applied"
#: records read from a changelog partition's end to find its last applied offset
TAIL_RECORDS = 2000
#: the longest pause between two tries of a changelog write (seconds)
RETRY_MAX_S = 30.0


async def write_until_acked(write: Callable[[], Awaitable[None]], what: str) -> None:
    """``write()`` (a changelog write that waits for the broker's acknowledgement), tried again
    with a growing pause (up to :data:`RETRY_MAX_S`) until the broker takes it: nothing may be
    committed to a local store before its changelog holds it (state/store.py).  Changelog records
    hold absolute values, so writing some twice is harmless.  ``what`` names the write in the log."""
    pause = 0.5
    while True:
        try:
            await write()
            return
        except Exception as exc:  # noqa: BLE001 - KafkaError or a broken connection: try again
            log.warning("%s failed: %s: %s; retrying in %.1fs", what, type(exc).__name__, exc, pause)
            await asyncio.sleep(pause)
            pause = min(RETRY_MAX_S, pause * 2)


@dataclass
class ChangelogImage:
    applied: int = -1
    sites: dict[str, dict[str, dict]] = field(default_factory=dict)
    counters: dict[str, dict] = field(default_factory=dict)
    records: int = 0


class Changelog:
    def __init__(self, bootstrap: str, topic: str) -> None:
        self.bootstrap = bootstrap
        self.topic = topic
        self.producer: AIOKafkaProducer | None = None

    async def start(self) -> None:
        if self.producer is None:
            self.producer = AIOKafkaProducer(bootstrap_servers=self.bootstrap, acks="all", enable_idempotence=True,
                                             linger_ms=2, max_batch_size=1024 * 1024)
            await self.producer.start()

    async def stop(self) -> None:
        if self.producer is not None:
            await self.producer.stop()
            self.producer = None

    async def write(self, partition: int, offset: int, records: list[tuple[bytes, bytes]]) -> None:
        """Write the changes of input messages up to ``offset`` (``records``: (site \\0 url, record)
        and (site \\0\\0count, counters) pairs) and wait until the broker has them all."""
        await self.send_all(partition, [*records, (APPLIED, str(offset).encode())])

    async def send_all(self, partition: int, records: list[tuple[bytes, bytes]]) -> None:
        """Send (key, value) records to one partition, in order, in as few batches as fit, and wait
        for the broker's acknowledgement of all (a record per ``send`` costs ~20 µs more)."""
        await self.start()
        p = self.producer
        assert p is not None
        futs = []
        batch = p.create_batch()
        for key, value in records:
            if batch.append(key=key, value=value, timestamp=None) is None:  # full: send it, start another
                futs.append(await p.send_batch(batch, self.topic, partition=partition))
                batch = p.create_batch()
                batch.append(key=key, value=value, timestamp=None)  # an empty batch takes any record
        futs.append(await p.send_batch(batch, self.topic, partition=partition))
        for f in futs:
            await f

    async def read(self, partition: int) -> ChangelogImage:
        """The latest value of every key of one partition."""
        img = ChangelogImage()

        def on(key: bytes, value: bytes | None) -> None:
            img.records += 1
            if key == APPLIED:
                assert value is not None  # written with every batch, never deleted
                img.applied = int(value)
                return
            site, _, rest = key.decode().partition("\0")
            if rest.startswith("\0"):
                assert value is not None  # a site's counters are never deleted (write: values only)
                img.counters[site] = orjson.loads(value)
            elif value is not None:
                img.sites.setdefault(site, {})[rest] = orjson.loads(value)

        await read_partition(self.bootstrap, self.topic, partition, on)
        return img

    async def last_applied(self, partition: int, tail: int = TAIL_RECORDS) -> int:
        """The input offset the partition's changelog says was applied last (-1 for an empty
        changelog), from its last ``tail`` records: every write ends with its ``\\0applied``
        record, so the newest one is among them unless a write was cut short by more than
        ``tail`` records; then the whole partition is read."""
        found: dict[str, int] = {}

        def on(key: bytes, value: bytes | None) -> None:
            if key == APPLIED and value is not None:
                found["applied"] = int(value)

        whole = await read_partition(self.bootstrap, self.topic, partition, on, tail=tail)
        if "applied" in found:
            return found["applied"]
        if whole:
            return -1
        return (await self.read(partition)).applied


async def read_partition(bootstrap: str, topic: str, partition: int, on_record, batch: int = 5000,
                         tail: int | None = None) -> int:
    """Call ``on_record(key, value)`` for every record of one partition, from the start to its end
    (with ``tail``: from ``tail`` offsets before its end).  True when it read from the start."""
    tp = TopicPartition(topic, partition)
    c = AIOKafkaConsumer(bootstrap_servers=bootstrap, enable_auto_commit=False, group_id=None)
    await c.start()
    try:
        c.assign([tp])
        await c.seek_to_beginning(tp)
        end = (await c.end_offsets([tp]))[tp]
        whole = tail is None or end - tail <= await c.position(tp)
        if not whole:
            assert tail is not None
            c.seek(tp, end - tail)
        while await c.position(tp) < end:
            got = await c.getmany(tp, timeout_ms=1000, max_records=batch)
            for m in got.get(tp, []):
                on_record(m.key or b"", m.value)
    finally:
        await c.stop()
    return whole


class SeenChangelog:
    """The seen-signature sets of the frontier partitions, in a compacted topic (partition N = frontier
    partition N): key = the 8-byte signature, value ``b"1"``; ``\\0applied`` = the frontier offset
    applied.  Written and acknowledged before the local commit, read back to rebuild a partition
    that another worker went on with (state/seen.py)."""

    def __init__(self, bootstrap: str, topic: str) -> None:
        self.inner = Changelog(bootstrap, topic)

    async def write(self, partition: int, sigs: list[bytes], offset: int) -> None:
        await self.inner.send_all(partition, [*((s, b"1") for s in sigs), (APPLIED, str(offset).encode())])

    async def read(self, partition: int) -> tuple[int, list[bytes]]:
        state = {"applied": -1}
        sigs: set[bytes] = set()

        def on(key: bytes, value: bytes | None) -> None:
            if key == APPLIED:
                assert value is not None  # written with every batch, never deleted
                state["applied"] = int(value)
            elif key and value is not None:
                sigs.add(key)

        await read_partition(self.inner.bootstrap, self.inner.topic, partition, on, batch=20000)
        return state["applied"], sorted(sigs)

    async def stop(self) -> None:
        await self.inner.stop()
