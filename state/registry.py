"""The open per-partition stores of one worker: one store per input partition, opened on first
use and closed together.  The partition states of the miner (:class:`dustbuster.state.partitions.Stores`)
and the seen sets of the canonizer (:mod:`dustbuster.state.seen`) are both held this way."""

from __future__ import annotations

from typing import Callable, Generic, Protocol, TypeVar


class Closable(Protocol):
    def close(self) -> None: ...


S = TypeVar("S", bound=Closable)


class PartitionStores(Generic[S]):
    """Partition number → its open store, made by ``open_store(partition)`` when first asked for."""

    def __init__(self, open_store: Callable[[int], S]) -> None:
        self.open_store = open_store
        self.parts: dict[int, S] = {}

    def get(self, partition: int) -> S:
        st = self.parts.get(partition)
        if st is None:
            st = self.parts[partition] = self.open_store(partition)
        return st

    def close(self) -> None:
        for st in self.parts.values():
            st.close()
        self.parts.clear()


def partition_dir(partition: int) -> str:
    """The folder name of a partition's store under its root (``p0003``)."""
    return f"p{partition:04d}"
