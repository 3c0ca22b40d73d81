"""A log file read by several processes: its byte ranges of whole lines, each read block by block
(:func:`dustbuster.logs.bulkread.read_block`) into a URL list of its own, merged here in file order
into the URL list the one-process read gives: URLs in first-seen order, hits summed, size
intervals widened, digests and sketches joined, the first error URLs, the same counts, the same
rejects file (line numbers offset by the ranges before), and the per-site cap applied at the
merge, in log order (logs/sitecap.py).  tests/test_mine_parallel.py checks the equality.

For a plain (uncompressed) file in a format the bulk scanners read with no header row (common,
combined, vhost), of at least two ranges; the others are read by one process.  At most ``jobs + 1``
ranges are read or waiting at once, so the memory is a few ranges' URL lists beside the merged one.
Beyond the papers (they say nothing of how a log is read).
"""

from __future__ import annotations

import itertools
import multiprocessing as mp
import os
from collections import deque
from concurrent.futures import Future, ProcessPoolExecutor
from pathlib import Path
from typing import IO, Callable, Iterable, cast

import numpy as np

from dustbuster.core.urls.urllist import MAX_ERROR_URLS, URLInfo, URLList

from . import bulk
from .bulkread import _no_cyclic_gc, _read_one, blocks, read_block
from .lineloop import SNIFF_LINES, ReadStats, RejectSink, choose_format, compression, read_setup
from .record import Context, Limits
from .sitecap import SiteCap

RANGE_BYTES = 32 << 20  #: bytes of whole lines a process reads at once
FORMATS = ("common", "combined", "vhost")  #: read in ranges (no header row, a bulk scanner)


def read_urllist_parallel(sources: Iterable[str | Path], jobs: int, fmt: str = "auto", site: str | None = None,
                          scheme: str = "http", limits: Limits | None = None, stats: ReadStats | None = None,
                          rejects: RejectSink | None = None, on_bytes: Callable[[int], None] | None = None,
                          cap: SiteCap | None = None, range_bytes: int | None = None) -> URLList:
    """:func:`dustbuster.logs.bulkread.read_urllist_bulk`'s URL list, each file's ranges read by
    ``jobs`` processes where it can (module docstring); ``range_bytes``: :data:`RANGE_BYTES`."""
    from .lineloop import open_lines

    range_bytes = range_bytes or RANGE_BYTES
    stats, rejects = read_setup(fmt, scheme, stats, rejects)
    ul = URLList()
    pool: ProcessPoolExecutor | None = None
    try:
        for src in sources:
            ctx = Context(site, scheme, limits or Limits())
            name = "<stdin>" if str(src) == "-" else str(src)
            plain = str(src) != "-" and compression(src) is None and os.path.getsize(src) >= 2 * range_bytes
            if plain:
                with open(src, "rb") as head_fh:
                    head = list(itertools.islice(head_fh, SNIFF_LINES))
                sniffed = ReadStats()
                chosen = choose_format(name, head, fmt, ctx, sniffed)
                if chosen in FORMATS and bulk.scanner_for(chosen, ctx) is not None:
                    stats.formats.update(sniffed.formats)
                    if pool is None:
                        pool = ProcessPoolExecutor(jobs, mp_context=mp.get_context("fork"))
                    _read_ranges(pool, jobs, ul, Path(src), name, chosen, ctx, stats, rejects, on_bytes, cap,
                                 range_bytes)
                    continue
            name, fh = open_lines(src)
            try:
                _read_one(ul, name, fh, fmt, ctx, stats, rejects, on_bytes, cap)
            finally:
                if str(src) != "-":  # stdin is never closed
                    fh.close()
    finally:
        if pool is not None:
            pool.shutdown(cancel_futures=True)
    for url in [u for u in ul.listed if u in ul.infos]:  # as read_urllist_bulk
        del ul.listed[url]
    return ul


def ranges(path: Path, size: int) -> list[tuple[int, int]]:
    """(start, end) byte offsets of about ``size`` bytes of whole lines each, covering the file."""
    total = path.stat().st_size
    cuts = [0]
    with open(path, "rb") as fh:
        while cuts[-1] + size < total:
            fh.seek(cuts[-1] + size)
            fh.readline()  # to the end of the line the cut falls in
            at = fh.tell()
            if at >= total:
                break
            cuts.append(at)
    cuts.append(total)
    return list(zip(cuts, cuts[1:]))


