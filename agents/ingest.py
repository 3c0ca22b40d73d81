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
from typing import TYPE_CHECKING

from dustbuster.core.errors import ERROR_DETAIL_CHARS, ParseError
from dustbuster.logs.reader import parse_lines
from dustbuster.state.partitions import PartitionState
from dustbuster.stream.changelog import Changelog
from dustbuster.stream.records import RawBatch, decode_raw

from .context import WorkerContext, stop_at_shutdown
from .messages import ensure_fresh, send_reject

if TYPE_CHECKING:
    from dustbuster.logs.reader import BatchResult

log = logging.getLogger(__name__)


def register(ctx: WorkerContext) -> None:
    """The ``dust-ingest`` agent on the raw topic."""
    changelog = Changelog(ctx.settings.kafka_bootstrap, ctx.settings.changelog_topic)
    stop_at_shutdown(ctx.app, changelog)  # its producer starts on the first write
    health = ctx.health

    @ctx.app.agent(ctx.topics.raw, name="dust-ingest")
    @health.agent("dust-ingest")
    async def ingest(stream):
        async for event in health.track("dust-ingest", stream.events()):
            await ingest_message(ctx, changelog, event.message, event.value)


async def ingest_message(ctx: WorkerContext, changelog: Changelog, msg, value) -> None:
    """One raw-topic message: decoded, parsed, staged, written to the changelog, committed."""
    stores = ctx.stores
    state = await stores.run(stores.get, msg.partition)
    await ensure_fresh("raw", state.partition, msg.offset, state.applied(msg.topic),
                       lambda p: _read_image(changelog, p), lambda img, applied: _rebuild(ctx, state, msg.topic, img, applied))
    try:
        batch, res = decode(ctx, value)
    except Exception as exc:  # ParseError: junk; anything else: a decoder bug, never a dead agent
        await reject_message(ctx, msg, exc, value)
        state.skip(msg.topic, msg.offset)
        return
    staged = await stores.run(state.stage, msg.topic, msg.offset, batch.site, res.records, res.counts)
    if staged is None:  # a replay
        return
    metrics = ctx.metrics
    metrics.lines_in.inc(res.counts.get("lines", len(batch.lines)))
    metrics.unique_urls.inc(staged.new_urls)
    metrics.urls_over_cap.inc(staged.over_cap)
    for reason, detail, line in res.rejects:
        await send_reject(ctx, msg, reason, detail, line, batch.site)
    await changelog.write(msg.partition, batch.site, msg.offset, staged.changelog, staged.counters)
    await stores.run(state.commit, staged)


def decode(ctx: WorkerContext, value) -> tuple[RawBatch, "BatchResult"]:
    """The message's batch and its lines parsed; raises ParseError for junk."""
    s = ctx.settings
    batch = decode_raw(value, s.max_lines_per_message, s.max_line_bytes)
    return batch, parse_lines(batch.lines, batch.site, batch.format, batch.scheme, max_line_bytes=s.max_line_bytes,
                              header=batch.header)


async def reject_message(ctx: WorkerContext, msg, exc: Exception, value) -> None:
    """A message that does not decode: logged, counted and sent to the rejects topic whole."""
    reason, detail = (exc.reason, exc.detail) if isinstance(exc, ParseError) else (
        "decoder_error", f"{type(exc).__name__}: {str(exc)[:ERROR_DETAIL_CHARS]}")
    if not isinstance(exc, ParseError):
        log.exception("decoding message %s/%s@%s failed; sent to %s", msg.topic, msg.partition, msg.offset,
                      ctx.settings.rejects_topic)
    log.warning("rejected message %s/%s@%s: %s: %s", msg.topic, msg.partition, msg.offset, reason, detail)
    await send_reject(ctx, msg, reason, detail, value)


async def _read_image(changelog: Changelog, partition: int):
    img = await changelog.read(partition)
    return img.applied, img


async def _rebuild(ctx: WorkerContext, state: PartitionState, topic: str, img, applied: int) -> str:
    """Load a changelog image into the partition's state on the state thread, its progress in the
    metrics and the health report."""
    metrics, health = ctx.metrics, ctx.health
    key = f"{topic}/{state.partition}"
    seen = {"loaded": 0, "pending": 0}

    def progress(loaded: int, total: int) -> None:  # called on the state thread
        metrics.rebuild_urls.inc(loaded - seen["loaded"])
        metrics.rebuild_pending.inc(total - loaded - seen["pending"])
        seen.update(loaded=loaded, pending=total - loaded)
        health.rebuild_progress(key, loaded, total)

    try:
        n = await ctx.stores.run(state.rebuild, topic, applied, img.sites, img.counters, progress)
    finally:
        metrics.rebuild_pending.dec(seen["pending"])
        health.rebuild_finished(key)
    metrics.rebuilds.inc()
    return f"{n} URLs of {len(img.sites)} sites"
