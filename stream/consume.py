"""Reading a topic's latest value per key (candidates, rules): read to its end offsets, then closed."""

from __future__ import annotations

from .rulesview import TopicFollower, topic_partitions


async def latest_by_key(bootstrap: str, topic: str) -> dict[str, dict]:
    """The newest JSON object of every key of ``topic`` (keys as lower-case UTF-8); a tombstone drops
    the key; values that are not JSON objects are logged and skipped.  {} for a topic not there."""
    if not await topic_partitions(bootstrap, topic):
        return {}
    out: dict[str, dict] = {}

    def upd(key: str, doc: dict | None) -> None:
        if doc is None:
            out.pop(key, None)
        else:
            out[key] = doc

    f = TopicFollower(bootstrap, topic, upd)
    await f.start()
    try:
        while not f.ready.is_set():
            await f.poll()
    finally:
        await f.stop()
    return out
