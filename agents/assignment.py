"""Which raw partitions this worker owns, and their stores opened as soon as they are assigned.

Faust tells a worker its partitions when its group rebalances (``on_partitions_assigned``, the
whole new assignment).  Were a partition's store opened only when its next message arrives, the
sites marked changed on disk (``meta:dirty:<site>``: a window due when the worker stopped, or when
another worker gave the partition up) would wait for new lines of the partition — possibly for
ever.  So every assigned raw partition is opened by the next window tick
(:func:`dustbuster.agents.reopen.open_assigned`): its local store is compared with the URL changelog's last applied offset
(:meth:`~dustbuster.stream.changelog.Changelog.last_applied`, a read of the partition's tail) and
rebuilt from the changelog when another worker went on with it (stream/changelog.py); then its
changed sites are windowed like any other.  The window timer mines only the partitions this worker
owns (a revoked partition's sites are another worker's now: mining them here too would send two
candidate sets per window).  Each partition's freshness check and message groups hold the
partition's lock, so a rebuild never runs between a group's stage and its commit.
"""

from __future__ import annotations

import asyncio
from typing import Iterable


class RawAssignment:
    """The raw partitions assigned to this worker (None until the group first assigns them: then
    every open store counts as owned), the ones whose stores are still to be opened and checked, and
    one lock per partition (taken by :func:`~dustbuster.agents.reopen.open_assigned` and the ingest agent)."""

    def __init__(self) -> None:
        self.partitions: set[int] | None = None
        self.pending: set[int] = set()
        self.generation = 0  #: counts the assignments and revocations (a check is kept only within one)
        self._locks: dict[int, asyncio.Lock] = {}

    def assigned(self, partitions: Iterable[int]) -> None:
        """The group's new assignment (all of it): each partition is checked again, since another
        worker may have owned it meanwhile."""
        self.partitions = set(partitions)
        self.pending = set(self.partitions)
        self.generation += 1

    def revoked(self, partitions: Iterable[int]) -> None:
        """Partitions taken away (a rebalance starts): no longer mined here from now on."""
        gone = set(partitions)
        self.partitions = (self.partitions or set()) - gone
        self.pending -= gone
        self.generation += 1

    def checked(self, partition: int, generation: int) -> None:
        """The partition's check, begun at ``generation``, succeeded: it is no longer pending,
        unless the assignment changed meanwhile (then it is checked again)."""
        if generation == self.generation:
            self.pending.discard(partition)

    def owns(self, partition: int) -> bool:
        """Owned and checked (a pending partition's store may be behind the changelog)."""
        return (self.partitions is None or partition in self.partitions) and partition not in self.pending

    def lock(self, partition: int) -> asyncio.Lock:
        lk = self._locks.get(partition)
        if lk is None:
            lk = self._locks[partition] = asyncio.Lock()
        return lk
