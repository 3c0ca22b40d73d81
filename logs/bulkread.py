"""A log file read a block at a time into a URL list: the bulk scanners of :mod:`dustbuster.logs.bulk`
for the lines they can prove, the reader's line loop (:func:`dustbuster.logs.reader.parse_each`)
for the others, each with its line number; the same URL list (URLs in first-seen order, hits, size
intervals, digests, sketches), the same counts by reason and the same rejects file as reading
line by line (tests/test_bulk.py).  Blocks are :data:`BLOCK_BYTES` of whole lines: the memory is
bounded by a block and the URL list, not by the file."""

from __future__ import annotations

import contextlib
import gc
import io
import itertools
import sys
from pathlib import Path
from typing import IO, Callable, Iterable, Iterator, cast

import numpy as np

from dustbuster.core.errors import MAX_LINE_CHARS
from dustbuster.core.strictjson import has_surrogate
from dustbuster.core.urls.urllist import URLInfo, URLList

from . import bulk
from .formats import FAST_PARSERS, PARSERS
from .lineloop import SNIFF_LINES, ReadStats, RejectSink, add_record, choose_format, open_lines, parse_each, read_setup
from .record import Context, Limits, LogRecord
from .sitecap import SiteCap

BLOCK_BYTES = 4 << 20  #: bytes of whole lines scanned at once


def read_urllist_bulk(sources: Iterable[str | Path], fmt: str = "auto", site: str | None = None,
                      scheme: str = "http", limits: Limits | None = None, stats: ReadStats | None = None,
                      rejects: RejectSink | None = None, on_bytes: Callable[[int], None] | None = None,
                      cap: SiteCap | None = None) -> URLList:
    """:func:`dustbuster.logs.reader.read_urllist`'s URL list, read in blocks (``cap``: the URLs
    taken per site, logs/sitecap.py)."""
    stats, rejects = read_setup(fmt, scheme, stats, rejects)
    ul = URLList()
    for src in sources:
        name, fh = open_lines(src)
        try:
            _read_one(ul, name, fh, fmt, Context(site, scheme, limits or Limits()), stats, rejects, on_bytes, cap)
        finally:
            if fh is not sys.stdin.buffer:
                fh.close()
    for url in [u for u in ul.listed if u in ul.infos]:  # the blocks write infos directly: a logged URL is
        del ul.listed[url]                                # no longer only listed (URLList.add does this)
    return ul


def _read_one(ul: URLList, name: str, fh: IO[bytes], fmt: str, ctx: Context, stats: ReadStats,
              rejects: RejectSink, on_bytes: Callable[[int], None] | None, cap: SiteCap | None = None) -> None:
    # not buffered: a raw binary stream
    buffered = io.BufferedReader(cast(io.RawIOBase, fh)) if not isinstance(fh, io.BufferedIOBase) else fh
    head = list(itertools.islice(buffered, SNIFF_LINES))
    chosen = choose_format(name, head, fmt, ctx, stats)

    def reject(lineno: int, reason: str, detail: str, line: str) -> None:
        rejects.write(name, lineno, reason, detail, line)

    fast = chosen is not None and PARSERS.get(chosen) is FAST_PARSERS.get(chosen)  # not reference_parsers()
    scanner = bulk.scanner_for(chosen, ctx) if fast else None
    if scanner is None:
        for rec in parse_each(itertools.chain(head, buffered), chosen, ctx, stats, reject, on_bytes=on_bytes):
            add_capped(ul, rec, cap)
        return
    assert chosen is not None  # a scanner is for a chosen format (scanner_for)
    cache: dict
    first, cache = 1, {}
    for block in blocks(head, buffered):
        if on_bytes:
            on_bytes(len(block))
        with _no_cyclic_gc():
            first += read_block(ul, block, first, scanner, chosen, ctx, stats, reject, cache, cap)


@contextlib.contextmanager
def _no_cyclic_gc() -> Iterator[None]:
    """The cyclic collector paused while a block's rows (tens of thousands of tuples, none in a
    cycle) are made and dropped: it would walk them repeatedly (~15 % of a block's time); reference
    counting frees them as before.  Restored on exit, as it was."""
    was = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was:
            gc.enable()


def blocks(head: list[bytes], fh: IO[bytes], size: int = BLOCK_BYTES) -> Iterator[bytes]:
    """The rest of a file after its ``head`` lines, in blocks of whole lines (the last one may
    lack its line end); a line longer than a block makes a longer block."""
    carry = b"".join(head)
    while True:
        more = fh.read(size)
        if not more:
            if carry:
                yield carry
            return
        data = carry + more
        cut = data.rfind(b"\n") + 1
        if cut == 0:
            carry = data
            continue
        yield data[:cut]
        carry = data[cut:]


