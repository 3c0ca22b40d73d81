"""The line loop: log files opened (compressed or not), their format chosen from the first lines,
and each line parsed into a record, a counted drop, skip or reject — what every reader of
:mod:`dustbuster.logs.reader` and :mod:`dustbuster.logs.bulkread` falls back on, line by line.

Nothing is lost silently: each line ends up as a record, a counted drop (status >= 400), a
counted skip (a well-formed line with no page: ``dns:`` URIs, ``OPTIONS *``, Heritrix failures)
or a counted reject (with its line number in the optional rejects file).
"""

from __future__ import annotations

import bz2
import gzip
import io
import itertools
import json
import logging
import sys
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Callable, Iterable, Iterator, cast

from dustbuster.core.errors import ERROR_DETAIL_CHARS, MAX_LINE_CHARS, REJECT_EXCERPT_CHARS, ConfigError, ParseError
from dustbuster.core.strictjson import has_surrogate
from dustbuster.core.urls.urllist import MAX_ERROR_URLS, URLList

from .formats import FORMATS, HOSTLESS, PARSERS, is_header_line, set_columns, sniff
from .record import Context, Limits, LogRecord, Skip

log = logging.getLogger(__name__)
SNIFF_LINES = 50


def parser_failure(parse: Callable, exc: Exception) -> ParseError:
    """The ``parser_error`` reject for a parser's exception other than Skip/ParseError (logged)."""
    log.warning("parser %s failed on a line (%s: %s); rejected", getattr(parse, "__name__", parse),
                type(exc).__name__, exc)
    return ParseError("parser_error", f"{type(exc).__name__}: {str(exc)[:ERROR_DETAIL_CHARS]}")


@dataclass
class ReadStats:
    """What became of every line read: ``lines = records + dropped_status + skipped + rejected +
    blank`` (skipped and rejected by reason).  A blank line is empty or only whitespace."""

    lines: int = 0
    blank: int = 0
    records: int = 0
    dropped_status: int = 0
    skipped: Counter = field(default_factory=Counter)
    rejected: Counter = field(default_factory=Counter)
    formats: dict[str, str] = field(default_factory=dict)
    error_urls: dict[str, None] = field(default_factory=dict, compare=False)  #: URLs dropped for status >= 400 (bounded)

    def drop_status(self, url: str) -> None:
        """A record of status >= 400 (§5.1 drops it): counted, its URL kept (the first MAX_ERROR_URLS)."""
        self.dropped_status += 1
        if len(self.error_urls) < MAX_ERROR_URLS:
            self.error_urls[url] = None

    def to_dict(self) -> dict:
        return {
            "lines": self.lines,
            "blank": self.blank,
            "records": self.records,
            "dropped_status": self.dropped_status,
            "skipped": dict(sorted(self.skipped.items())),
            "rejected": dict(sorted(self.rejected.items())),
            "rejected_total": sum(self.rejected.values()),
            "formats": self.formats,
        }


class RejectSink:
    """Optional file of rejected lines: ``source:line<TAB>reason<TAB>detail<TAB>line``."""

    def __init__(self, fh: IO[str] | None) -> None:
        self.fh = fh

    def write(self, source: str, lineno: int, reason: str, detail: str, line: str) -> None:
        if self.fh is not None:
            safe = line.replace("\t", "\\t").replace("\n", "")[:4096]
            self.fh.write(f"{source}:{lineno}\t{reason}\t{detail}\t{safe}\n")


#: the first bytes of the compressed files a log may be (read by :func:`open_lines`)
COMPRESSED = {b"\x1f\x8b": "gzip", b"BZh": "bz2", b"\x28\xb5\x2f\xfd": "zstd"}  # bz2: then a digit


def compression(path: str | Path) -> str | None:
    """``gzip``, ``bz2`` or ``zstd`` when the first bytes of the log (``-``: stdin, peeked) say so, else None."""
    if str(path) == "-":
        head = cast(io.BufferedReader, sys.stdin.buffer).peek(4)[:4]  # stdin's buffer is a BufferedReader
    else:
        p = Path(path)
        if not p.exists():
            raise ConfigError(f"no such log file: {p}")
        with open(p, "rb") as fh:
            head = fh.read(4)
    kind = next((k for magic, k in COMPRESSED.items() if head.startswith(magic)), None)
    return None if kind == "bz2" and not head[3:4].isdigit() else kind


