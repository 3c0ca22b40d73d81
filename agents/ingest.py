"""The ingest agent: raw log batches in, per-partition incremental state updated, rejects out."""

from __future__ import annotations

import logging

from dust.errors import ParseError
from stream.reader import parse_lines
from stream.records import Reject, decode_raw

log = logging.getLogger(__name__)


def register(app, settings, topics, stores) -> None:
    stats = {"messages": 0, "replayed": 0, "rejected_messages": 0}
    app.dust_ingest_stats = stats

    @app.agent(topics.raw, name="dust-ingest")
    async def ingest(stream):
        async for event in stream.events():
            msg = event.message
            stats["messages"] += 1
            try:
                batch = decode_raw(event.value, settings.max_lines_per_message, settings.max_line_bytes)
            except ParseError as exc:
                stats["rejected_messages"] += 1
                log.warning("rejected message %s/%s@%s: %s", msg.topic, msg.partition, msg.offset, exc)
                raw = event.value if isinstance(event.value, bytes) else b""
                await topics.rejects.send(key=None, value=Reject(
                    reason=exc.reason, detail=exc.detail, line=raw[:1000].decode("utf-8", "replace"),
                    topic=msg.topic, partition=msg.partition, offset=msg.offset))
                continue
            res = parse_lines(batch.lines, batch.site, batch.format, batch.scheme, max_line_bytes=settings.max_line_bytes)
            for reason, detail, line in res.rejects:
                await topics.rejects.send(key=batch.site.encode(), value=Reject(
                    reason=reason, detail=detail, site=batch.site, line=line[:1000],
                    topic=msg.topic, partition=msg.partition, offset=msg.offset))
            state = stores.get(msg.partition)
            if not state.apply(msg.topic, msg.offset, batch.site, res.records, res.counts):
                stats["replayed"] += 1
