"""The window timer: every window, each site whose state changed emits its candidate set.  The
mining runs on the state thread (``Stores.run``), off the event loop.

A window costs the batch engine's time on the site's URLs (seconds for a site near its cap,
docs/cost.md) and the state thread is the worker's one: so a site's windows take at most
:data:`WINDOW_SHARE` of the time — after a window of d seconds the site's next one waits until
d / WINDOW_SHARE seconds after the last one started (the site stays marked as changed meanwhile)."""

from __future__ import annotations

import asyncio
import logging
import os
import socket
import time
from collections import Counter

from faust.exceptions import ProducerSendError

from dustbuster.state.partitions import PartitionState
from dustbuster.stream.fit import fit_candidate_set
from dustbuster.stream.records import CandidateSet, encode

from .context import WorkerContext

log = logging.getLogger(__name__)

#: the largest share of the time one site's windows may take (see the module doc)
WINDOW_SHARE = 0.5


class Pacer:
    """When each (partition, site) may run its next window."""

    def __init__(self, share: float = WINDOW_SHARE) -> None:
        self.share = share
        self.next_at: dict[tuple[int, str], float] = {}

    def due(self, key: tuple[int, str], now: float) -> bool:
        return now >= self.next_at.get(key, 0.0)

    def ran(self, key: tuple[int, str], started: float, seconds: float) -> None:
        self.next_at[key] = started + seconds / self.share


def register(ctx: WorkerContext) -> None:
    """The ``dust-window`` timer, every DUST_WINDOW_S seconds."""

    pacer = Pacer()

    @ctx.app.timer(ctx.settings.window_s, name="dust-window")
    async def window() -> None:
        wid = int(time.time() // ctx.settings.window_s)
        for part in list(ctx.stores.parts.values()):
            for site, token in await ctx.stores.run(part.dirty_sites):
                key = (part.partition, site)
                if not pacer.due(key, time.monotonic()):
                    log.debug("%s: window deferred (a site's windows take at most %.0f%% of the time)", site,
                              100 * pacer.share)
                    continue
                started = time.monotonic()
                await guarded_emit(ctx, part, site, token, wid)
                pacer.ran(key, started, time.monotonic() - started)


async def guarded_emit(ctx: WorkerContext, part: PartitionState, site: str, token: bytes, wid: int) -> None:
    """:func:`emit`, where a failure is one site's counted, logged skip and never the timer's crash: a
    send the broker refuses for good (too large, invalid) clears the site's mark so the next window
    does not repeat it; one that may succeed later (the broker away) keeps it for the next window."""
    try:
        await emit(ctx, part, site, token, wid)
    except asyncio.CancelledError:
        raise
    except Exception as exc:
        cause = exc.__cause__ if isinstance(exc, ProducerSendError) and exc.__cause__ else exc
        retriable = bool(getattr(cause, "retriable", False))
        ctx.metrics.send_failures.labels("candidates", type(cause).__name__).inc()
        log.error("%s: window %s not sent (%s: %s); %s", site, wid, type(cause).__name__, str(cause)[:300],
                  "the next window tries again" if retriable else "skipped until the site changes again")
        if not retriable:
            await ctx.stores.run(part.clear_dirty, site, token)


async def emit(ctx: WorkerContext, part: PartitionState, site: str, token: bytes, wid: int) -> None:
    """Mine one changed site of a partition and send its candidate set of window ``wid``, cut to fit
    the message limit first (stream/fit.py)."""
    t0 = time.perf_counter()
    result = await ctx.stores.run(part.window, site)
    doc = result.to_json()
    doc["stats"]["window_seconds"] = round(time.perf_counter() - t0, 3)
    doc["stats"]["worker"] = f"{socket.gethostname()}:{os.getpid()}"
    doc["stats"]["partition"] = part.partition
    doc = fit_candidate_set({"site": site, "window": wid, "test_urls": getattr(result, "test_urls", []),
                             "error_urls": getattr(result, "error_urls", [])} | doc,
                            ctx.settings.max_message_bytes)
    if doc is None:
        ctx.metrics.send_failures.labels("candidates", "too_large").inc()
        await ctx.stores.run(part.clear_dirty, site, token)
        return
    if "trimmed" in doc["stats"]:
        log.warning("%s: window %s trimmed to fit %s bytes: %s", site, wid, ctx.settings.max_message_bytes,
                    doc["stats"]["trimmed"])
    await ctx.topics.candidates.send(key=site.encode(), value=encode(CandidateSet(
        site=site, window=wid, rules=doc["rules"], stats=doc["stats"], params=doc["params"], test_urls=doc["test_urls"],
        error_urls=doc["error_urls"])))
    await ctx.stores.run(part.clear_dirty, site, token)
    ctx.metrics.candidate_sets.inc()
    ctx.metrics.candidates.inc(len(doc["rules"]))
    by_type = Counter(str(r.get("type", "substring")) for r in doc["rules"])
    log.info("%s: window %s emitted %s candidate rules (%s; %s lines, %s unique URLs so far)", site, wid,
             len(doc["rules"]), ", ".join(f"{n} {t}" for t, n in sorted(by_type.items())) or "none",
             doc["stats"].get("lines"), doc["stats"].get("urls"))
