"""The validator's rounds, run beside the agent, never inside it.

A round fetches for minutes at a polite rate.  Were it run inside the agent's loop, its candidates
event would stay unacknowledged for all that time, and Faust waits for every event taken to be
acknowledged before a rebalance goes on and before it stops: a worker joining the group stopped
every partition's ingestion for the round's length, the new owner of the site's partition ran the
same round beside the old one (the site saw twice its rate), and SIGTERM needed SIGKILL.

So the agent only hands the candidate set to a :class:`RoundRunner` and goes on.  The runner keeps
at most one round per site at a time (a newer set for a site whose round runs waits, the newest
only, and runs after it), cancels the rounds of the sites whose candidates partition the group
gave to another worker, and cancels every round when the worker stops.  A cancelled round publishes
nothing; the verdicts it decided stay in the store, so the next round (the new owner's, or the
revalidation timer's) fetches only the rest.
"""

from __future__ import annotations

import asyncio
import logging
from typing import Any, Awaitable, Callable

from aiokafka.partitioner import murmur2

log = logging.getLogger(__name__)


def partition_of(site: str, partitions: int) -> int:
    """The candidates partition of ``site`` (the key): the producer's default partitioner (murmur2,
    as the Java client), so the windows' sends and this agree."""
    return (murmur2(site.encode()) & 0x7FFFFFFF) % max(1, partitions)


class RoundRunner:
    """One validation round per site at a time, as tasks of their own: ``run(site, cand)`` is the
    round.  ``owned``: the candidates partitions assigned to this worker (None: not known yet, all
    of them)."""

    def __init__(self, run: Callable[[str, Any], Awaitable[object]], partitions: int) -> None:
        self.run = run
        self.partitions = partitions
        self.owned: set[int] | None = None
        self.running: dict[str, asyncio.Task] = {}
        self.waiting: dict[str, Any] = {}  #: site -> the newest set that came while its round ran
        self.cancelled = 0
        self.stopped = False

    def owns(self, site: str) -> bool:
        return self.owned is None or partition_of(site, self.partitions) in self.owned

    def busy(self, site: str) -> bool:
        return site in self.running or site in self.waiting

    def submit(self, site: str, cand: Any) -> None:
        """Run a round of ``cand`` now, or after the site's running round (the newest set wins);
        nothing once stopped."""
        if self.stopped:
            return
        if site in self.running:
            self.waiting[site] = cand
            return
        self.running[site] = asyncio.ensure_future(self._rounds(site, cand))

    async def _rounds(self, site: str, cand: Any) -> None:
        try:
            while cand is not None:
                try:
                    await self.run(site, cand)
                except asyncio.CancelledError:
                    raise
                except Exception:  # a failed round is logged; the next set or the timer retries
                    log.exception("validation round of %s failed", site)
                cand = self.waiting.pop(site, None)
        finally:
            if self.running.get(site) is asyncio.current_task():
                del self.running[site]
            if site in self.waiting and site not in self.running and not self.stopped:
                self.submit(site, self.waiting.pop(site))  # a set that came as the round was cancelled

    def assigned(self, partitions: set[int]) -> None:
        """The group's new assignment of the candidates topic: the rounds of sites now owned by
        another worker are cancelled (it runs them), their waiting sets dropped."""
        self.owned = set(partitions)
        for site in [s for s in self.waiting if not self.owns(s)]:
            del self.waiting[site]
        for site, task in list(self.running.items()):
            if not self.owns(site):
                log.info("%s: its candidates partition went to another worker: the round here is cancelled "
                         "(its verdicts so far are kept)", site)
                self.cancelled += 1
                task.cancel()

    async def stop(self) -> None:
        """Cancel every round (the worker stops) and wait until they ended."""
        self.stopped = True
        self.waiting.clear()
        tasks = list(self.running.values())
        for task in tasks:
            task.cancel()
        if tasks:
            log.info("stopping: %s validation rounds cancelled (their verdicts so far are kept)", len(tasks))
            await asyncio.gather(*tasks, return_exceptions=True)


__all__ = ["RoundRunner", "partition_of"]
