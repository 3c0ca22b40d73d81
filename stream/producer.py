"""``dustbuster feed``: log lines into the raw topic, in batches, never losing one.

Lines are grouped per message (``--batch-lines``), and a message is cut early so that it stays
under ``max_message_bytes`` (default 1,000,000: the broker's default ``message.max.bytes`` is
1,048,588).  A line that cannot fit in a message even alone is rejected here, not sent: counted,
logged, and written to the rejects file when one is given; the lines before and after it are
delivered.  The producer is idempotent with acks=all; every send is awaited before the
next batch is counted as delivered.  A batch the broker still rejects after the client's retries
(a topic configured with a smaller ``max.message.bytes``, say) ends the run with a non-zero status
and the number of lines delivered.
With ``--follow`` the file is read like ``tail -F``: new lines as they are written, and the file
is reopened when it is rotated (new inode) or truncated.
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
import time
from dataclasses import dataclass
from pathlib import Path
from typing import AsyncIterator, Callable, Iterable, Protocol

from aiokafka import AIOKafkaProducer
from aiokafka.errors import KafkaError

from dustbuster.core.errors import MAX_LINE_CHARS, StreamError

from .records import RawBatch, encode, wire_line

log = logging.getLogger(__name__)

#: the most bytes of one raw-topic message value (the broker's default message.max.bytes is
#: 1,048,588 for the whole record batch; the rest is the batch's and record's own overhead)
DEFAULT_MAX_MESSAGE_BYTES = 1_000_000


@dataclass
class FeedStats:
    lines: int = 0  #: lines delivered
    batches: int = 0
    bytes: int = 0
    seconds: float = 0.0
    rejected: int = 0  #: lines not sent: too big for a message even alone

    def add(self, other: "FeedStats") -> None:
        """Adds the counts and seconds of ``other`` (a run over several files)."""
        for f in ("lines", "batches", "bytes", "seconds", "rejected"):
            setattr(self, f, getattr(self, f) + getattr(other, f))


class RejectWriter(Protocol):
    """Where rejected lines go (``dustbuster.logs.reader.RejectSink`` is one)."""

    def write(self, source: str, lineno: int, reason: str, detail: str, line: str) -> None: ...


async def _lines_follow(path: Path, poll: float, stop: asyncio.Event) -> AsyncIterator[bytes]:
    fh = open(path, "rb")
    ino = os.fstat(fh.fileno()).st_ino
    buf = b""
    while not stop.is_set():
        chunk = fh.readline()
        if chunk:
            buf += chunk
            if buf.endswith(b"\n"):
                yield buf
                buf = b""
            continue
        await asyncio.sleep(poll)
        try:
            st = os.stat(path)
        except FileNotFoundError:
            continue  # rotated away; wait for the new file
        if st.st_ino != ino or st.st_size < fh.tell():
            if st.st_ino != ino:  # rotated: what was written to the old file before the switch
                for rest in fh:
                    buf += rest
                    if buf.endswith(b"\n"):
                        yield buf
                        buf = b""
            fh.close()
            fh = open(path, "rb")
            ino = os.fstat(fh.fileno()).st_ino
    fh.close()


async def _lines_of(lines: Iterable[bytes]) -> AsyncIterator[bytes]:
    for raw in lines:
        yield raw


class _Batcher:
    """The lines of one file on their way to the raw topic: batches of at most ``batch_lines``
    lines cut to fit ``max_message_bytes``, each sent and awaited before it counts as delivered.
    ``flush_s`` (when following a file): a batch older than this is sent with its next line."""

    def __init__(self, producer: AIOKafkaProducer, topic: str, fields: dict, batch_lines: int,
                 max_message_bytes: int, flush_s: float | None, on_progress: Callable[[int], None] | None) -> None:
        self.producer, self.topic = producer, topic
        self.fields = dict(fields, header="")  #: the RawBatch fields but lines and seq
        self.batch_lines, self.max_message_bytes, self.flush_s = batch_lines, max_message_bytes, flush_s
        self.on_progress = on_progress
        self.stats = FeedStats()
        self.lines: list[str | dict] = []
        self.size = 0  #: the JSON size of the batch's lines, separators included
        self.last_flush = time.monotonic()
        self.base = self._envelope()

    def _envelope(self) -> int:
        """The message's size without its lines (seq at its widest)."""
        return len(encode(RawBatch(lines=[], seq=10**15, **self.fields)))

    def set_header(self, line: str) -> None:
        """A TSV header row: it travels with every batch (the workers need it)."""
        self.fields["header"] = line
        self.base = self._envelope()

    def fits_alone(self, size: int) -> bool:
        return self.base + size <= self.max_message_bytes

    async def add(self, line: str | dict, size: int) -> None:
        """Adds a line of JSON size ``size``, sending the batch before it when the line would not
        fit, and after it when the batch is full or old."""
        if self.lines and self.base + self.size + size > self.max_message_bytes:
            await self.flush()
        self.lines.append(line)
        self.size += size
        if len(self.lines) >= self.batch_lines or (
                self.flush_s is not None and time.monotonic() - self.last_flush > self.flush_s):
            await self.flush()

    async def flush(self) -> None:
        """Sends the lines in hand, if any, and waits for the broker's acknowledgement."""
        if not self.lines:
            return
        lines = self.lines
        value = encode(RawBatch(lines=lines, seq=self.stats.batches, **self.fields))
        try:
            await self.producer.send_and_wait(self.topic, value, key=self.fields["site"].encode())
        except KafkaError as exc:
            raise StreamError(f"the broker rejected a batch after retries ({exc}); "
                              f"{self.stats.lines} lines were delivered before it") from exc
        self.stats.lines += len(lines)
        self.stats.batches += 1
        self.stats.bytes += len(value)
        self.lines, self.size, self.last_flush = [], 0, time.monotonic()
        if self.on_progress:
            self.on_progress(len(lines))


