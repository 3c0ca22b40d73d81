"""Reading a site-keyed topic's latest value per key (candidates, rules): every partition read to
the end offsets found at start with a :class:`~dustbuster.stream.rulesview.TopicFollower`, then
closed.  The one "read a topic to its end" of the project; a live follower uses TopicFollower."""

from __future__ import annotations

from typing import Any

from .rulesview import Decoder, TopicFollower, Update, decode_site_record, topic_partitions


async def latest_by_key(bootstrap: str, topic: str, check: Update | None = None,
                        decode: Decoder = decode_site_record) -> dict[str, Any]:
    """The newest value of every key of ``topic`` (keys as lower-case UTF-8; values decoded by
    ``decode``, JSON objects by default); a tombstone drops the key.  A value that does not decode,
    or that ``check(site, value)`` raises on, is logged and skipped: the key keeps its previous
    value.  {} for a topic not there."""
    if not await topic_partitions(bootstrap, topic):
        return {}
    out: dict[str, Any] = {}

    def upd(key: str, doc: Any) -> None:
        if check is not None:
            check(key, doc)
        if doc is None:
            out.pop(key, None)
        else:
            out[key] = doc

    f = TopicFollower(bootstrap, topic, upd, decode=decode)
    await f.start()
    try:
        await f.read_to_end()
    finally:
        await f.stop()
    return out
