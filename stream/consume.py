"""Reading a topic's latest value per key (candidates, rules): a plain consumer from the start."""

from __future__ import annotations

import json
import logging

from aiokafka import AIOKafkaConsumer
from aiokafka.errors import KafkaError

from dust.errors import StreamError

log = logging.getLogger(__name__)


async def latest_by_key(bootstrap: str, topic: str, idle_ms: int = 1500) -> dict[str, dict]:
    """The newest JSON value of every key of ``topic`` (keys decoded as UTF-8); tombstones drop it."""
    c = AIOKafkaConsumer(topic, bootstrap_servers=bootstrap, auto_offset_reset="earliest", group_id=None,
                         enable_auto_commit=False)
    try:
        await c.start()
    except KafkaError as exc:
        await c.stop()
        raise StreamError(f"cannot reach Kafka at {bootstrap}: {exc}") from exc
    out: dict[str, dict] = {}
    try:
        while True:
            got = await c.getmany(timeout_ms=idle_ms)
            if not got:
                break
            for msgs in got.values():
                for m in msgs:
                    key = (m.key or b"").decode("utf-8", "replace")
                    if m.value is None:
                        out.pop(key, None)
                        continue
                    try:
                        out[key] = json.loads(m.value)
                    except ValueError:
                        log.warning("skipping a non-JSON value at %s/%s@%s", m.topic, m.partition, m.offset)
    finally:
        await c.stop()
    return out
