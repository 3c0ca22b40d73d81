"""RocksDB (rocksdict): the one place a store of ours opens (:func:`open_rdict`) or wipes
(:func:`wipe`) a database, and :class:`RocksKV`, dustbuster.core.mining.incremental's KV interface on
disk, surviving restarts.

Writes of one batch, and the caller's metadata (input offsets, changelog positions), go in one
``WriteBatch``: RocksDB applies it atomically, so a crash leaves either the whole batch or none.
The metadata (offsets, counters) also goes through a bounded write-through cache, since the worker
is its only writer; a known URL's record is cached decoded by its reader (core/mining/incremental.py).
"""

from __future__ import annotations

import logging
import shutil
from pathlib import Path
from typing import Any, Iterator

from rocksdict import BlockBasedOptions, Cache, Options, Rdict, WriteBatch

from dustbuster.core.errors import StateError

log = logging.getLogger(__name__)

CACHE_ENTRIES = 10_000  #: metadata values cached (a few per site)
#: the most files one partition store keeps open (RocksDB's default is no limit): a worker's file
#: descriptors are shared with the API's connections and the Kafka clients (agents/api.py)
MAX_OPEN_FILES = 256


def _options(write_buffer_mb: int, cache_mb: int = 64) -> Options:
    opts = Options(raw_mode=True)
    opts.create_if_missing(True)
    opts.set_allow_concurrent_memtable_write(False)  # one writer
    table = BlockBasedOptions()
    table.set_bloom_filter(10, False)
    table.set_block_cache(Cache(cache_mb * 1024 * 1024))
    table.set_cache_index_and_filter_blocks(True)
    opts.set_block_based_table_factory(table)
    opts.set_write_buffer_size(write_buffer_mb * 1024 * 1024)
    opts.set_max_open_files(MAX_OPEN_FILES)
    return opts


def plain_options(max_open_files: int = 256) -> Options:
    """Options of a small store of raw keys and values with default tables (the seen sets)."""
    opts = Options(raw_mode=True)
    opts.create_if_missing(True)
    opts.set_max_open_files(max_open_files)
    return opts


def open_rdict(path: Path, opts: Options, column_families: dict[str, Options] | None = None) -> Rdict:
    """The RocksDB at ``path``, created if missing; StateError when it cannot be opened."""
    path.parent.mkdir(parents=True, exist_ok=True)
    try:
        return Rdict(str(path), opts, column_families=column_families)
    except Exception as exc:  # rocksdict raises plain Exceptions (lock held, corruption)
        raise StateError(f"cannot open RocksDB at {path}: {exc}") from exc


def wipe(path: Path) -> None:
    """Delete a (closed) store's files: it is rebuilt from a changelog."""
    shutil.rmtree(path, ignore_errors=True)


class RocksKV:
    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self.db = open_rdict(self.path, _options(16))
        self.cache: dict[bytes, bytes | None] = {}

    def get(self, key: bytes) -> bytes | None:
        """The value of ``key``; metadata (``meta:`` keys) is cached, the URL records are cached
        decoded by their reader (core/mining/incremental.py), and a miss is never cached (a flood of new
        URLs would fill the cache with them)."""
        try:
            return self.cache[key]
        except KeyError:
            v = self.db.get(key)
            if v is not None and key.startswith(b"meta:"):
                if len(self.cache) >= CACHE_ENTRIES:
                    self.cache.clear()
                self.cache[key] = v
            return v

    def write(self, puts: dict[bytes, bytes | None], meta: dict[bytes, bytes]) -> None:
        """``puts`` and ``meta`` in one atomic ``WriteBatch``; the cached metadata changes only
        once RocksDB has taken the batch.  A write that fails (a full disk) raises StateError and
        leaves both the store and the cache as they were, so the applied offset still says the
        group is to be applied, and its retry applies it."""
        wb = WriteBatch(raw_mode=True)
        for d in (puts, meta):
            for k, v in d.items():
                if v is None:
                    wb.delete(k)
                else:
                    wb.put(k, v)
        try:
            self.db.write(wb)
        except Exception as exc:  # rocksdict raises plain Exceptions (IO error: no space left)
            raise StateError(f"cannot write to RocksDB at {self.path}: {exc}") from exc
        cache = self.cache
        for d in (puts, meta):
            for k, v in d.items():
                if k in cache:
                    cache[k] = v

    def _walk(self, prefix: bytes) -> Iterator[Any]:
        """The store's iterator, positioned on each key under ``prefix`` in turn."""
        it = self.db.iter()
        it.seek(prefix)
        while it.valid() and it.key().startswith(prefix):
            yield it
            it.next()

    def scan(self, prefix: bytes) -> Iterator[tuple[bytes, bytes]]:
        for it in self._walk(prefix):
            yield it.key(), it.value()

    def scan_keys(self, prefix: bytes) -> Iterator[bytes]:
        """The keys under ``prefix``, their values not read."""
        for it in self._walk(prefix):
            yield it.key()

    def compact(self) -> None:
        """Compact the whole store (benchmarks measure its size on disk after this)."""
        self.db.compact_range(None, None)

    def close(self) -> None:
        self.cache.clear()
        self.db.close()
