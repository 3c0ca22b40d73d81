"""The window timer: every window, each site whose state changed emits its candidate set.  The
mining runs on the state thread (``Stores.run``), off the event loop.

Ticks come every DUST_WINDOW_S seconds from the worker's start, without drift (:func:`ticks`: a tick
whose windows took 7 s of a 10 s interval is followed by the next one 3 s later, not 10; Faust's
timer, used before, corrected at most 0.1 s a tick, so at the cap a site's windows came every ~17–20 s
and a line waited up to ~24 s for a candidate set: bench/bench_capfresh.py).

A window costs the batch engine's time on the site's URLs (seconds for a site near its cap,
docs/cost.md) and the state thread is the worker's one, so a site's windows take at most a share
of the time: after a window of d seconds the site's next one waits until d / share seconds after
it started (the site stays marked as changed meanwhile).  The share is what the other work on the
thread leaves (:meth:`Pacer.share_for`): 1 − 2f, f being the part of the time between the site's
last window and this one that the thread spent on other work (the ingest, other sites' windows:
``Stores.busy_s``), between :data:`WINDOW_SHARE` and :data:`MAX_WINDOW_SHARE`.  A steady stream of a few
thousand lines a second needs a few per cent of the thread, so a site at the cap gets a window
every tick; an ingest that needs half of the thread still gets it (ours; the share used to be
always one half)."""

from __future__ import annotations

import asyncio
import hashlib
import logging
import os
import socket
import time
from collections import Counter
from typing import AsyncIterator, Awaitable, Callable

import orjson
from faust.exceptions import ProducerSendError

from dustbuster.state.partitions import PartitionState
from dustbuster.stream.changelog import Changelog
from dustbuster.stream.fit import fit_candidate_set
from dustbuster.stream.records import CandidateSet, encode

from .reopen import follow_assignment, open_assigned
from .context import WorkerContext

log = logging.getLogger(__name__)

#: the share of the time one site's windows may take when the other work needs half of the thread or
#: more, or nothing is known of it yet (see the module doc)
WINDOW_SHARE = 0.5
#: the largest share of the time one site's windows may take, however idle the rest
MAX_WINDOW_SHARE = 0.9


class Pacer:
    """When each (partition, site) may run its next window."""

    def __init__(self, share: float = WINDOW_SHARE, max_share: float = MAX_WINDOW_SHARE) -> None:
        self.share, self.max_share = share, max_share
        self.next_at: dict[tuple[int, str], float] = {}
        self.ended: dict[tuple[int, str], tuple[float, float]] = {}  #: (end of its last window, thread busy then)

    def due(self, key: tuple[int, str], now: float) -> bool:
        return now >= self.next_at.get(key, 0.0)

    def ran(self, key: tuple[int, str], started: float, seconds: float, busy: float | None = None) -> float:
        """A window of ``seconds`` started at ``started``; ``busy``: the state thread's busy seconds
        (``Stores.busy_s``) at its end, None when unknown.  Returns the share it was given."""
        share = self.share_for(key, started, seconds, busy)
        self.next_at[key] = started + seconds / share
        if busy is not None:
            self.ended[key] = (started + seconds, busy)
        return share

    def share_for(self, key: tuple[int, str], started: float, seconds: float, busy: float | None) -> float:
        """1 − 2f between :attr:`share` and :attr:`max_share`, f = the part of the time between the
        site's last window and this one that the thread spent on other work; :attr:`share` when
        that is not known (the first window, no ``busy``)."""
        last = self.ended.get(key)
        if busy is None or last is None or started <= last[0]:
            return self.share
        f = max(0.0, busy - seconds - last[1]) / (started - last[0])
        return min(self.max_share, max(self.share, 1.0 - 2.0 * f))