def decoded(block: bytes, max_chars: int = MAX_LINE_CHARS) -> tuple[str, str]:
    """(text, guard): the block as text ending with a line end, and the scanners' guard when it
    holds bytes that are not UTF-8 (``surrogateescape``: lone surrogates) or a line over the cap."""
    guard = ""
    try:
        text = block.decode("utf-8")
    except UnicodeDecodeError:
        text, guard = block.decode("utf-8", "surrogateescape"), bulk.guard(max_chars)
    if not text.endswith("\n"):
        text += "\n"
    if not guard and len(block) > max_chars and _longest_line(block) > max_chars:
        guard = bulk.guard(max_chars)  # (in bytes: at least its characters)
    return text, guard


def _longest_line(block: bytes) -> int:
    """The longest line of a block in bytes (line end included)."""
    ends = np.flatnonzero(np.frombuffer(block, np.uint8) == 10)
    return int(np.diff(ends, prepend=-1, append=len(block)).max())


def read_block(ul: URLList, block: bytes, first: int, scanner: bulk.Scanner, chosen: str, ctx: Context,
               stats: ReadStats, reject: Callable, cache: dict, cap: SiteCap | None = None) -> int:
    """Add one block's lines (the first one numbered ``first``) to ``ul``; returns how many lines."""
    text, guard = decoded(block)
    s = bulk.scan(text, scanner, ctx, guard, cache)
    stats.lines += s.lines - len(s.fallback)
    items = [line.encode("utf-8", "surrogateescape") for _, line in s.fallback]  # the file's bytes again
    recs = line_loop(items, [first + pos for pos, _ in s.fallback], chosen, ctx, stats, reject)
    records, dropped = bulk.aggregate(ul, s, [(n - first, r) for n, r in recs], cap)
    stats.records += records
    stats.dropped_status += dropped
    for _, r in recs:
        if (r.digest or r.sketch) and r.status not in bulk.NO_BODY_STATUSES and r.url in ul.infos:  # (not left out)
            _evidence(ul.infos[r.url], r.digest, r.sketch)
    return s.lines


def add_capped(ul: URLList, rec: LogRecord, cap: SiteCap | None) -> None:
    """:func:`add_record`, a log URL new to the list only where ``cap`` admits it."""
    if cap is None or rec.listed or rec.url in ul.infos or cap.admit(rec.url):
        add_record(ul, rec)


def _evidence(info: URLInfo, digest: str | None, sketch: tuple[int, ...] | None) -> None:
    """A record's digest and sketch, as :meth:`URLInfo.observe` keeps them (its hit and size counted apart)."""
    if digest:
        info.digests = info.digests or set()
        info.digests.add(digest)
    if sketch:
        info.sketches = info.sketches or set()
        info.sketches.add(tuple(sketch))


def line_loop(items: list, numbers: list[int], chosen: str, ctx: Context, stats: ReadStats,
              reject: Callable, max_chars: int = MAX_LINE_CHARS) -> list[tuple[int, LogRecord]]:
    """The records of the lines the scanner left, each with its line number."""
    if not items:
        return []
    current = [0]

    def numbered() -> Iterator[int]:
        for k in numbers:
            current[0] = k
            yield k

    return [(current[0], rec) for rec in parse_each(items, chosen, ctx, stats, reject, max_chars, numbers=numbered())]


_DROPPED = ("",)  #: a batch row whose status is >= 400


def batch_records(lines: list, chosen: str, ctx: Context, stats: ReadStats, reject: Callable,
                  max_chars: int) -> list[tuple] | None:
    """A topic batch's records in line order, as the line loop gives them (``parse_lines``), the
    common formats scanned at once; None when the batch is not for the scanners (its format, an
    item that is not a string, a line end or CR inside an item: the line loop reads it)."""
    if PARSERS.get(chosen) is not FAST_PARSERS.get(chosen):
        return None
    scanner = bulk.scanner_for(chosen, ctx)
    if scanner is None or not all(map(str.__instancecheck__, lines)):
        return None
    text = "\n".join(lines) + "\n"
    if text.count("\n") != len(lines) or "\r" in text:
        return None  # a batch line keeps its CRs (the line loop strips only a file's line ends)
    too_long = bool(lines) and max(map(len, lines)) > max_chars
    s = bulk.scan(text, scanner, ctx, bulk.guard(max_chars) if too_long or has_surrogate(text) else "",
                  keep_rows=True)
    final = {k: _DROPPED if r[1] >= 400 else (r[0], r[1], None if r[2] < 0 else r[2], None, None)
             for k, r in s.records.items() if r is not None}
    dropped = sum(n for k, n in s.counts.items() if final[k] is _DROPPED)
    stats.lines += s.lines - len(s.fallback)
    stats.records += s.lines - len(s.fallback) - dropped
    stats.dropped_status += dropped
    out: list[tuple | None] = list(map(final.get, s.keys))
    items = [line for _, line in s.fallback]
    for n, rec in line_loop(items, [pos + 1 for pos, _ in s.fallback], chosen, ctx, stats, reject, max_chars):
        out[n - 1] = (rec.url, rec.status, rec.size, rec.digest, rec.sketch)
    return [r for r in out if r is not None and r is not _DROPPED]