def _read_ranges(pool: ProcessPoolExecutor, jobs: int, ul: URLList, path: Path, name: str, chosen: str, ctx: Context,
                 stats: ReadStats, rejects: RejectSink, on_bytes: Callable[[int], None] | None,
                 cap: SiteCap | None, range_bytes: int) -> None:
    keep_rejects = rejects.fh is not None
    todo = deque(ranges(path, range_bytes))
    running: deque[tuple[int, Future]] = deque()
    first = 1  # the line number of the next range's first line
    while todo or running:
        while todo and len(running) < jobs + 1:
            start, end = todo.popleft()
            running.append((end - start, pool.submit(_read_range, str(path), start, end, chosen, ctx, keep_rejects)))
        nbytes, fut = running.popleft()
        part, part_stats, part_rejects, lines = fut.result()
        for lineno, reason, detail, line in part_rejects:
            rejects.write(name, first - 1 + lineno, reason, detail, line)
        _merge_stats(stats, part_stats)
        _merge_list(ul, part, cap)
        first += lines
        del part
        if on_bytes:
            on_bytes(nbytes)


def _read_range(path: str, start: int, end: int, chosen: str, ctx: Context, keep_rejects: bool
                ) -> tuple[tuple, ReadStats, list[tuple], int]:
    """One range's URL list (:func:`_columns`), counts, rejects (line numbers from 1 in the range)
    and lines."""
    ul, stats = URLList(), ReadStats()
    scanner = bulk.scanner_for(chosen, ctx)
    assert scanner is not None
    got: list[tuple] = []

    def reject(lineno: int, reason: str, detail: str, line: str) -> None:
        if keep_rejects:
            got.append((lineno, reason, detail, line))

    cache: dict = {}
    first = 1
    with open(path, "rb") as fh:
        fh.seek(start)
        for block in blocks([], cast(IO[bytes], _Range(fh, end - start))):
            with _no_cyclic_gc():
                first += read_block(ul, block, first, scanner, chosen, ctx, stats, reject, cache)
    return _columns(ul), stats, got, first - 1


def _columns(ul: URLList) -> tuple:
    """A URL list as columns, cheap to send: URLs, hits, size bounds (-1: none), the digests and
    sketches of the URLs that have them, the error URLs."""
    infos = list(ul.infos.values())
    hits = np.fromiter((i.hits for i in infos), np.int64, len(infos))
    lo = np.fromiter((-1 if i.lo is None else i.lo for i in infos), np.int64, len(infos))
    hi = np.fromiter((-1 if i.hi is None else i.hi for i in infos), np.int64, len(infos))
    extra = {k: (i.digests, i.sketches) for k, (u, i) in enumerate(ul.infos.items()) if i.digests or i.sketches}
    return list(ul.infos), hits, lo, hi, extra, list(ul.errors)


class _Range:
    """``read`` of the next ``left`` bytes of a file, then nothing."""

    def __init__(self, fh: IO[bytes], left: int) -> None:
        self.fh, self.left = fh, left

    def read(self, n: int = -1) -> bytes:
        n = self.left if n < 0 else min(n, self.left)
        data = self.fh.read(n) if n else b""
        self.left -= len(data)
        return data


def _merge_stats(stats: ReadStats, part: ReadStats) -> None:
    stats.lines += part.lines
    stats.blank += part.blank
    stats.records += part.records
    stats.dropped_status += part.dropped_status
    stats.skipped.update(part.skipped)
    stats.rejected.update(part.rejected)
    for url in part.error_urls:  # the line loop's, noted after the blocks' by read_urllist (bounded)
        if len(stats.error_urls) >= MAX_ERROR_URLS:
            break
        stats.error_urls[url] = None


def _merge_list(ul: URLList, cols: tuple, cap: SiteCap | None) -> None:
    """A later range's URL list (:func:`_columns`) into ``ul``: its new URLs in its order (those
    ``cap`` admits), the known ones' evidence joined, its error URLs after ``ul``'s (bounded)."""
    urls, hits, lo, hi, extra, errors = cols
    infos = ul.infos
    hits = hits.tolist()
    out: set[int] = set()
    if cap is not None and cap.max_urls:
        new = [k for k, url in enumerate(urls) if url not in infos]
        taken = cap.taken([urls[k] for k in new], [hits[k] for k in new])
        out = {k for k, ok in zip(new, taken) if not ok}
    for k, (url, h, a, b) in enumerate(zip(urls, hits, lo.tolist(), hi.tolist())):
        have = infos.get(url)
        if have is None:
            if k in out:
                continue
            have = infos[url] = URLInfo(h, None if a < 0 else a, None if b < 0 else b)
        else:
            have.hits += h
            if a >= 0:
                have.lo = a if have.lo is None or a < have.lo else have.lo
                have.hi = b if have.hi is None or b > have.hi else have.hi
        if k in extra:
            digests, sketches = extra[k]
            if digests:
                have.digests = (have.digests or set()) | digests
            if sketches:
                have.sketches = (have.sketches or set()) | sketches
    ul.note_errors(errors)
