"""Which canonical URLs a frontier partition has already passed on.

A URL's signature is xxhash64 of its canonical form (UTF-8), as the "URL signature" of
xxhash-dedup.txt step 4 ("If the signature of the URL exist in the database, the URL will be
rejected ... If not ... the signature will be updated in the database").  One RocksDB per
frontier partition (the frontier is keyed by site, so the sets are partitioned by site); the
applied input offset is written in the same atomic batch as the new signatures, so a replayed
message changes nothing (exactly-once local state): the store contract of state/store.py, the one
state/partitions.py keeps for the miner.
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Iterable, cast

import xxhash
from rocksdict import Rdict, WriteBatch

from .registry import PartitionStores, partition_dir
from .rocks import open_rdict, plain_options, wipe
from .store import LEGACY_APPLIED_PREFIXES, OffsetBatch, OffsetStore, Progress, legacy_offset_moves

log = logging.getLogger(__name__)

_SIG = b"S"
REBUILD_WRITE_EVERY = 50_000  #: signatures a rebuild writes at once


def signature(canonical_url: str) -> bytes:
    """The 8-byte URL signature (xxhash64, big-endian)."""
    return xxhash.xxh64_digest(canonical_url.encode("utf-8", "surrogatepass"))


def seen_batch(topic: str, offset: int, new: Iterable[bytes]) -> OffsetBatch:
    """A frontier message's new signatures with its offset, for :meth:`SeenStore.commit`."""
    return OffsetBatch(topic, offset, {_SIG + s: b"" for s in new})


class SeenStore(OffsetStore[Iterable[bytes]]):
    """One frontier partition's seen set: key ``S<signature>`` (empty value), and the offset
    applied (state/store.py)."""

    def __init__(self, path: str | Path, partition: int = -1) -> None:
        self.path = Path(path)
        self.partition = partition
        self.db = self._open()
        self._migrate_legacy_offsets()

    def _open(self) -> Rdict:
        return open_rdict(self.path, plain_options(max_open_files=256))

    def _migrate_legacy_offsets(self) -> None:
        """A set written before the store contract keeps its offset under ``M:applied:``: moved."""
        moves = legacy_offset_moves(e for prefix in LEGACY_APPLIED_PREFIXES for e in _scan(self.db, prefix))
        if moves:
            log.info("seen set at %s: offsets moved to the store contract's keys (%s)", self.path,
                     b", ".join(k for k, v in moves.items() if v is not None).decode(errors="replace"))
            self._write(moves, {})

    def seen_many(self, sigs: list[bytes]) -> list[bool]:
        if not sigs:
            return []
        got = cast("list[bytes | None]", self.db.get([_SIG + s for s in sigs]))  # keys in a list: values in a list
        return [g is not None for g in got]

    def _get(self, key: bytes) -> bytes | None:
        return self.db.get(key)

    def _write(self, puts: dict[bytes, bytes | None], meta: dict[bytes, bytes]) -> None:
        wb = WriteBatch(raw_mode=True)
        for d in (puts, meta):
            for k, v in d.items():
                if v is None:
                    wb.delete(k)
                else:
                    wb.put(k, v)
        self.db.write(wb)

    def _reopen_empty(self) -> None:
        self.close()
        wipe(self.path)
        self.db = self._open()

    def _load(self, sigs: Iterable[bytes], *, applied: int, progress: Progress | None = None) -> int:
        """The signatures of a seen-changelog image, :data:`REBUILD_WRITE_EVERY` per write."""
        n = 0
        chunk: dict[bytes, bytes | None] = {}
        for s in sigs:
            chunk[_SIG + s] = b""
            n += 1
            if len(chunk) >= REBUILD_WRITE_EVERY:
                self._write(chunk, {})
                chunk = {}
        self._write(chunk, {})
        if progress:
            progress(n, n)
        return n

    def close(self) -> None:
        if getattr(self, "db", None) is not None:
            self.db.close()
            self.db = None  # type: ignore[assignment]


def _scan(db: Rdict, prefix: bytes) -> list[tuple[bytes, bytes]]:
    it = db.iter()
    it.seek(prefix)
    out = []
    while it.valid() and it.key().startswith(prefix):
        out.append((it.key(), it.value()))
        it.next()
    return out


def seen_stores(root: Path) -> PartitionStores[SeenStore]:
    """The seen sets of one worker, one per frontier partition (``root/pNNNN``), opened on first use."""
    root = Path(root)
    return PartitionStores(lambda partition: SeenStore(root / partition_dir(partition), partition))
