"""The ingest agent: raw log batches in, per-partition state updated, rejects out.

Messages are taken in groups (up to ``DUST_INGEST_GROUP`` messages, or what arrived within
:data:`GROUP_WAIT_S`), and each partition's messages of a group are applied together: decoded
(junk → rejects topic), parsed (bad lines → rejects topic), staged, written to the URL changelog
and acknowledged by the broker, then committed to the local RocksDB in one write with the group's
last offset.  So the per-message costs (a round trip to the state thread, a changelog
acknowledgement, a RocksDB write) are paid once per group, and a record touched by several
messages of the group is written once; exactly-once holds as before, since the group commits
atomically with its last offset.  The group's raw messages are acknowledged to Faust (so their
offsets may be committed to Kafka) only after that commit: a group cut short by a crash or a stop
is delivered again.  A changelog write that fails is tried again until the broker takes it
(stream/changelog.py).  The partition's store keeps the store contract of state/store.py: a
message at or below the applied offset is a replay and is skipped; a message *beyond* applied + 1
means another worker went on with this partition (a rebalance) or the local copy is missing: the
partition's state is rebuilt from the changelog first.  The state work (stage, commit, rebuild) runs on the state thread (``Stores.run``), off the
event loop.  docs/state.md, docs/cost.md.
"""

from __future__ import annotations

import asyncio
import logging
from typing import TYPE_CHECKING

from dustbuster.core.errors import ERROR_DETAIL_CHARS, ParseError
from dustbuster.logs.reader import parse_lines
from dustbuster.state.partitions import Message, PartitionState
from dustbuster.stream.changelog import Changelog, write_until_acked
from dustbuster.stream.records import RawBatch, decode_raw

from .context import WorkerContext, stop_at_shutdown
from .messages import ensure_fresh, send_reject
from .parsepool import Parsed, ParsePool

if TYPE_CHECKING:
    from dustbuster.logs.reader import BatchResult

log = logging.getLogger(__name__)

#: how long a group waits for more messages once one has arrived (seconds)
GROUP_WAIT_S = 0.05
#: the longest pause between two tries of a group that could not be applied (seconds)
APPLY_RETRY_MAX_S = 10.0
#: with parser processes, how many groups are parsed while the one before them is applied
PARSE_AHEAD = 1


def register(ctx: WorkerContext) -> None:
    """The ``dust-ingest`` agent on the raw topic."""
    changelog = Changelog(ctx.settings.kafka_bootstrap, ctx.settings.changelog_topic)
    stop_at_shutdown(ctx.app, changelog)  # its producer starts on the first write
    s = ctx.settings
    pool = ParsePool(s.parse_processes, s.max_lines_per_message, s.max_line_bytes)
    stop_at_shutdown(ctx.app, pool)
    health = ctx.health

    @ctx.app.agent(ctx.topics.raw, name="dust-ingest")
    @health.agent("dust-ingest")
    async def ingest(stream):
        # noack_take: an event is acknowledged (so its offset may be committed) only once its group
        # is in the changelog and the local store; a group cut short (a crash, a stop) comes again
        groups = health.track("dust-ingest", stream.noack_take(ctx.settings.ingest_group, within=GROUP_WAIT_S))
        if pool.processes:
            await ingest_parsing_ahead(ctx, changelog, pool, stream, groups)
            return
        async for events in groups:
            for part in by_partition(events):
                await apply_until_done(ctx, changelog, part, pool)
                for ev in part:
                    await stream.ack(ev)


async def ingest_parsing_ahead(ctx: WorkerContext, changelog: Changelog, pool: ParsePool, stream, groups) -> None:
    """With parser processes: each group's messages go to the processes as soon as the group is
    taken, while the group before it is staged, logged and committed (:data:`PARSE_AHEAD` groups
    queued, and one more parsing while it waits for room).  Only the parsing moves: groups are
    applied and acknowledged in the order they were taken, each after its commit, as without the
    processes (so the parse of one group and the state work of the one before it run on two cores,
    not one after the other).  A rebalance finds nothing new: Faust waits until the
    events taken are acknowledged, which the applier does as before."""
    ahead: asyncio.Queue = asyncio.Queue(maxsize=PARSE_AHEAD)
    applier = asyncio.ensure_future(_apply_in_order(ctx, changelog, pool, stream, ahead))
    parsing: asyncio.Future | None = None
    try:
        async for events in groups:
            for part in by_partition(events):
                parsing = asyncio.ensure_future(pool.parse([ev.value for ev in part]))
                await _put_unless_done(ahead, (part, parsing), applier)
                parsing = None
        await _put_unless_done(ahead, None, applier)  # the stream ended: apply what is queued, then stop
        await applier
    finally:
        applier.cancel()
        left = [f for f in [parsing, *(item[1] for item in _drain(ahead) if item is not None)] if f is not None]
        for f in left:
            f.cancel()  # not applied, not acknowledged: delivered again
        await asyncio.gather(applier, *left, return_exceptions=True)