def open_lines(path: str | Path) -> tuple[str, IO[bytes]]:
    """A log (``-``: stdin) to read its lines as bytes: its name and a binary file, decompressed
    when its first bytes say gzip or bzip2, whatever its name; zstd is refused with a clear error
    (the standard library cannot read it).  ``dustbuster mine`` and ``dustbuster feed`` read here."""
    kind = compression(path)
    name = "<stdin>" if str(path) == "-" else str(path)
    src = sys.stdin.buffer if str(path) == "-" else path  # stdin is wrapped, never closed
    if kind == "gzip":
        # a GzipFile is a binary file, though typeshed does not derive it from IO[bytes]
        return name, cast(IO[bytes], gzip.GzipFile(fileobj=src, mode="rb") if src is sys.stdin.buffer else gzip.open(src, "rb"))
    if kind == "bz2":
        return name, bz2.BZ2File(src, "rb")
    if kind == "zstd":
        raise ConfigError(f"{name}: zstd-compressed; decompress it first (zstd -dc {name} | dustbuster ... -)")
    # src is stdin's buffer or a path: mypy cannot tell them apart by identity (and the `is` test narrows sys.stdin.buffer)
    return name, sys.stdin.buffer if src is sys.stdin.buffer else open(src, "rb")  # type: ignore[return-value, arg-type]


def raw_lines(path: str | Path) -> Iterator[bytes]:
    """The lines of a log (:func:`open_lines`, opened now) as bytes, with their line ends, the file
    closed at the end."""
    return _closing(open_lines(path)[1])


def _closing(fh: IO[bytes]) -> Iterator[bytes]:
    try:
        yield from fh
    finally:
        if fh is not sys.stdin.buffer:
            fh.close()


def _decode(raw: bytes) -> str | None:
    try:
        return raw.decode("utf-8").rstrip("\r\n")
    except UnicodeDecodeError:
        return None


def read_setup(fmt: str, scheme: str, stats: ReadStats | None,
               rejects: RejectSink | None) -> tuple[ReadStats, RejectSink]:
    """A read's arguments checked (ConfigError for an unknown format or scheme), with its counters
    and rejects sink made where the caller gave none: the line loop's and the bulk reader's."""
    if fmt != "auto" and fmt not in FORMATS:
        raise ConfigError(f"unknown format {fmt!r}; choose one of auto, {', '.join(FORMATS)}")
    if scheme not in ("http", "https"):
        raise ConfigError("--scheme must be http or https")
    return (stats if stats is not None else ReadStats()), (rejects or RejectSink(None))


def iter_records(
    sources: Iterable[str | Path],
    fmt: str = "auto",
    site: str | None = None,
    scheme: str = "http",
    limits: Limits | None = None,
    stats: ReadStats | None = None,
    rejects: RejectSink | None = None,
    on_bytes: Callable[[int], None] | None = None,
) -> Iterator[LogRecord]:
    """Records of every source, in order.  Status >= 400 records are counted and not yielded."""
    stats, rejects = read_setup(fmt, scheme, stats, rejects)
    for src in sources:
        name, fh = open_lines(src)
        try:
            yield from _iter_one(name, fh, fmt, Context(site, scheme, limits or Limits()), stats, rejects, on_bytes)
        finally:
            if fh is not sys.stdin.buffer:
                fh.close()


def choose_format(name: str, head: list[bytes], fmt: str, ctx: Context, stats: ReadStats) -> str | None:
    """The format of a source: ``fmt``, or (``auto``) sniffed from its first lines; None when
    they are all blank or not UTF-8."""
    texts = [t for t in (_decode(r) for r in head) if t and len(t) <= MAX_LINE_CHARS]  # as a batch's sniff
    chosen: str | None = fmt
    if fmt == "auto":
        if not texts:
            stats.formats[name] = "empty"
            chosen = None
        else:
            try:
                chosen = sniff(texts, ctx)
            except ParseError as exc:
                raise ConfigError(f"{name}: {exc}; pass --format") from None
    if chosen is not None:
        stats.formats[name] = chosen
        if chosen in HOSTLESS and not ctx.site:
            raise ConfigError(f"{name}: {chosen} log lines carry no host: pass --site HOST")
    tsv_columns(chosen, texts, ctx)
    return chosen


def tsv_columns(chosen: str | None, texts: list[str], ctx: Context) -> None:
    """The columns of a format with a header row (TSV), from its header: the first of its non-blank lines."""
    set_columns(chosen, texts[0] if texts else None, ctx)


def _iter_one(name, fh, fmt, ctx, stats, rejects, on_bytes) -> Iterator[LogRecord]:
    buffered = io.BufferedReader(fh) if not isinstance(fh, io.BufferedIOBase) else fh
    head = list(itertools.islice(buffered, SNIFF_LINES))
    chosen = choose_format(name, head, fmt, ctx, stats)

    def reject(lineno: int, reason: str, detail: str, line: str) -> None:
        rejects.write(name, lineno, reason, detail, line)

    yield from parse_each(itertools.chain(head, buffered), chosen, ctx, stats, reject, on_bytes=on_bytes)


def _is_header(chosen: str | None, line: str) -> bool:
    """A header row of the format, not a record: a TSV row naming the columns, a CDX `` CDX`` line."""
    return is_header_line(chosen, line)


