"""The real broker the integration tests use: it starts, takes writes and serves a consumer group."""

from __future__ import annotations

import asyncio
import uuid

from aiokafka import AIOKafkaConsumer, AIOKafkaProducer


def test_round_trip(kafka):
    topic = f"smoke-{uuid.uuid4().hex[:8]}"

    async def go():
        p = AIOKafkaProducer(bootstrap_servers=kafka)
        await p.start()
        try:
            await p.send_and_wait(topic, b"line", key=b"site")
        finally:
            await p.stop()
        c = AIOKafkaConsumer(topic, bootstrap_servers=kafka, group_id=topic, auto_offset_reset="earliest")
        await c.start()
        try:
            msg = await asyncio.wait_for(c.getone(), 30)
        finally:
            await c.stop()
        return msg

    msg = asyncio.run(go())
    assert (msg.key, msg.value) == (b"site", b"line")