def _drain(queue: asyncio.Queue) -> list:
    out = []
    while not queue.empty():
        out.append(queue.get_nowait())
    return out


async def _apply_in_order(ctx: WorkerContext, changelog: Changelog, pool: ParsePool, stream, ahead: asyncio.Queue) -> None:
    while (item := await ahead.get()) is not None:
        part, parsing = item
        try:
            await apply_until_done(ctx, changelog, part, pool, parsing)
        except asyncio.CancelledError:
            _discard(parsing)
            raise
        for ev in part:
            await stream.ack(ev)


async def _put_unless_done(queue: asyncio.Queue, item, applier: asyncio.Future) -> None:
    """``queue.put(item)``, unless the applier ends first (then its exception is raised here)."""
    put = asyncio.ensure_future(queue.put(item))
    try:
        await asyncio.wait({put, applier}, return_when=asyncio.FIRST_COMPLETED)
    except asyncio.CancelledError:
        put.cancel()  # else it would queue the item after the caller drained the queue
        raise
    if not put.done():
        put.cancel()
        applier.result()  # raises what ended it
        raise RuntimeError("the ingest applier stopped")


async def apply_until_done(ctx: WorkerContext, changelog: Changelog, events: list, pool: ParsePool | None = None,
                           parsing: "asyncio.Future[list[Parsed]] | None" = None) -> None:
    """:func:`ingest_messages`, tried again with a growing pause (up to :data:`APPLY_RETRY_MAX_S`)
    when it fails — the store cannot be opened (no file descriptor left, the disk full), the state
    thread raised — instead of crashing the agent: a crashed agent would stop ingesting for good.
    Nothing is lost (the group is acknowledged only once applied; a group cut midway is discarded
    by the next try), and while it fails the worker's /healthz is 503 with the reason
    (:meth:`~dustbuster.agents.health.Health.stalled`).  ``parsing``: the events' messages parsed
    ahead by ``pool`` (:func:`ingest_parsing_ahead`), for the first try; a try after a failure
    parses them again."""
    pause, partition = 0.5, events[0].message.partition
    while True:
        why = await _try_apply(ctx, changelog, events, pool, parsing)
        if why is None:
            ctx.health.resumed("dust-ingest")
            return
        _discard(parsing)
        parsing = None  # the next try parses again
        why = f"cannot apply raw partition {partition}: {why}"
        ctx.health.stalled("dust-ingest", why)
        log.error("%s; retrying in %.1fs", why, pause)
        await asyncio.sleep(pause)
        pause = min(APPLY_RETRY_MAX_S, pause * 2)


async def _try_apply(ctx: WorkerContext, changelog: Changelog, events: list, pool: ParsePool | None,
                     parsing: "asyncio.Future[list[Parsed]] | None") -> str | None:
    """One try of :func:`ingest_messages`: None when it applied the events, else why not.  A
    cancellation that is not this task's own (a parse whose pool was stopped) is a failure too."""
    try:
        if pool is None or not pool.processes:
            await ingest_messages(ctx, changelog, events)
        else:
            await ingest_messages(ctx, changelog, events, pool, parsing)
    except asyncio.CancelledError:
        task = asyncio.current_task()
        if task is None or task.cancelling():
            raise
        return "CancelledError: the parse was cancelled (its parser pool was stopped)"
    except Exception as exc:  # noqa: BLE001 - any failure: retried, shown, never a dead agent
        return f"{type(exc).__name__}: {str(exc)[:ERROR_DETAIL_CHARS]}"
    return None


def _discard(fut: "asyncio.Future | None") -> None:
    """Cancel a parse that will not be used, and retrieve its outcome (no "never retrieved")."""
    if fut is not None:
        fut.cancel()
        fut.add_done_callback(lambda f: f.cancelled() or f.exception())
    return None


def by_partition(events: list) -> list[list]:
    """A group's events per partition, each list in offset order."""
    parts: dict[int, list] = {}
    for ev in events:
        parts.setdefault(ev.message.partition, []).append(ev)
    return [sorted(evs, key=lambda ev: ev.message.offset) for evs in parts.values()]