async def _start_producer(bootstrap: str, max_message_bytes: int) -> AIOKafkaProducer:
    producer = AIOKafkaProducer(bootstrap_servers=bootstrap, acks="all", enable_idempotence=True,
                                linger_ms=5, max_request_size=max(8 * 1024 * 1024, 2 * max_message_bytes),
                                request_timeout_ms=30000)
    try:
        await producer.start()
    except KafkaError as exc:
        await producer.stop()
        raise StreamError(f"cannot reach Kafka at {bootstrap}: {exc}") from exc
    return producer


async def _send_lines(b: _Batcher, source: AsyncIterator[bytes], source_name: str, max_line_chars: int,
                      is_header: Callable[[str], object] | None, rejects: RejectWriter | None) -> None:
    """Every line of ``source`` into batches, as :func:`~dustbuster.stream.records.wire_line` makes
    it; a line too big for a message even alone is rejected."""
    lineno = 0
    async for raw in source:
        lineno += 1
        line = wire_line(raw.rstrip(b"\r\n"), max_line_chars)
        if (is_header is not None and b.stats.lines == 0 and not b.lines and not b.fields["header"]
                and isinstance(line, str) and is_header(line)):
            b.set_header(line)
        size = len(json.dumps(line)) + 1  # as the record encodes it (ASCII-escaped), plus a comma
        if not b.fits_alone(size):
            b.stats.rejected += 1
            log.warning("%s:%s: a line of %s bytes does not fit in a message of at most %s bytes: not sent",
                        source_name, lineno, size - 1, b.max_message_bytes)
            if rejects is not None:
                rejects.write(source_name, lineno, "oversized_message", f"{size - 1} bytes > {b.max_message_bytes}",
                              raw.decode("utf-8", "replace").rstrip("\r\n"))
            continue
        await b.add(line, size)
    await b.flush()


async def feed(
    bootstrap: str,
    topic: str,
    path: str,
    site: str,
    fmt: str = "auto",
    scheme: str = "http",
    batch_lines: int = 500,
    follow: bool = False,
    flush_s: float = 1.0,
    on_progress: Callable[[int], None] | None = None,
    stop: asyncio.Event | None = None,
    max_message_bytes: int = DEFAULT_MAX_MESSAGE_BYTES,
    rejects: RejectWriter | None = None,
    is_header: Callable[[str], object] | None = None,
    lines: Iterable[bytes] | None = None,
    max_line_chars: int = MAX_LINE_CHARS,
) -> FeedStats:
    """Sends the lines of ``path`` to ``topic``, keyed by ``site``: ``lines``, the file's raw lines
    as bytes (``dustbuster.logs.reader.raw_lines``: decompressed, stdin for ``-``), or with
    ``follow`` the plain file tailed.  Each line travels as
    :func:`~dustbuster.stream.records.wire_line` makes it (bytes that are not UTF-8 as they are,
    a line over ``max_line_chars`` cut).  ``is_header`` tells a header row of ``fmt`` (the log
    reader's ``dustbuster.logs.formats.header_check(fmt)``: None for a format without one; the first
    line, when it says true, travels with every batch); ``rejects`` gets each line too
    big for a message."""
    if follow and (path == "-" or not Path(path).exists()):
        raise StreamError(f"no such log file: {path}")
    if not follow and lines is None:
        raise StreamError("feed: no lines to send (pass lines, or follow a file)")
    stop = stop or asyncio.Event()
    producer = await _start_producer(bootstrap, max_message_bytes)
    b = _Batcher(producer, topic, {"site": site, "format": fmt, "scheme": scheme, "source": str(path)}, batch_lines,
                 max_message_bytes, flush_s if follow else None, on_progress)
    source_name = "<stdin>" if path == "-" else str(path)
    t0 = time.perf_counter()
    try:
        source = _lines_follow(Path(path), 0.2, stop) if follow else _lines_of(lines or ())
        await _send_lines(b, source, source_name, max_line_chars, is_header, rejects)
    finally:
        await producer.stop()
        b.stats.seconds = time.perf_counter() - t0
        if b.stats.rejected:
            log.warning("%s lines of %s were too big for a message and not sent%s", b.stats.rejected, source_name,
                        "" if rejects is None else " (written to the rejects file)")
    return b.stats
