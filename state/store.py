"""The one contract of the per-partition stores: the miner's partition states
(state/partitions.py) and the canonizer's seen sets (state/seen.py).

Both are a RocksDB per input partition, fed by one topic's messages in offset order, backed by a
compacted changelog topic (stream/changelog.py), and exactly-once by the same three moves:

* :meth:`OffsetStore.applied` — the last input offset applied (``meta:applied:<topic>``); a message
  at or below it is a replay and changes nothing;
* :meth:`OffsetStore.commit` — a group's data and its last offset in one RocksDB ``WriteBatch``
  (atomic: a crash leaves both or neither), called only once the changelog holds the group;
* :meth:`OffsetStore.rebuild` — the store replaced by the image its changelog gives (another
  worker went on with the partition, or there is no local copy), the offset written last, so a
  rebuild cut short leaves no offset and is done again.

Beyond the papers: the DUST papers mine a static log; the streaming state is ours (docs/state.md).

The seen sets kept their offset under ``M:applied:`` before this contract; such a store is
migrated when opened (:func:`legacy_offset_moves`): the offset moves to ``meta:applied:``, in one
write.  (An older version opening a migrated set finds no offset and rebuilds it from the seen
changelog: nothing is lost.)
"""

from __future__ import annotations

import logging
from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from typing import Callable, Generic, Iterable, TypeVarTuple

log = logging.getLogger(__name__)

APPLIED_PREFIX = b"meta:applied:"
#: where stores written before the contract keep their offset (the seen sets: ``M:applied:<topic>``)
LEGACY_APPLIED_PREFIXES = (b"M:applied:",)

Progress = Callable[[int, int], None]  #: progress(loaded, total) of a rebuild
#: the parts of a store's changelog image (what its changelog reader gives, :meth:`OffsetStore.rebuild`
#: loads): each store has its own, so that a type checker knows each store's ``rebuild``
Image = TypeVarTuple("Image")


def applied_key(topic: str) -> bytes:
    """The key of the last offset of ``topic`` applied."""
    return APPLIED_PREFIX + topic.encode()


def offset_entry(topic: str, offset: int) -> dict[bytes, bytes]:
    """The write that records ``offset`` of ``topic`` as applied."""
    return {applied_key(topic): str(offset).encode()}


def legacy_offset_moves(entries: Iterable[tuple[bytes, bytes]]) -> dict[bytes, bytes | None]:
    """The writes that move offsets found under a legacy prefix (``entries``: (key, value) pairs of
    the store under :data:`LEGACY_APPLIED_PREFIXES`) to :func:`applied_key`, the old keys deleted."""
    moves: dict[bytes, bytes | None] = {}
    for key, value in entries:
        for prefix in LEGACY_APPLIED_PREFIXES:
            if key.startswith(prefix):
                moves[APPLIED_PREFIX + key[len(prefix):]] = value
                moves[key] = None
    return moves


@dataclass
class OffsetBatch:
    """The effect of a group of input messages of one partition: the store's writes (None deletes a
    key) and the group's last offset, committed together."""

    topic: str
    offset: int  #: the group's last offset (committed with it)
    puts: dict[bytes, bytes | None] = field(default_factory=dict)  #: the data
    meta: dict[bytes, bytes] = field(default_factory=dict)  #: the store's own metadata (counters, marks)


class OffsetStore(ABC, Generic[*Image]):
    """A partition's store, exactly-once against its input topic (see the module doc); ``Image``:
    the parts of its changelog image."""

    partition: int

    def applied(self, topic: str) -> int:
        """The last offset of ``topic`` applied; -1 when none."""
        raw = self._get(applied_key(topic))
        return int(raw) if raw else -1

    def commit(self, batch: OffsetBatch) -> None:
        """The batch's writes and its offset in one atomic RocksDB write."""
        self._write(batch.puts, {**batch.meta, **offset_entry(batch.topic, batch.offset)})
        self._committed(batch)

    def rebuild(self, topic: str, applied: int, *image: *Image, progress: Progress | None = None) -> int:
        """Replace the contents by a changelog image (``image``: the parts its changelog reader
        gives) whose offset is ``applied``; returns the items loaded.  The offset is written last."""
        self._reopen_empty()
        n = self._load(*image, applied=applied, progress=progress)
        self._write({}, offset_entry(topic, applied))
        return n

    @abstractmethod
    def _get(self, key: bytes) -> bytes | None:
        """The stored value of ``key``."""

    @abstractmethod
    def _write(self, puts: dict[bytes, bytes | None], meta: dict[bytes, bytes]) -> None:
        """``puts`` and ``meta`` in one RocksDB ``WriteBatch``."""

    def _committed(self, batch: OffsetBatch) -> None:  # an optional hook: nothing to catch up by default
        """Called after a batch is committed (in-memory state catches up)."""

    @abstractmethod
    def _reopen_empty(self) -> None:
        """Close, delete and reopen the store (empty): a rebuild starts from nothing."""

    @abstractmethod
    def _load(self, *image: *Image, applied: int, progress: Progress | None = None) -> int:
        """Write a changelog image (up to offset ``applied``) into the (empty) store; returns the
        items loaded."""
