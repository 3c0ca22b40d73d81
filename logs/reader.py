"""Reading log files into URL lists (:func:`read_urllist`, a file at a time) and batches of a
topic's lines into records (:func:`parse_lines`), with every rejected line counted by reason: the
common formats a block at a time (:mod:`dustbuster.logs.bulkread`), the others through the line
loop (:mod:`dustbuster.logs.lineloop`), with the same result either way.

Nothing is lost silently: each line ends up as a record, a counted drop (status >= 400), a
counted skip (a well-formed line with no page: ``dns:`` URIs, ``OPTIONS *``, Heritrix failures)
or a counted reject (with its line number in the optional rejects file).
"""

from __future__ import annotations

import itertools
import logging
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Iterable

from dustbuster.core.errors import MAX_LINE_CHARS, ParseError
from dustbuster.core.strictjson import has_surrogate
from dustbuster.core.urls.urllist import URLList

from .bulkread import add_capped, batch_records, read_urllist_bulk
from .formats import PARSERS, header_of, sniff
from .lineloop import (SNIFF_LINES, ReadStats, RejectSink, compression, iter_records, open_lines,
                       parse_each, raw_lines, tsv_columns)
from .record import Context, Limits

log = logging.getLogger(__name__)

#: the reading API: this module's entry points, and the line loop's names a caller needs with them
__all__ = ["BatchResult", "ReadStats", "RejectSink", "compression", "iter_records", "open_lines", "parse_each",
           "parse_lines", "raw_lines", "read_urllist"]


def read_urllist(sources: Iterable[str | Path], fmt: str = "auto", site: str | None = None, scheme: str = "http",
                 bulk: bool = True, **kw) -> tuple[URLList, ReadStats]:
    """The URL list of the sources and what became of their lines.  ``bulk``: the common formats
    read a block at a time (:mod:`dustbuster.logs.bulkread`; the same URL list, counts and rejects
    as the line loop, which ``bulk=False`` uses).  ``cap``: the URLs taken per site
    (:class:`dustbuster.logs.sitecap.SiteCap`; none: every URL).  ``jobs``: processes reading a
    large file's ranges (:mod:`dustbuster.logs.parread`; the same result)."""
    stats = kw.pop("stats", None) or ReadStats()
    cap = kw.pop("cap", None)
    jobs = kw.pop("jobs", 1)
    if bulk and jobs > 1:
        from .parread import read_urllist_parallel

        ul = read_urllist_parallel(sources, jobs, fmt, site, scheme, stats=stats, cap=cap, **kw)
    elif bulk:
        ul = read_urllist_bulk(sources, fmt, site, scheme, stats=stats, cap=cap, **kw)
    else:
        ul = URLList()
        for rec in iter_records(sources, fmt, site, scheme, stats=stats, **kw):
            add_capped(ul, rec, cap)
    ul.note_errors(stats.error_urls)  # the line loop's (the bulk path notes its own in aggregate)
    log.info("read %s lines: %s records, %s unique URLs", stats.lines, stats.records, len(ul))
    return ul, stats


@dataclass
class BatchResult:
    records: list[tuple]
    rejects: list[tuple[str, str, str]]  # (reason, detail, line)
    counts: dict[str, int]
    fmt: str | None
    #: the URLs of a URL-list batch (format ``urls``: a crawler's frontier, the links of fetched
    #: pages): listed apart, never records (core/mining/incremental.py ``list_only``)
    listed: list[str] = field(default_factory=list)
    #: the URLs of the batch's lines of status >= 400 (§5.1 drops the lines; kept for the
    #: validator, core/validation/narrow.py; the line loop's only: ``bulk`` batches keep none)
    errors: list[str] = field(default_factory=list)


def _batch_format(lines: list, fmt: str, ctx: Context, max_line_bytes: int, header: str) -> str | None:
    """The format of a batch: ``fmt``, or sniffed from its first usable lines (``header``: a TSV
    header row sent apart); sets the TSV columns."""
    usable = (ln for ln in lines if isinstance(ln, str) and ln.strip() and len(ln) <= max_line_bytes
              and not has_surrogate(ln))
    texts = list(itertools.islice(usable, SNIFF_LINES))
    if header and header_of(header) is not None:
        texts = [header] + texts
    chosen: str | None = fmt
    if fmt == "auto" or fmt not in PARSERS:
        # the first SNIFF_LINES usable lines decide; when nothing matches them (a run of junk), the
        # next ones are tried, so junk at the head of a batch does not cost the good lines after it
        chosen = None
        sample = texts
        while sample:
            try:
                chosen = sniff(sample, ctx)
                break
            except ParseError:
                sample = list(itertools.islice(usable, SNIFF_LINES))
    tsv_columns(chosen, texts, ctx)
    return chosen


def parse_lines(lines: list[str], site: str, fmt: str = "auto", scheme: str = "http", limits: Limits | None = None,
                max_line_bytes: int = MAX_LINE_CHARS, header: str = "", bulk: bool = False) -> BatchResult:
    """Parse one batch of a site's lines (the streaming ingest): records for status < 400,
    every other line counted; rejects returned with their reason for the dead-letter topic.
    Raises nothing: whatever a line holds, it is a record, a skip or a reject.

    The counts are the per-partition counters (lines, records, dropped_status, skipped, rejected;
    ``listed`` too for a URL-list batch, whose URLs are no records): they have no ``blank``, so a
    blank line counts as skipped here.  ``bulk``: the common formats
    scanned at once (:func:`dustbuster.logs.bulkread.batch_records`; the same result; off by
    default: on batches of 500 lines it measured no faster, the per-batch sniff dominating)."""
    ctx = Context(site, scheme if scheme in ("http", "https") else "http", limits or Limits())
    rejects: list[tuple[str, str, str]] = []
    chosen = _batch_format(lines, fmt, ctx, max_line_bytes, header)
    stats = ReadStats()

    def reject(lineno: int, reason: str, detail: str, line: str) -> None:
        rejects.append((reason, detail, line))

    if chosen == "urls":  # a URL list is no log: its URLs are listed, never sizeless records (Figure 1)
        return _url_list_batch(lines, ctx, stats, reject, max_line_bytes, rejects)
    records = None
    if bulk and chosen is not None:
        records = batch_records(lines, chosen, ctx, stats, reject, max_line_bytes)
    if records is None:
        records = [(rec.url, rec.status, rec.size, rec.digest, rec.sketch)
                   for rec in parse_each(lines, chosen, ctx, stats, reject, max_line_chars=max_line_bytes)]
    counts = {"lines": stats.lines, "records": stats.records, "dropped_status": stats.dropped_status,
              "skipped": sum(stats.skipped.values()) + stats.blank, "rejected": sum(stats.rejected.values())}
    return BatchResult(records, rejects, counts, chosen, errors=list(stats.error_urls))


def _url_list_batch(lines: list[str], ctx: Context, stats: ReadStats, reject: Callable, max_line_bytes: int,
                    rejects: list) -> BatchResult:
    """A URL-list batch: its URLs listed, counted as ``listed`` (not records)."""
    listed = [rec.url for rec in parse_each(lines, "urls", ctx, stats, reject, max_line_chars=max_line_bytes)]
    counts = {"lines": stats.lines, "records": 0, "listed": len(listed), "dropped_status": 0,
              "skipped": sum(stats.skipped.values()) + stats.blank, "rejected": sum(stats.rejected.values())}
    return BatchResult([], rejects, counts, "urls", listed=listed)
