"""The stores of the raw partitions assigned to this worker, opened at the window tick after the
assignment and brought up to the URL changelog (agents/assignment.py says why)."""

from __future__ import annotations

import asyncio
import logging
from typing import Any, Iterable

from dustbuster.stream.changelog import Changelog

from .context import WorkerContext
from .ingest import rebuild_from_changelog
from .messages import ensure_fresh

log = logging.getLogger(__name__)


def follow_assignment(ctx: WorkerContext) -> None:
    """Keep ``ctx.raw_partitions`` equal to the raw topic's partitions Faust assigns this worker."""
    topic = ctx.settings.raw_topic

    async def on_assigned(sender: Any, /, assigned: Iterable[Any] = (), *_args: Any, **_kw: Any) -> None:
        mine = sorted(tp.partition for tp in assigned if tp.topic == topic)
        ctx.raw_partitions.assigned(mine)
        log.info("raw partitions assigned to this worker: %s", mine or "none")

    async def on_revoked(sender: Any, /, revoked: Iterable[Any] = (), *_args: Any, **_kw: Any) -> None:
        ctx.raw_partitions.revoked(tp.partition for tp in revoked if tp.topic == topic)

    ctx.app.on_partitions_assigned.connect(on_assigned)
    ctx.app.on_partitions_revoked.connect(on_revoked)


async def open_assigned(ctx: WorkerContext, changelog: Changelog) -> None:
    """Open the store of every assigned raw partition not checked since its assignment, and bring
    it up to the changelog (a rebuild when the changelog went further: agents/messages.py
    ``ensure_fresh``).  A partition whose check fails (the broker away) is tried again at the next
    call."""
    owned = ctx.raw_partitions
    topic = ctx.settings.raw_topic
    for p in sorted(owned.pending):
        generation = owned.generation
        async with owned.lock(p):
            try:
                await _check(ctx, changelog, p, topic)
            except asyncio.CancelledError:
                raise
            except Exception as exc:  # noqa: BLE001 - the broker away, a store that cannot open: next tick
                log.warning("raw partition %s: store not opened yet (%s: %s); the next window tick tries again",
                            p, type(exc).__name__, str(exc)[:200])
                continue
            owned.checked(p, generation)


async def _check(ctx: WorkerContext, changelog: Changelog, partition: int, topic: str) -> None:
    state = await ctx.stores.run(ctx.stores.get, partition)
    last = await changelog.last_applied(partition)

    async def rebuild(img, applied: int) -> str:
        return await rebuild_from_changelog(ctx, state, topic, img, applied)

    await ensure_fresh("raw", partition, last + 1, state.applied(topic), lambda part: _image(changelog, part), rebuild)


async def _image(changelog: Changelog, partition: int):
    img = await changelog.read(partition)
    return img.applied, img
