"""RocksDB (rocksdict) behind dust.incremental's KV interface: on disk, surviving restarts.

Writes of one batch, and the caller's metadata (input offsets, changelog positions), go in one
``WriteBatch``: RocksDB applies it atomically, so a crash leaves either the whole batch or none.
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Iterator

from rocksdict import BlockBasedOptions, Cache, Options, Rdict, WriteBatch

from dust.errors import StateError

log = logging.getLogger(__name__)


class RocksKV:
    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        opts = Options(raw_mode=True)
        opts.create_if_missing(True)
        # Most lookups are of envelopes never seen before: bloom filters answer them without I/O;
        # the memtable bloom does the same for recent writes.  A larger memtable batches flushes.
        table = BlockBasedOptions()
        table.set_bloom_filter(10, False)
        table.set_block_cache(Cache(64 * 1024 * 1024))
        table.set_cache_index_and_filter_blocks(True)
        opts.set_block_based_table_factory(table)
        opts.set_memtable_prefix_bloom_ratio(0.1)
        opts.set_memtable_whole_key_filtering(True)
        opts.set_write_buffer_size(64 * 1024 * 1024)
        try:
            self.db = Rdict(str(self.path), opts)
        except Exception as exc:  # rocksdict raises plain Exceptions (lock held, corruption)
            raise StateError(f"cannot open RocksDB at {self.path}: {exc}") from exc

    def get(self, key: bytes) -> bytes | None:
        return self.db.get(key)

    def multi_get(self, keys: list[bytes]) -> list[bytes | None]:
        return self.db[keys] if keys else []

    def write(self, puts: dict[bytes, bytes | None], meta: dict[bytes, bytes]) -> None:
        wb = WriteBatch(raw_mode=True)
        for k, v in puts.items():
            if v is None:
                wb.delete(k)
            else:
                wb.put(k, v)
        for k, v in meta.items():
            wb.put(k, v)
        self.db.write(wb)

    def scan(self, prefix: bytes) -> Iterator[tuple[bytes, bytes]]:
        it = self.db.iter()
        it.seek(prefix)
        while it.valid():
            k = it.key()
            if not k.startswith(prefix):
                break
            yield k, it.value()
            it.next()

    def size_on_disk(self) -> int:
        return sum(f.stat().st_size for f in self.path.rglob("*") if f.is_file())

    def flush(self) -> None:
        self.db.flush()

    def close(self) -> None:
        self.db.close()
