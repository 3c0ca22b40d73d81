"""``dustbuster feed``: log lines into the raw topic, in batches, never losing one.

Lines are grouped per message (``--batch-lines``); the producer is idempotent with acks=all; every
send is awaited before the next batch is counted as delivered.  A batch the broker still rejects
after the client's retries ends the run with a non-zero status and the number of lines delivered.
With ``--follow`` the file is read like ``tail -F``: new lines as they are written, and the file
is reopened when it is rotated (new inode) or truncated.
"""

from __future__ import annotations

import asyncio
import logging
import os
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import AsyncIterator, Callable

from aiokafka import AIOKafkaProducer
from aiokafka.errors import KafkaError

from dust.errors import StreamError

from .logformats import tsv_header
from .records import RawBatch, encode

log = logging.getLogger(__name__)


@dataclass
class FeedStats:
    lines: int = 0
    batches: int = 0
    bytes: int = 0
    seconds: float = 0.0


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
) -> FeedStats:
    if path != "-" and not Path(path).exists():
        raise StreamError(f"no such log file: {path}")
    stop = stop or asyncio.Event()
    producer = AIOKafkaProducer(bootstrap_servers=bootstrap, acks="all", enable_idempotence=True,
                                linger_ms=5, max_request_size=8 * 1024 * 1024, request_timeout_ms=30000)
    try:
        await producer.start()
    except KafkaError as exc:
        await producer.stop()
        raise StreamError(f"cannot reach Kafka at {bootstrap}: {exc}") from exc
    stats = FeedStats()
    t0 = time.perf_counter()
    batch: list[str] = []
    last_flush = time.monotonic()

    header = ""

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
        async for line in source:
            if stats.lines == 0 and not batch and not header and fmt in ("auto", "tsv") and tsv_header(line):
                header = line  # a TSV header row travels with every batch (the workers need it)
            batch.append(line)
            if len(batch) >= batch_lines or (follow and time.monotonic() - last_flush > flush_s):
                await send(batch)
                batch, last_flush = [], time.monotonic()
        if batch:
            await send(batch)
    finally:
        await producer.stop()
        stats.seconds = time.perf_counter() - t0
    return stats
