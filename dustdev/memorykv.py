"""A dict with the streaming engine's KV interface (dustbuster.core.mining.kv.KV): the tests' store,
and the reference for dustbuster.state.rocks.RocksKV, the RocksDB one."""

from __future__ import annotations

from typing import Iterator


class MemoryKV:
    """A dict with KV's interface: ``write`` applies puts (None deletes) and metadata at once."""

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
