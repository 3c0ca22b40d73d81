"""The key-value store the streaming engine keeps its state in: the :class:`KV` interface, and
:class:`MemoryKV`, a dict behind it (tests; the reference for dustbuster.state.rocks.RocksKV, the
RocksDB one).  Keys and values are bytes; ``write`` applies a batch of puts (None deletes) with
caller metadata atomically."""

from __future__ import annotations

from typing import Iterator, Protocol


class KV(Protocol):
    def get(self, key: bytes) -> bytes | None: ...
    def write(self, puts: dict[bytes, bytes | None], meta: dict[bytes, bytes]) -> None: ...
    def scan(self, prefix: bytes) -> Iterator[tuple[bytes, bytes]]: ...


class MemoryKV:
    """A dict with KV's interface (tests, and the reference for dustbuster.state.rocks.RocksKV)."""

    def __init__(self) -> None:
        self.d: dict[bytes, bytes] = {}

    def get(self, key: bytes) -> bytes | None:
        return self.d.get(key)

    def write(self, puts: dict[bytes, bytes | None], meta: dict[bytes, bytes]) -> None:
        for k, v in list(puts.items()) + list(meta.items()):
            if v is None:
                self.d.pop(k, None)
            else:
                self.d[k] = v

    def scan(self, prefix: bytes) -> Iterator[tuple[bytes, bytes]]:
        for k in sorted(self.d):
            if k.startswith(prefix):
                yield k, self.d[k]
