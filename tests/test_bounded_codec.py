"""Issue 27, finding 6, on the real broker: one compressed rules record of 20.6 MB unpacked (5,000
rules of 4,000 characters, gzip) stalled every worker's event loop for 7.6 s and took its memory to
1 GB; a refused 50 MB record still cost 0.7 s.  Now a batch is unpacked only up to a cap
(stream/boundedcodec.py) and a record over DUST_MAX_RECORD_BYTES is never parsed."""

from __future__ import annotations

import asyncio
import gzip
import json
import time
import tracemalloc

import pytest
from aiokafka import AIOKafkaProducer

from dustbuster.core.canon.rulebook import RuleBook
from dustbuster.core.model.rules import SubstringRule
from dustbuster.stream.boundedcodec import BatchTooLarge, gunzip_bounded
from dustbuster.stream.rulesview import TopicFollower

SITE = "big.test"


def ruleset(version: int, rules: list[dict]) -> bytes:
    return json.dumps({"site": SITE, "version": version, "created": time.time(), "schema": "dustbuster/ruleset@1",
                       "rules": rules}).encode()


def huge_rules(n: int = 5000, chars: int = 4000) -> list[dict]:
    return [{"type": "substring", "alpha": f"/{i}" + "a" * chars, "beta": "/", "status": "valid"} for i in range(n)]


GOOD = [SubstringRule.from_parts("/story?id=", "/story_").to_json() | {"status": "valid"}]


async def produce(bootstrap: str, topic: str, values: list[bytes]) -> None:
    p = AIOKafkaProducer(bootstrap_servers=bootstrap, compression_type="gzip", max_request_size=64 << 20)
    await p.start()
    try:
        for v in values:
            await p.send_and_wait(topic, v, key=SITE.encode())
    finally:
        await p.stop()


async def follow(bootstrap: str, topic: str, book: RuleBook) -> tuple[TopicFollower, float, int]:
    """Read the topic to its end; the worst event-loop delay seen meanwhile and the peak memory."""
    f = TopicFollower(bootstrap, topic, book.update)
    worst = 0.0

    async def ticker() -> None:
        nonlocal worst
        loop = asyncio.get_running_loop()
        while True:
            t = loop.time()
            await asyncio.sleep(0.01)
            worst = max(worst, loop.time() - t - 0.01)

    tick = asyncio.create_task(ticker())
    tracemalloc.start()
    try:
        await f.start()
        await asyncio.wait_for(f.read_to_end(), 120)
        peak = tracemalloc.get_traced_memory()[1]
        await asyncio.sleep(0.05)  # the ticker's turn: it measures a block only once it runs again
    finally:
        tracemalloc.stop()
        tick.cancel()
        await f.stop()
    return f, worst, peak


def test_gunzip_bounded_stops_at_the_cap():
    bomb = gzip.compress(b"\0" * (50 << 20))
    assert len(bomb) < 100_000
    with pytest.raises(BatchTooLarge):
        gunzip_bounded(bomb, 1 << 20)
    two = gzip.compress(b"ab") + gzip.compress(b"cd")  # two members, as GzipFile reads them
    assert gunzip_bounded(two, 4) == b"abcd"
    with pytest.raises(BatchTooLarge):
        gunzip_bounded(two, 3)


def test_a_compressed_giant_rules_record_is_skipped_without_unpacking_it(kafka):
    topic = f"bomb-{time.monotonic_ns()}"
    big = ruleset(2, huge_rules())
    assert len(big) > 20_000_000
    asyncio.run(produce(kafka, topic, [ruleset(1, GOOD), big, b"{" + b" " * (50 << 20) + b"}", ruleset(3, GOOD)]))
    book = RuleBook()
    f, worst, peak = asyncio.run(follow(kafka, topic, book))
    assert book.sites[SITE].version == 3  # the good sets before and after are applied
    assert f.rejected == {"batch_too_large": 2}, f.rejected
    assert worst < 1.0, f"the event loop was blocked {worst:.2f}s"
    assert peak < 60 << 20, f"peak memory {peak >> 20} MB"
