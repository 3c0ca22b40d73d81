"""Raw messages decoded and parsed in processes of their own (``DUST_PARSE_PROCESSES``), so one
worker process uses more than one core: the event loop's thread keeps the staging, the changelog
and the commits, in offset order as before; only the pure part (``decode_raw`` + ``parse_lines``, a
function of the message's bytes and the settings) moves.  Exactly-once is untouched: what a group
stages is the same, only computed elsewhere (tests/test_parsepool.py).

Processes are started with ``spawn`` (a worker has threads: the state thread, RocksDB's, Kafka's),
on first use; a message's result crosses back as plain tuples.  0 processes: parsed inline, as
before.  Beyond the papers.
"""

from __future__ import annotations

import asyncio
import logging
import multiprocessing
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass

from dustbuster.core.errors import ERROR_DETAIL_CHARS, ParseError
from dustbuster.logs.reader import parse_lines
from dustbuster.stream.records import decode_raw

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Parsed:
    """One message parsed: its site, records, rejects (reason, detail, line), counts and lines; or
    ``error`` (reason, detail, whether a ParseError) for a message that does not decode."""

    site: str | None = None
    records: list | None = None
    rejects: list | None = None
    counts: dict | None = None
    lines: int = 0
    error: tuple[str, str, bool] | None = None
    listed: list | None = None  #: a URL-list batch's URLs (BatchResult.listed)
    errors: list | None = None  #: the URLs of lines of status >= 400 (BatchResult.errors)


def parse_message(value: bytes, max_lines: int, max_line_bytes: int) -> Parsed:
    """A raw message decoded and parsed, as the ingest agent does it inline; never raises."""
    try:
        batch = decode_raw(value, max_lines, max_line_bytes)
        res = parse_lines(batch.lines, batch.site, batch.format, batch.scheme, max_line_bytes=max_line_bytes,
                          header=batch.header)
    except ParseError as exc:
        return Parsed(error=(exc.reason, exc.detail, True))
    except Exception as exc:  # noqa: BLE001 - a decoder bug: the message's reject, never a dead pool
        return Parsed(error=("decoder_error", f"{type(exc).__name__}: {str(exc)[:ERROR_DETAIL_CHARS]}", False))
    return Parsed(batch.site, res.records, res.rejects, res.counts, len(batch.lines), listed=res.listed, errors=res.errors)


def _parse_many(values: list[bytes], max_lines: int, max_line_bytes: int) -> list[Parsed]:
    return [parse_message(v, max_lines, max_line_bytes) for v in values]


class ParsePool:
    """``processes`` parser processes (0: none, parse inline)."""

    def __init__(self, processes: int, max_lines: int, max_line_bytes: int) -> None:
        self.processes = processes
        self.limits = (max_lines, max_line_bytes)
        self._pool: ProcessPoolExecutor | None = None

    async def parse(self, values: list[bytes]) -> list[Parsed]:
        """The messages parsed, in order: split into one slice per process, parsed at once."""
        if not self.processes or len(values) < 2:
            return _parse_many(values, *self.limits)
        if self._pool is None:
            self._pool = ProcessPoolExecutor(self.processes, mp_context=multiprocessing.get_context("spawn"))
            log.info("parsing raw messages in %s parser process%s (DUST_PARSE_PROCESSES)", self.processes,
                     "" if self.processes == 1 else "es")
        n = -(-len(values) // self.processes)
        loop, pool = asyncio.get_running_loop(), self._pool
        try:
            parts = await asyncio.gather(*(loop.run_in_executor(pool, _parse_many, values[i:i + n], *self.limits)
                                           for i in range(0, len(values), n)))
        except BrokenProcessPool:
            log.error("a parser process died; the pool is started again on the next try")
            if self._pool is pool:  # not one a later call started meanwhile (groups are parsed ahead)
                await self.stop()
            raise
        return [p for part in parts for p in part]

    async def stop(self) -> None:
        if self._pool is not None:
            self._pool.shutdown(wait=False, cancel_futures=True)
            self._pool = None
