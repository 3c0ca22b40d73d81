"""The ingest agent: raw log batches in, per-partition incremental state updated, rejects out.

Per message: decode (junk → rejects topic), parse lines (bad lines → rejects topic), stage the
state change, write it to the URL changelog and wait for the broker, then commit it to the local
RocksDB together with the message's offset.  A message at or below the applied offset is a replay
and is skipped; a message *beyond* applied + 1 means another worker went on with this partition
(a rebalance) or the local copy is missing: the partition's state is rebuilt from the changelog
first.  The state work (stage, commit, rebuild) runs on the state thread (``Stores.run``), off the
event loop.  docs/state.md, docs/cost.md.
"""

from __future__ import annotations

import logging
import time

from dustbuster.core.errors import ParseError
from dustbuster.stream.changelog import Changelog
from dustbuster.agents.health import Health
from dustbuster.logs.reader import parse_lines
from dustbuster.stream.records import Reject, decode_raw

log = logging.getLogger(__name__)


def register(app, settings, topics, stores) -> None:
    stats = {"messages": 0, "replayed": 0, "rejected_messages": 0, "rebuilds": 0}
    app.dust_ingest_stats = stats
    changelog = Changelog(settings.kafka_bootstrap, settings.changelog_topic)
    metrics = app.dust_metrics
    health = getattr(app, "dust_health", None) or Health()
    stores.max_urls_per_site = settings.max_urls_per_site

    async def ensure_fresh(state, topic: str, offset: int) -> None:
        applied = state.applied(topic)
        cut = state.interrupted(topic)  # a crash in the middle of a large message: buckets half written
        if offset <= applied + 1 and cut is None:
            return
        if cut is not None:
            log.warning("partition %s: message %s was cut short by a crash; rebuilding from the changelog",
                        state.partition, cut)
        t0 = time.perf_counter()
        img = await changelog.read(state.partition)
        if img.applied < applied and cut is None:
            log.warning("partition %s: changelog (%s) is behind the local state (%s); keeping local",
                        state.partition, img.applied, applied)
            return
        key = f"{topic}/{state.partition}"
        seen = {"loaded": 0, "pending": 0}

        def progress(loaded: int, total: int) -> None:  # called on the state thread
            metrics.rebuild_urls.inc(loaded - seen["loaded"])
            metrics.rebuild_pending.inc(total - loaded - seen["pending"])
            seen.update(loaded=loaded, pending=total - loaded)
            health.rebuild_progress(key, loaded, total)

        try:
            n = await stores.run(state.rebuild, topic, img.applied, img.sites, img.counters, progress)
        finally:
            metrics.rebuild_pending.dec(seen["pending"])
            health.rebuild_finished(key)
        stats["rebuilds"] += 1
        metrics.rebuilds.inc()
        log.warning("partition %s: rebuilt %s URLs of %s sites from the changelog (applied %s -> %s) in %.1fs",
                    state.partition, n, len(img.sites), applied, img.applied, time.perf_counter() - t0)

    @app.agent(topics.raw, name="dust-ingest")
    @health.agent("dust-ingest")
    async def ingest(stream):
        async for event in health.track("dust-ingest", stream.events()):
            msg = event.message
            stats["messages"] += 1
            state = await stores.run(stores.get, msg.partition)
            await ensure_fresh(state, msg.topic, msg.offset)
            try:
                batch = decode_raw(event.value, settings.max_lines_per_message, settings.max_line_bytes)
                res = parse_lines(batch.lines, batch.site, batch.format, batch.scheme,
                                  max_line_bytes=settings.max_line_bytes, header=batch.header)
            except Exception as exc:  # ParseError: junk; anything else: a decoder bug, never a dead agent
                reason, detail = (exc.reason, exc.detail) if isinstance(exc, ParseError) else (
                    "decoder_error", f"{type(exc).__name__}: {str(exc)[:200]}")
                if not isinstance(exc, ParseError):
                    log.exception("decoding message %s/%s@%s failed; sent to %s", msg.topic, msg.partition,
                                  msg.offset, settings.rejects_topic)
                stats["rejected_messages"] += 1
                metrics.rejects.labels(reason).inc()
                log.warning("rejected message %s/%s@%s: %s: %s", msg.topic, msg.partition, msg.offset, reason, detail)
                raw = event.value if isinstance(event.value, bytes) else b""
                await topics.rejects.send(key=None, value=Reject(
                    reason=reason, detail=detail, line=raw[:1000].decode("utf-8", "replace"),
                    topic=msg.topic, partition=msg.partition, offset=msg.offset))
                state.skip(msg.topic, msg.offset)
                continue
            staged = await stores.run(state.stage, msg.topic, msg.offset, batch.site, res.records, res.counts)
            if staged is None:
                stats["replayed"] += 1
                continue
            metrics.lines_in.inc(res.counts.get("lines", len(batch.lines)))
            metrics.unique_urls.inc(staged.new_urls)
            metrics.urls_over_cap.inc(staged.over_cap)
            for reason, detail, line in res.rejects:
                metrics.rejects.labels(reason).inc()
                await topics.rejects.send(key=batch.site.encode(), value=Reject(
                    reason=reason, detail=detail, site=batch.site, line=line[:1000],
                    topic=msg.topic, partition=msg.partition, offset=msg.offset))
            await changelog.write(msg.partition, batch.site, msg.offset, staged.changelog, staged.counters)
            await stores.run(state.commit, staged)
