"""What ``GET /healthz`` reports: is this worker doing its job right now?

A worker is unhealthy while

* one of its agents crashed and was not restarted (for as long as that lasts), or is stalled:
  it cannot apply its input now and tries again (:meth:`Health.stalled`, the ingest agent when
  its store cannot be opened or written), until it goes on;
* one of its agents is crashed or restarting: it raised, and has completed no message since,
  for up to ``settle_s`` seconds (an agent that crashes on every message stays unhealthy as long
  as messages keep coming; one that crashed once and then has nothing to do is healthy again
  after ``settle_s``);
* the Kafka broker has not answered for more than ``DUST_BROKER_GRACE_S`` seconds
  (stream/brokerprobe.py);
* its Kafka consumer is not a member of its group: not joined yet, a rebalance in progress, or
  the membership lost (session expired, poll interval exceeded) and not yet regained.

A partition rebuild from the changelog is shown (partition, URLs loaded of total) but is not a
problem by itself: the worker is working.  The health object is filled by the agents
(:meth:`Health.agent` wraps an agent function, :meth:`Health.track` its event stream) and by the
rebuilds; the consumer is probed on each call (:func:`consumer_problem`).
"""

from __future__ import annotations

import asyncio
import functools
import logging
import time
from dataclasses import dataclass
from typing import AsyncIterator, Awaitable, Callable, TypeVar

log = logging.getLogger(__name__)

E = TypeVar("E")
SETTLE_S = 60.0


@dataclass
class AgentState:
    crashes: int = 0
    last_crash: float | None = None  #: clock time of the last crash
    last_error: str = ""
    last_done: float | None = None  #: clock time the last message was completed
    started: float | None = None
    crash_seq: int = 0  #: event numbers (a clock can tie): a message done after the last crash?
    done_seq: int = 0
    start_seq: int = 0


@dataclass
class Rebuild:
    loaded: int
    total: int
    since: float


