"""The key-value store the streaming engine keeps its state in: the :class:`KV` interface.  Its
implementation is dustbuster.state.rocks.RocksKV (RocksDB); the tests use a dict behind it
(dustdev/memorykv.py).  Keys and values are bytes; ``write`` applies a batch of puts (None
deletes) with caller metadata atomically.  Beyond the papers (they mine a static log)."""

from __future__ import annotations

from typing import Iterator, Protocol


class KV(Protocol):
    def get(self, key: bytes) -> bytes | None: ...
    def write(self, puts: dict[bytes, bytes | None], meta: dict[bytes, bytes]) -> None: ...
    def scan(self, prefix: bytes) -> Iterator[tuple[bytes, bytes]]: ...
