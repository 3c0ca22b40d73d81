"""Compressed record batches decompressed with a byte cap (without it, one gzip record
of 20.6 MB unpacked blocked a worker's event loop for 7.6 s and took its memory from 80 to 1,060 MB).

aiokafka decompresses a fetched batch whole (``gzip_decode`` and the like, in its record classes)
before a consumer sees any value, so a size check on the values comes too late: a 1 MB batch of
zeros unpacks to 1 GB.  Inside :func:`bounded` — a context that a consumer's task enters around
its ``getmany`` — the codec functions aiokafka's record classes call stop at ``limit`` bytes and
raise :class:`BatchTooLarge` instead (gzip with zlib's ``max_length``; zstd through a bounded
stream reader when the ``zstandard`` package is there; lz4 and snappy are not installed, so
aiokafka refuses those batches itself with ``UnsupportedCodecError``).  Outside the context the
original functions run unchanged, so Faust's own consumers behave exactly as before; the caller
(:class:`dustbuster.stream.rulesview.TopicFollower`) skips a batch that raises, counted.

This replaces module attributes of aiokafka (its codec names in ``aiokafka.record`` and its C
twin), a library's internals: tests/test_bounded_codec.py checks on the real broker that the cap
holds, so an aiokafka release that moves them is noticed.
"""

from __future__ import annotations

import contextlib
import contextvars
import io
import logging
import zlib
from typing import Any, Callable, Iterator

from dustbuster.core.errors import StreamError

log = logging.getLogger(__name__)

_LIMIT: contextvars.ContextVar[int | None] = contextvars.ContextVar("dust_decompress_limit", default=None)
#: aiokafka's modules that hold the codec names the record classes call
_MODULES = ("aiokafka.record.default_records", "aiokafka.record.legacy_records",
            "aiokafka.record._crecords.default_records", "aiokafka.record._crecords.legacy_records")
_installed = False


class BatchTooLarge(StreamError):
    """A compressed batch that would unpack to more than the consumer's cap."""

    retriable = False
    reason = "batch_too_large"


def gunzip_bounded(payload: bytes, limit: int) -> bytes:
    """``payload`` (one or more gzip members) unpacked, at most ``limit`` bytes, else BatchTooLarge."""
    data, out = bytes(payload), bytearray()
    while data:
        d = zlib.decompressobj(16 + zlib.MAX_WBITS)
        out += d.decompress(data, limit + 1 - len(out))
        if len(out) > limit or d.unconsumed_tail:
            raise BatchTooLarge(f"a gzip batch of {len(payload)} bytes unpacks to more than {limit} bytes")
        out += d.flush()
        data = d.unused_data
    if len(out) > limit:
        raise BatchTooLarge(f"a gzip batch of {len(payload)} bytes unpacks to more than {limit} bytes")
    return bytes(out)


def unzstd_bounded(payload: bytes, limit: int) -> bytes:
    import zstandard

    with zstandard.ZstdDecompressor().stream_reader(io.BytesIO(bytes(payload)), read_across_frames=True) as r:
        out = r.read(limit + 1)
    if len(out) > limit:
        raise BatchTooLarge(f"a zstd batch of {len(payload)} bytes unpacks to more than {limit} bytes")
    return out


def _wrap(original: Callable[[bytes], bytes], bounded_fn: Callable[[bytes, int], bytes]) -> Callable[[bytes], bytes]:
    def decode(payload: bytes) -> bytes:
        limit = _LIMIT.get()
        return original(payload) if limit is None else bounded_fn(payload, limit)

    decode.__wrapped__ = original  # type: ignore[attr-defined]
    return decode


def install() -> None:
    """Put the bounded codecs in aiokafka's record modules (once per process)."""
    global _installed
    if _installed:
        return
    import importlib

    for name in _MODULES:
        try:
            mod: Any = importlib.import_module(name)  # aiokafka's record modules: no stubs, attributes set below
        except ImportError:
            continue
        if hasattr(mod, "gzip_decode"):
            mod.gzip_decode = _wrap(getattr(mod.gzip_decode, "__wrapped__", mod.gzip_decode), gunzip_bounded)
        if hasattr(mod, "zstd_decode"):
            mod.zstd_decode = _wrap(getattr(mod.zstd_decode, "__wrapped__", mod.zstd_decode), unzstd_bounded)
    _installed = True


@contextlib.contextmanager
def bounded(limit: int) -> Iterator[None]:
    """Within this context (this task), a batch unpacks to at most ``limit`` bytes."""
    install()
    token = _LIMIT.set(limit)
    try:
        yield
    finally:
        _LIMIT.reset(token)
