"""What the ingest and canonizer agents do alike with a message of a partition: bring the
partition's local store up to date from its changelog before applying the message
(:func:`ensure_fresh`), and send a bad message or line to the rejects topic (:func:`send_reject`)."""

from __future__ import annotations

import asyncio
import logging
import time
from typing import Awaitable, Callable, TypeVar

from dustbuster.stream.records import dead_letter

from .context import WorkerContext

log = logging.getLogger(__name__)

Image = TypeVar("Image")  #: what a changelog reader gives for one partition, and its rebuild loads


async def ensure_fresh(name: str, partition: int, offset: int, applied: int,
                       read: Callable[[int], Awaitable[tuple[int, Image]]], rebuild: Callable[[Image, int], Awaitable[str]]) -> bool:
    """Rebuild a partition's local store from its changelog when the message at ``offset`` is not
    the one after the ``applied`` offset (another worker went on with the partition, or there is no
    local copy).  ``read(partition)`` gives the changelog's (applied offset, image); ``rebuild(image,
    applied)`` loads it and says what it loaded, in words.  A changelog behind the local store is
    not loaded.  True when rebuilt."""
    if offset <= applied + 1:
        return False
    t0 = time.perf_counter()
    image_applied, image = await read(partition)
    if image_applied < applied:
        log.warning("%s partition %s: changelog (%s) is behind the local state (%s); keeping local",
                    name, partition, image_applied, applied)
        return False
    loaded = await rebuild(image, image_applied)
    log.warning("%s partition %s: rebuilt %s from the changelog (applied %s -> %s) in %.1fs",
                name, partition, loaded, applied, image_applied, time.perf_counter() - t0)
    return True


async def send_reject(ctx: WorkerContext, msg, reason: str, detail: str, line: str | bytes | None,
                      site: str | None = None) -> None:
    """Count a rejected message or line (``dust_rejects_total{reason}``) and send its dead letter."""
    ctx.metrics.rejects.labels(reason).inc()
    try:
        await ctx.topics.rejects.send(key=site.encode("utf-8", "replace") if site else None, value=dead_letter(
            reason, detail, line, topic=msg.topic, partition=msg.partition, offset=msg.offset, site=site))
    except asyncio.CancelledError:
        raise
    except Exception as exc:  # noqa: BLE001 - the dead letter is lost, counted; the good lines go on
        ctx.metrics.send_failures.labels("rejects", type(exc).__name__).inc()
        log.error("a dead letter (%s) of %s/%s@%s was not sent: %s: %s", reason, msg.topic, msg.partition,
                  msg.offset, type(exc).__name__, str(exc)[:200])