async def ticks(interval: float, clock: Callable[[], float] = time.monotonic,
                sleep: Callable[[float], Awaitable] = asyncio.sleep) -> AsyncIterator[int]:
    """Tick k at ``interval`` * k seconds after the first call (k = 1, 2, ...), never two at once:
    one whose body ran past the next tick's time is followed at once by the next, and the ticks
    after it keep their times (no drift, no burst)."""
    start = clock()
    k = 1
    while True:
        await sleep(max(0.0, start + k * interval - clock()))
        yield k
        k = max(k + 1, int((clock() - start) // interval))


def register(ctx: WorkerContext) -> None:
    """The ``dust-window`` task: a tick every DUST_WINDOW_S seconds (:func:`ticks`)."""

    pacer = Pacer()
    follow_assignment(ctx)
    changelog = Changelog(ctx.settings.kafka_bootstrap, ctx.settings.changelog_topic)  # read only

    @ctx.app.task(traced=False)  # an endless loop: no one trace span for all of it
    async def window_ticks() -> None:
        async for _ in ticks(ctx.settings.window_s):
            try:
                await open_assigned(ctx, changelog)
                await run_windows(ctx, pacer)
            except asyncio.CancelledError:
                raise
            except Exception:  # one tick's failure, logged; the next tick tries again
                log.exception("window tick failed; the next one tries again")


#: a tick with at most this many changed sites logs a line per site (INFO); a larger one logs one
#: summary line (20,000 sites wrote 20,000 lines a window), the per-site lines at DEBUG
SITE_LINES_PER_TICK = 10


async def run_windows(ctx: WorkerContext, pacer: Pacer) -> None:
    """One tick: each changed site of each partition this worker owns (agents/assignment.py) whose
    pacer allows it emits its candidate set."""
    wid = int(time.time() // ctx.settings.window_s)
    parts = [p for p in list(ctx.stores.parts.values()) if ctx.raw_partitions.owns(p.partition)]
    dirty = [(part, await ctx.stores.run(part.dirty_sites)) for part in parts]
    verbose = sum(len(d) for _, d in dirty) <= SITE_LINES_PER_TICK
    t0, tally = time.monotonic(), Counter[str]()
    for part, sites in dirty:
        for site, token in sites:
            key = (part.partition, site)
            if not pacer.due(key, time.monotonic()):
                log.debug("%s: window deferred (a site's windows take at most a share of the state thread's "
                          "time: agents/windows.py)", site)
                tally["deferred"] += 1
                continue
            started = time.monotonic()
            tally[await guarded_emit(ctx, part, site, token, wid, verbose)] += 1
            pacer.ran(key, started, time.monotonic() - started, ctx.stores.busy_s)
    if not verbose:
        log.info("window %s: %s changed sites: %s candidate sets sent, %s unchanged, %s deferred, %s failed "
                 "in %.1fs (one line per site at DEBUG)", wid, sum(tally.values()), tally["sent"], tally["unchanged"],
                 tally["deferred"], tally["failed"], time.monotonic() - t0)


async def guarded_emit(ctx: WorkerContext, part: PartitionState, site: str, token: bytes, wid: int,
                       verbose: bool = True) -> str:
    """:func:`emit`, where a failure is one site's counted, logged skip and never the timer's crash: a
    send the broker refuses for good (too large, invalid) clears the site's mark so the next window
    does not repeat it; one that may succeed later (the broker away) keeps it for the next window."""
    try:
        return await emit(ctx, part, site, token, wid, verbose)
    except asyncio.CancelledError:
        raise
    except Exception as exc:  # noqa: BLE001 - one site's failed window, counted and logged, never the timer's crash
        cause = exc.__cause__ if isinstance(exc, ProducerSendError) and exc.__cause__ else exc
        retriable = bool(getattr(cause, "retriable", False))
        ctx.metrics.send_failures.labels("candidates", type(cause).__name__).inc()
        log.error("%s: window %s not sent (%s: %s); %s", site, wid, type(cause).__name__, str(cause)[:300],
                  "the next window tries again" if retriable else "skipped until the site changes again")
        if not retriable:
            await ctx.stores.run(part.clear_dirty, site, token)
        return "failed"


#: the log counts a window's key holds: what the log's lines changed (a URL list changes none)
KEY_COUNTS = ("records", "dropped_status", "error_urls")


def window_key(doc: dict) -> bytes:
    """What makes a window's candidate set worth sending: its candidate rules (with their supports
    and flags), the mining parameters and the log's counts (:data:`KEY_COUNTS`).  A set that differs
    from the last one sent only in listed URLs (the links of the validator's fetched pages, a
    crawler's frontier: test URLs, never Figure 1 evidence) has the same key and is not sent; its
    listed URLs go with the next set that changes."""
    stats = doc.get("stats", {})
    body = [doc.get("rules"), doc.get("params"), [stats.get(k) for k in KEY_COUNTS]]
    return hashlib.sha256(orjson.dumps(body, option=orjson.OPT_SORT_KEYS)).hexdigest()[:32].encode()


async def emit(ctx: WorkerContext, part: PartitionState, site: str, token: bytes, wid: int,
               verbose: bool = True) -> str:
    """Mine one changed site of a partition and send its candidate set of window ``wid``, cut to fit
    the message limit first (stream/fit.py) — unless its :func:`window_key` is the last set's.
    Returns ``sent``, ``unchanged`` or ``failed``; ``verbose``: its line at INFO, else DEBUG."""
    t0 = time.perf_counter()
    result = await ctx.stores.run(part.window, site)
    doc = result.to_json()
    doc["stats"]["window_seconds"] = round(time.perf_counter() - t0, 3)
    doc["stats"]["worker"] = f"{socket.gethostname()}:{os.getpid()}"
    doc["stats"]["partition"] = part.partition
    fitted = fit_candidate_set({"site": site, "window": wid, "test_urls": getattr(result, "test_urls", []),
                             "error_urls": getattr(result, "error_urls", [])} | doc,
                            ctx.settings.max_message_bytes)
    if fitted is None:
        ctx.metrics.send_failures.labels("candidates", "too_large").inc()
        await ctx.stores.run(part.clear_dirty, site, token)
        return "failed"
    doc = fitted
    key = window_key(doc)
    if key == await ctx.stores.run(part.sent_key, site):
        await ctx.stores.run(part.clear_dirty, site, token)
        ctx.metrics.candidate_sets_unchanged.inc()
        log.debug("%s: window %s: candidates and log counts as in the last set sent: nothing sent", site, wid)
        return "unchanged"
    if "trimmed" in doc["stats"]:
        log.warning("%s: window %s trimmed to fit %s bytes: %s", site, wid, ctx.settings.max_message_bytes,
                    doc["stats"]["trimmed"])
    await ctx.topics.candidates.send(key=site.encode(), value=encode(CandidateSet(
        site=site, window=wid, rules=doc["rules"], stats=doc["stats"], params=doc["params"], test_urls=doc["test_urls"],
        error_urls=doc["error_urls"])))
    await ctx.stores.run(part.clear_dirty, site, token, key)
    ctx.metrics.candidate_sets.inc()
    ctx.metrics.candidates.inc(len(doc["rules"]))
    by_type = Counter(str(r.get("type", "substring")) for r in doc["rules"])
    log.log(logging.INFO if verbose else logging.DEBUG,
            "%s: window %s emitted %s candidate rules (%s; %s lines, %s unique URLs so far; %s s, %s)",
            site, wid, len(doc["rules"]), ", ".join(f"{n} {t}" for t, n in sorted(by_type.items())) or "none",
            doc["stats"].get("lines"), doc["stats"].get("urls"), doc["stats"].get("window_seconds"),
            "reused" if doc["stats"].get("reused") else
            "two processes" if doc["stats"].get("window_processes") == 2 else "one process")
    return "sent"
