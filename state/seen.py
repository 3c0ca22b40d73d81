"""Which canonical URLs a frontier partition has already passed on.

A URL's signature is xxhash64 of its canonical form (UTF-8), as the "URL signature" of
xxhash-dedup.txt step 4 ("If the signature of the URL exist in the database, the URL will be
rejected ... If not ... the signature will be updated in the database").  One RocksDB per
frontier partition (the frontier is keyed by site, so the sets are partitioned by site); the
applied input offset is written in the same atomic batch as the new signatures, so a replayed
message changes nothing (exactly-once local state, as state/partitions.py does for the miner).
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Iterable

import xxhash
from rocksdict import Rdict, WriteBatch

from .registry import PartitionStores, partition_dir
from .rocks import open_rdict, plain_options, wipe

log = logging.getLogger(__name__)

_SIG = b"S"
_APPLIED = b"M:applied:"


def signature(canonical_url: str) -> bytes:
    """The 8-byte URL signature (xxhash64, big-endian)."""
    return xxhash.xxh64_digest(canonical_url.encode("utf-8", "surrogatepass"))


class SeenStore:
    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self.db = self._open()

    def _open(self) -> Rdict:
        return open_rdict(self.path, plain_options(max_open_files=256))

    def applied(self, topic: str) -> int:
        raw = self.db.get(_APPLIED + topic.encode())
        return int(raw) if raw else -1

    def seen_many(self, sigs: list[bytes]) -> list[bool]:
        if not sigs:
            return []
        got = self.db.get([_SIG + s for s in sigs])
        return [g is not None for g in got]

    def commit(self, new: Iterable[bytes], topic: str, offset: int) -> None:
        wb = WriteBatch(raw_mode=True)
        for s in new:
            wb.put(_SIG + s, b"")
        wb.put(_APPLIED + topic.encode(), str(offset).encode())
        self.db.write(wb)

    def rebuild(self, sigs: Iterable[bytes], topic: str, applied: int) -> int:
        """Replace the contents by a changelog image (another worker went on with the partition)."""
        self.close()
        wipe(self.path)
        self.db = self._open()
        wb = WriteBatch(raw_mode=True)
        n = 0
        for s in sigs:
            wb.put(_SIG + s, b"")
            n += 1
            if n % 50000 == 0:
                self.db.write(wb)
                wb = WriteBatch(raw_mode=True)
        wb.put(_APPLIED + topic.encode(), str(applied).encode())
        self.db.write(wb)
        return n

    def close(self) -> None:
        if getattr(self, "db", None) is not None:
            self.db.close()
            self.db = None  # type: ignore[assignment]


def seen_stores(root: Path) -> PartitionStores[SeenStore]:
    """The seen sets of one worker, one per frontier partition (``root/pNNNN``), opened on first use."""
    root = Path(root)
    return PartitionStores(lambda partition: SeenStore(root / partition_dir(partition)))