def parse_each(items: Iterable, chosen: str | None, ctx: Context, stats: ReadStats,
               reject: Callable[[int, str, str, str], None], max_line_chars: int = MAX_LINE_CHARS,
               on_bytes: Callable[[int], None] | None = None, numbers: Iterable[int] | None = None) -> Iterator[LogRecord]:
    """The line loop of every read, a file's (:func:`iter_records`) and a topic batch's
    (:func:`parse_lines`): the records of ``items`` in format ``chosen`` (None: no format matched,
    each line a ``unknown_format`` reject), status >= 400 dropped, every other line counted in
    ``stats`` and each reject handed to ``reject(line number, reason, detail, line)``.

    An item is a raw line (bytes: a file's, or a batch's line that is not UTF-8; ``bad_encoding``
    when not UTF-8; the line end is stripped) or a batch's element (``not_a_string`` when not a
    str, ``bad_encoding`` when it holds a lone surrogate).  A blank line, empty or only whitespace,
    counts in ``stats.blank``; a line of more than ``max_line_chars`` characters (the one line cap,
    :data:`~dustbuster.core.errors.MAX_LINE_CHARS`) is an ``oversized_line``, unparsed.  A line that fails to parse but is the format's
    header row (:func:`_is_header`) is skipped as ``header``.  Hot: a parser's bug (any exception
    but Skip and ParseError) is a ``parser_error`` reject (:func:`parser_failure`), inline.  ``numbers``: the line numbers (default 1, 2, ...)."""
    parse = PARSERS.get(chosen) if chosen else None
    for lineno, item in zip(numbers or itertools.count(1), items):
        stats.lines += 1
        if item.__class__ is bytes:
            if on_bytes:
                on_bytes(len(item))
            try:
                line = item.decode("utf-8").rstrip("\r\n")
            except UnicodeDecodeError:
                _reject(stats, reject, lineno, ("bad_encoding", "not UTF-8", item.decode("utf-8", "replace")))
                continue
        elif isinstance(item, str):  # a raw message's list may hold anything (stream.records.decode_raw)
            line = item
        else:
            _reject(stats, reject, lineno, ("not_a_string", f"a line of JSON type {type(item).__name__}", shown(item)))
            continue
        if not line or line.isspace():
            stats.blank += 1
            continue
        if len(line) > max_line_chars or (item is line and not line.isascii()):  # item is line: a str item
            bad = unusable_line(line, max_line_chars)
            if bad is not None:
                _reject(stats, reject, lineno, bad)
                continue
        if parse is None:
            _reject(stats, reject, lineno, ("unknown_format", "no known log format matches the input", line))
            continue
        try:
            rec = parse(line, ctx)
        except Skip as s:
            stats.skipped[s.reason] += 1
            continue
        except Exception as exc:  # noqa: BLE001 - ParseError, or a parser's bug made one
            if _is_header(chosen, line):
                stats.skipped["header"] += 1
                continue
            err = exc if isinstance(exc, ParseError) else parser_failure(parse, exc)
            _reject(stats, reject, lineno, (err.reason, err.detail, line))
            continue
        if rec.status is not None and rec.status >= 400:
            stats.drop_status(rec.url)
            continue
        stats.records += 1
        yield rec


def _reject(stats: ReadStats, reject: Callable[[int, str, str, str], None], lineno: int,
            what: tuple[str, str, str]) -> None:
    """Count a rejected line by reason and hand it on: ``what`` is (reason, detail, line)."""
    stats.rejected[what[0]] += 1
    reject(lineno, *what)


def add_record(ul: URLList, rec) -> None:
    """One parsed record into the URL list: a URL list's URL is listed only, with no observation
    (core/urls/urllist.py, ``mine --urls``); a log's is an observation."""
    if rec.listed:
        ul.list_only(rec.url)
    else:
        ul.add(rec.url, rec.status, rec.size, rec.digest, rec.sketch)


def shown(value: object) -> str:
    """A JSON value as text, cut to REJECT_EXCERPT_CHARS, for a reject record."""
    try:
        return json.dumps(value)[:REJECT_EXCERPT_CHARS]
    except (TypeError, ValueError, RecursionError):
        return repr(value)[:REJECT_EXCERPT_CHARS]


def unusable_line(line: str, max_line_bytes: int) -> tuple[str, str, str] | None:
    """The reject of a line too long to parse, or not text (a lone surrogate)."""
    if has_surrogate(line):
        return ("bad_encoding", "lone surrogate: not text", line)
    if len(line) > max_line_bytes:  # the detail as feed's cut line gives it too (dustbuster.stream.records.wire_line)
        return ("oversized_line", f"more than {max_line_bytes} characters", line[:REJECT_EXCERPT_CHARS])
    return None