async def ingest_messages(ctx: WorkerContext, changelog: Changelog, events: list, pool: ParsePool | None = None,
                          parsing: "asyncio.Future[list[Parsed]] | None" = None) -> None:
    """Consecutive raw-topic messages of one partition: decoded, parsed (inline, or by ``pool``'s
    processes: DUST_PARSE_PROCESSES; ``parsing``: all of ``events`` parsed ahead by them), staged,
    written to the changelog, committed."""
    async with ctx.raw_partitions.lock(events[0].message.partition):  # no rebuild between stage and commit
        await _ingest_locked(ctx, changelog, events, pool, parsing)


async def _ingest_locked(ctx: WorkerContext, changelog: Changelog, events: list, pool: ParsePool | None,
                         parsing: "asyncio.Future[list[Parsed]] | None") -> None:
    stores = ctx.stores
    first = events[0].message
    state = await stores.run(stores.get, first.partition)
    await ensure_fresh("raw", state.partition, first.offset, state.applied(first.topic),
                       lambda p: _read_image(changelog, p),
                       lambda img, applied: rebuild_from_changelog(ctx, state, first.topic, img, applied))
    applied = state.applied(first.topic)
    fresh = [ev.message.offset > applied for ev in events]  # the others are replays
    todo = [ev for ev, new in zip(events, fresh) if new]
    if parsing is not None:
        parsed: list[Parsed] | None = [p for p, new in zip(await parsing, fresh) if new]
    else:
        parsed = await pool.parse([ev.value for ev in todo]) if pool is not None and pool.processes else None
    messages, rejects = [], []
    for k, ev in enumerate(todo):
        msg = ev.message
        try:
            p = parsed[k] if parsed is not None else parse_inline(ctx, ev.value)
            if p.error is not None:
                raise ParseError(*p.error[:2])
            check_site_key(msg.key, p.site)
        except Exception as exc:  # noqa: BLE001 - ParseError: junk; anything else: a decoder bug, never a dead agent
            await reject_message(ctx, msg, exc, ev.value)
            messages.append(Message(msg.offset, None, [], {}))
            continue
        assert p.records is not None and p.rejects is not None and p.counts is not None  # set when no error
        messages.append(Message(msg.offset, p.site, p.records, p.counts, p.listed or [], p.errors or []))
        rejects += [(msg, reason, detail, line, p.site) for reason, detail, line in p.rejects]
        ctx.metrics.lines_in.inc(p.counts.get("lines", p.lines))
    if not messages:
        return
    staged = await stores.run(state.stage_group, first.topic, messages)
    if staged is None:
        return
    ctx.metrics.unique_urls.inc(staged.new_urls)
    ctx.metrics.urls_over_cap.inc(staged.over_cap)
    for msg, reason, detail, line, site in rejects:
        await send_reject(ctx, msg, reason, detail, line, site)
    await write_changelog(changelog, first.partition, staged.offset, staged.changelog)
    await stores.run(state.commit, staged)


async def write_changelog(changelog: Changelog, partition: int, offset: int, records: list) -> None:
    """The group's changelog records, acknowledged by the broker (retried until they are:
    stream/changelog.py ``write_until_acked``), since nothing may be committed before."""
    await write_until_acked(lambda: changelog.write(partition, offset, records),
                            f"URL changelog write for partition {partition} (offset {offset})")


def check_site_key(key: bytes | None, site: str | None) -> None:
    """A raw message keyed by one site and naming another (case aside: the site is read lower-cased)
    is refused (ParseError ``site_key_mismatch``): the key picks the partition, the field the state, so such a message would
    split its site across partitions (two candidate sets a window, each of part of the site).  A
    message without a key is taken (whichever partition it lands on holds the whole message)."""
    if key is not None and site is not None and key.decode("utf-8", "surrogateescape").lower() != site.lower():
        shown = key[:80].decode("utf-8", "replace")
        raise ParseError("site_key_mismatch", f"the message is keyed {shown!r} but names the site {site[:80]!r}: "
                         "producers key each raw message by its site")


def parse_inline(ctx: WorkerContext, value) -> Parsed:
    """:func:`decode` as a :class:`Parsed` (raises what it raises)."""
    batch, res = decode(ctx, value)
    return Parsed(batch.site, res.records, res.rejects, res.counts, len(batch.lines), listed=res.listed, errors=res.errors)


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


async def rebuild_from_changelog(ctx: WorkerContext, state: PartitionState, topic: str, img, applied: int) -> str:
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