class Health:
    def __init__(self, settle_s: float = SETTLE_S, clock: Callable[[], float] = time.monotonic,
                 on_crash: Callable[[str], None] | None = None) -> None:
        self.settle_s = settle_s
        self.clock = clock
        self.on_crash = on_crash  #: called with the agent's name on each crash (a metric)
        self.agents: dict[str, AgentState] = {}
        self.rebuilds: dict[str, Rebuild] = {}
        #: why the consumer is not a group member now (None: it is, or it cannot be told)
        self.membership: Callable[[], str | None] = lambda: None
        #: why the broker counts as unreachable now (None: it answers; stream/brokerprobe.py)
        self.broker: Callable[[], str | None] = lambda: None
        self.stalls: dict[str, str] = {}  #: agent → why it cannot go on now (it retries)
        self._seq = 0

    # ------------------------------------------------------------------ agents
    def _agent(self, name: str) -> AgentState:
        return self.agents.setdefault(name, AgentState())

    def started(self, name: str) -> None:
        st = self._agent(name)
        st.started = self.clock()
        self._seq += 1
        st.start_seq = self._seq

    def crashed(self, name: str, exc: BaseException) -> None:
        st = self._agent(name)
        st.crashes += 1
        st.last_crash = self.clock()
        self._seq += 1
        st.crash_seq = self._seq
        st.last_error = f"{type(exc).__name__}: {str(exc)[:200]}"
        if self.on_crash:
            self.on_crash(name)

    def done(self, name: str) -> None:
        st = self._agent(name)
        st.last_done = self.clock()
        self._seq += 1
        st.done_seq = self._seq

    def stalled(self, name: str, why: str) -> None:
        """The agent cannot go on now and tries again (its input waits): a problem until :meth:`resumed`."""
        self.stalls[name] = why

    def resumed(self, name: str) -> None:
        self.stalls.pop(name, None)

    def agent(self, name: str) -> Callable[[Callable[[E], Awaitable[None]]], Callable[[E], Awaitable[None]]]:
        """Decorator of a Faust agent function (below ``@app.agent``): records each start (Faust
        restarts a crashed agent) and each crash, then lets the exception go on to Faust."""
        def wrap(fun: Callable[[E], Awaitable[None]]) -> Callable[[E], Awaitable[None]]:
            @functools.wraps(fun)
            async def agent_fun(stream: E) -> None:
                self.started(name)
                try:
                    await fun(stream)
                except asyncio.CancelledError:
                    raise
                except Exception as exc:
                    self.crashed(name, exc)
                    log.error("agent %s crashed (%s); Faust restarts it", name, self.agents[name].last_error)
                    raise
            return agent_fun
        return wrap

    async def track(self, name: str, events: AsyncIterator[E]) -> AsyncIterator[E]:
        """The agent's events, unchanged; asking for the next one marks the previous one done (a
        message the agent gave up on with ``continue`` is done too; one it raised on is not)."""
        async for ev in events:
            yield ev
            self.done(name)

    # ------------------------------------------------------------------ rebuilds
    def rebuild_progress(self, key: str, loaded: int, total: int) -> None:
        r = self.rebuilds.get(key)
        if r is None:
            self.rebuilds[key] = Rebuild(loaded, total, self.clock())
        else:
            r.loaded, r.total = loaded, total

    def rebuild_finished(self, key: str) -> None:
        self.rebuilds.pop(key, None)

    # ------------------------------------------------------------------ verdict
    def problems(self) -> list[str]:
        """Why the worker is unhealthy now; empty when it is healthy."""
        now = self.clock()
        out = []
        for name, st in sorted(self.agents.items()):
            if st.last_crash is None:
                continue
            recovered = st.done_seq > st.crash_seq
            restarted = st.start_seq > st.crash_seq
            if not restarted:
                out.append(f"agent {name} crashed {now - st.last_crash:.0f}s ago and was not restarted "
                           f"(last error: {st.last_error})")
            elif not recovered and now - st.last_crash < self.settle_s:
                out.append(f"agent {name} crashed {now - st.last_crash:.0f}s ago and has completed no message "
                           f"since ({st.crashes} crashes; last: {st.last_error})")
        out += [f"agent {name} is stalled: {why}" for name, why in sorted(self.stalls.items())]
        for probe in (self.broker, self.membership):
            try:
                why = probe()
            except Exception as exc:  # noqa: BLE001 - a probe of library internals must never break /healthz
                log.debug("health probe failed: %s", exc)
                why = None
            if why:
                out.append(why)
        return out

    def ok(self) -> bool:
        return not self.problems()

    def details(self) -> dict:
        """The JSON that /healthz adds to its answer."""
        now = self.clock()
        return {
            "problems": self.problems(),
            "agents": {n: {"crashes": st.crashes, "last_error": st.last_error or None,
                           "seconds_since_crash": None if st.last_crash is None else round(now - st.last_crash, 1)}
                       for n, st in sorted(self.agents.items())},
            "rebuilding": {k: {"loaded": r.loaded, "total": r.total, "seconds": round(now - r.since, 1)}
                           for k, r in sorted(self.rebuilds.items())},
        }


def consumer_problem(app) -> str | None:
    """Why the Faust app's Kafka consumer is not a member of its group now, or None.

    Reads Faust's and aiokafka's internals (``app.rebalancing``; the aiokafka group coordinator's
    ``member_id`` and rejoin flag); anything missing means "cannot tell" (None), except a consumer
    not started yet."""
    if getattr(app, "rebalancing", False):
        return "consumer group rebalance in progress"
    consumer = getattr(app, "_consumer", None)  # created when the worker starts
    thread = getattr(consumer, "_thread", None)
    kafka = getattr(thread, "_consumer", None)
    if kafka is None:
        return "Kafka consumer not started"
    coord = getattr(kafka, "_coordinator", None)
    if coord is None or not hasattr(coord, "member_id"):
        return None
    if not coord.member_id:
        return "Kafka consumer is not a member of its group (not joined yet, or the membership was lost)"
    fut = getattr(coord, "_rejoin_needed_fut", None)
    if fut is not None and fut.done():
        return "Kafka consumer must rejoin its group (membership lost or a rebalance started)"
    return None


async def watch_loop(metrics, interval: float = 0.25, stall_s: float = 1.0) -> None:
    """Measure how late the event loop wakes a sleeper (the delay every task suffers): the largest
    delay seen goes to ``dust_event_loop_lag_max_seconds``, each one over ``stall_s`` is counted in
    ``dust_event_loop_stalls_total`` and logged.  Runs until cancelled."""
    loop = asyncio.get_running_loop()
    worst = 0.0
    while True:
        t = loop.time()
        await asyncio.sleep(interval)
        lag = loop.time() - t - interval
        if lag > worst:
            worst = lag
            metrics.loop_lag_max.set(round(lag, 4))
        if lag > stall_s:
            metrics.loop_stalls.inc()
            log.warning("the event loop was blocked for %.1fs", lag)
