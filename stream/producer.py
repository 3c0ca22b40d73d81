"""``dustbuster feed``: log lines into the raw topic, in batches, never losing one.

Lines are grouped per message (``--batch-lines``), and a message is cut early so that it stays
under ``max_message_bytes`` (default 1,000,000: the broker's default ``message.max.bytes`` is
1,048,588).  A line that cannot fit in a message even alone is rejected here, not sent: counted,
logged, and written to the rejects file when one is given; the lines before and after it are
delivered (issue 16).  The producer is idempotent with acks=all; every send is awaited before the
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
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import AsyncIterator, Callable

from aiokafka import AIOKafkaProducer
from aiokafka.errors import KafkaError

from dustbuster.core.errors import StreamError

from dustbuster.logs.formats import tsv_header
from dustbuster.logs.reader import RejectSink
from .records import RawBatch, encode

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


async def _lines_follow(path: Path, poll: float, stop: asyncio.Event) -> AsyncIterator[str]:
    fh = open(path, "rb")
    ino = os.fstat(fh.fileno()).st_ino
    buf = b""
    while not stop.is_set():
        chunk = fh.readline()
        if chunk:
            buf += chunk
            if buf.endswith(b"\n"):
                yield buf.decode("utf-8", "replace").rstrip("\r\n")
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
                        yield buf.decode("utf-8", "replace").rstrip("\r\n")
                        buf = b""
            fh.close()
            fh = open(path, "rb")
            ino = os.fstat(fh.fileno()).st_ino
    fh.close()


async def _lines_plain(path: str) -> AsyncIterator[str]:
    fh = sys.stdin.buffer if path == "-" else open(path, "rb")
    try:
        for raw in fh:
            yield raw.decode("utf-8", "replace").rstrip("\r\n")
    finally:
        if fh is not sys.stdin.buffer:
            fh.close()


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
    rejects: RejectSink | None = None,
) -> FeedStats:
    if path != "-" and not Path(path).exists():
        raise StreamError(f"no such log file: {path}")
    stop = stop or asyncio.Event()
    rejects = rejects or RejectSink(None)
    producer = AIOKafkaProducer(bootstrap_servers=bootstrap, acks="all", enable_idempotence=True,
                                linger_ms=5, max_request_size=max(8 * 1024 * 1024, 2 * max_message_bytes),
                                request_timeout_ms=30000)
    try:
        await producer.start()
    except KafkaError as exc:
        await producer.stop()
        raise StreamError(f"cannot reach Kafka at {bootstrap}: {exc}") from exc
    stats = FeedStats()
    t0 = time.perf_counter()
    batch: list[str] = []
    batch_bytes = 0  # the JSON size of the batch's lines, separators included
    last_flush = time.monotonic()
    header = ""
    source_name = "<stdin>" if path == "-" else str(path)

    def envelope() -> int:
        """The message's size without its lines (seq at its widest)."""
        return len(encode(RawBatch(site=site, lines=[], format=fmt, scheme=scheme, source=str(path),
                                   seq=10**15, header=header)))

    base = envelope()

    async def send(lines: list[str]) -> None:
        value = encode(RawBatch(site=site, lines=lines, format=fmt, scheme=scheme, source=str(path), seq=stats.batches,
                                header=header))
        try:
            await producer.send_and_wait(topic, value, key=site.encode())
        except KafkaError as exc:
            raise StreamError(f"the broker rejected a batch after retries ({exc}); "
                              f"{stats.lines} lines were delivered before it") from exc
        stats.lines += len(lines)
        stats.batches += 1
        stats.bytes += len(value)
        if on_progress:
            on_progress(len(lines))

    try:
        source = _lines_follow(Path(path), 0.2, stop) if follow else _lines_plain(path)
        lineno = 0
        async for line in source:
            lineno += 1
            if stats.lines == 0 and not batch and not header and fmt in ("auto", "tsv") and tsv_header(line):
                header = line  # a TSV header row travels with every batch (the workers need it)
                base = envelope()
            size = len(json.dumps(line)) + 1  # as the record encodes it (ASCII-escaped), plus a comma
            if base + size > max_message_bytes:
                stats.rejected += 1
                log.warning("%s:%s: a line of %s bytes does not fit in a message of at most %s bytes: not sent",
                            source_name, lineno, size - 1, max_message_bytes)
                rejects.write(source_name, lineno, "oversized_message", f"{size - 1} bytes > {max_message_bytes}", line)
                continue
            if batch and base + batch_bytes + size > max_message_bytes:
                await send(batch)
                batch, batch_bytes, last_flush = [], 0, time.monotonic()
            batch.append(line)
            batch_bytes += size
            if len(batch) >= batch_lines or (follow and time.monotonic() - last_flush > flush_s):
                await send(batch)
                batch, batch_bytes, last_flush = [], 0, time.monotonic()
        if batch:
            await send(batch)
    finally:
        await producer.stop()
        stats.seconds = time.perf_counter() - t0
        if stats.rejected:
            log.warning("%s lines of %s were too big for a message and not sent%s", stats.rejected, source_name,
                        "" if rejects.fh is None else " (written to the rejects file)")
    return stats
