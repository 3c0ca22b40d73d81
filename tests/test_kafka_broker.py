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


def test_broker_options_default_small_and_overridable(monkeypatch):
    """A laptop/CI broker is small by default; a many-core benchmark replaces the JVM options and
    thread counts through DUST_BROKER_JVM / DUST_BROKER_THREADS (and the first assignment's delay through
    DUST_BROKER_REBALANCE_DELAY_MS), and a bad count is a clear error."""
    import pytest

    from dustbuster import broker
    from dustbuster.core.errors import StreamError

    monkeypatch.delenv("DUST_BROKER_JVM", raising=False)
    monkeypatch.delenv("DUST_BROKER_THREADS", raising=False)
    assert broker.jvm_options() == broker.JVM and broker.broker_threads() == 2
    monkeypatch.setenv("DUST_BROKER_JVM", "-Xmx4g -XX:+UseParallelGC")
    monkeypatch.setenv("DUST_BROKER_THREADS", "8")
    assert broker.jvm_options() == ["-Xmx4g", "-XX:+UseParallelGC"] and broker.broker_threads() == 8
    for bad in ("eight", "0", "65"):
        monkeypatch.setenv("DUST_BROKER_THREADS", bad)
        with pytest.raises(StreamError, match="DUST_BROKER_THREADS"):
            broker.broker_threads()
    monkeypatch.delenv("DUST_BROKER_REBALANCE_DELAY_MS", raising=False)
    assert broker.rebalance_delay_ms() == 0
    monkeypatch.setenv("DUST_BROKER_REBALANCE_DELAY_MS", "5000")
    assert broker.rebalance_delay_ms() == 5000
    for bad in ("soon", "-1", "60001"):
        monkeypatch.setenv("DUST_BROKER_REBALANCE_DELAY_MS", bad)
        with pytest.raises(StreamError, match="DUST_BROKER_REBALANCE_DELAY_MS"):
            broker.rebalance_delay_ms()
