"""Reading log files into records and URL lists, with every rejected line counted by reason.

Nothing is lost silently: each line ends up as a record, a counted drop (status >= 400), a
counted skip (a well-formed line with no page: ``dns:`` URIs, ``OPTIONS *``, Heritrix failures)
or a counted reject (with its line number in the optional rejects file).
"""

from __future__ import annotations

import gzip
import io
import itertools
import json
import logging
import sys
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Callable, Iterable, Iterator

from dustbuster.core.errors import ConfigError, ParseError
from dustbuster.core.urllist import URLList

from .formats import FORMATS, HOSTLESS, PARSERS, Context, Limits, LogRecord, Skip, has_surrogate, sniff, tsv_header

log = logging.getLogger(__name__)
SNIFF_LINES = 50


def parse_one(parse: Callable[[str, Context], LogRecord], line: str, ctx: Context) -> LogRecord:
    """``parse(line, ctx)`` that raises only Skip or ParseError: a parser's own bug on some input
    (any other exception) becomes a ``parser_error`` reject, so one line never stops a read or a
    batch (issue 16)."""
    try:
        return parse(line, ctx)
    except (Skip, ParseError):
        raise
    except Exception as exc:
        raise parser_failure(parse, exc) from None


def parser_failure(parse: Callable, exc: Exception) -> ParseError:
    """The ``parser_error`` reject for a parser's exception other than Skip/ParseError (logged)."""
    log.warning("parser %s failed on a line (%s: %s); rejected", getattr(parse, "__name__", parse),
                type(exc).__name__, exc)
    return ParseError("parser_error", f"{type(exc).__name__}: {str(exc)[:200]}")


@dataclass
class ReadStats:
    lines: int = 0
    blank: int = 0
    records: int = 0
    dropped_status: int = 0
    skipped: Counter = field(default_factory=Counter)
    rejected: Counter = field(default_factory=Counter)
    formats: dict[str, str] = field(default_factory=dict)

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


def open_lines(path: str | Path) -> tuple[str, IO[bytes]]:
    if str(path) == "-":
        return "<stdin>", sys.stdin.buffer
    p = Path(path)
    if not p.exists():
        raise ConfigError(f"no such log file: {p}")
    return str(p), (gzip.open(p, "rb") if p.suffix == ".gz" else open(p, "rb"))


def _decode(raw: bytes) -> str | None:
    try:
        return raw.decode("utf-8").rstrip("\r\n")
    except UnicodeDecodeError:
        return None


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
    if fmt != "auto" and fmt not in FORMATS:
        raise ConfigError(f"unknown format {fmt!r}; choose one of auto, {', '.join(FORMATS)}")
    if scheme not in ("http", "https"):
        raise ConfigError("--scheme must be http or https")
    stats = stats if stats is not None else ReadStats()
    rejects = rejects or RejectSink(None)
    for src in sources:
        name, fh = open_lines(src)
        try:
            yield from _iter_one(name, fh, fmt, Context(site, scheme, limits or Limits()), stats, rejects, on_bytes)
        finally:
            if fh is not sys.stdin.buffer:
                fh.close()


def _choose_format(name: str, head: list[bytes], fmt: str, ctx: Context, stats: ReadStats) -> str | None:
    """The format of a source: ``fmt``, or (``auto``) sniffed from its first lines; None when
    they are all blank or not UTF-8."""
    texts = [t for t in (_decode(r) for r in head) if t]
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
    return chosen


def _header(chosen: str | None, lineno: int, line: str, ctx: Context) -> bool:
    """True for a header line of the format (a TSV's first row, a CDX `` CDX ...`` line)."""
    if chosen == "tsv" and lineno == 1 and tsv_header(line) is not None:
        ctx.tsv_columns = tsv_header(line)
        return True
    return chosen == "cdx" and line.startswith(" CDX")


def _iter_one(name, fh, fmt, ctx, stats, rejects, on_bytes) -> Iterator[LogRecord]:
    buffered = io.BufferedReader(fh) if not isinstance(fh, io.BufferedIOBase) else fh
    head = list(itertools.islice(buffered, SNIFF_LINES))
    chosen = _choose_format(name, head, fmt, ctx, stats)
    parse = PARSERS.get(chosen) if chosen else None
    headers = chosen in ("tsv", "cdx")
    # one loop, hot: what parse_one does is inlined (a parser's bug is a parser_error reject)
    for lineno, raw in enumerate(itertools.chain(head, buffered), 1):
        stats.lines += 1
        if on_bytes:
            on_bytes(len(raw))
        try:
            line = raw.decode("utf-8").rstrip("\r\n")
        except UnicodeDecodeError:
            stats.rejected["bad_encoding"] += 1
            rejects.write(name, lineno, "bad_encoding", "not UTF-8", raw.decode("utf-8", "replace"))
            continue
        if not line or line.isspace():
            stats.blank += 1
            continue
        if headers and _header(chosen, lineno, line, ctx):
            stats.skipped["header"] += 1
            continue
        if parse is None:
            continue
        try:
            rec = parse(line, ctx)
        except Skip as s:
            stats.skipped[s.reason] += 1
            continue
        except Exception as exc:  # noqa: BLE001 - ParseError, or a parser's bug made one
            err = exc if isinstance(exc, ParseError) else parser_failure(parse, exc)
            stats.rejected[err.reason] += 1
            rejects.write(name, lineno, err.reason, err.detail, line)
            continue
        if rec.status is not None and rec.status >= 400:
            stats.dropped_status += 1
            continue
        stats.records += 1
        yield rec


def read_urllist(sources: Iterable[str | Path], fmt: str = "auto", site: str | None = None, scheme: str = "http", **kw) -> tuple[URLList, ReadStats]:
    stats = kw.pop("stats", None) or ReadStats()
    ul = URLList()
    for rec in iter_records(sources, fmt, site, scheme, stats=stats, **kw):
        ul.add(rec.url, rec.status, rec.size, rec.digest, rec.sketch)
    log.info("read %s lines: %s records, %s unique URLs", stats.lines, stats.records, len(ul))
    return ul, stats


@dataclass
class BatchResult:
    records: list[tuple]
    rejects: list[tuple[str, str, str]]  # (reason, detail, line)
    counts: dict[str, int]
    fmt: str | None


def _shown(value: object) -> str:
    """Up to 1000 characters of a JSON value, for a reject record."""
    try:
        return json.dumps(value)[:1000]
    except (TypeError, ValueError, RecursionError):
        return repr(value)[:1000]


def _batch_format(lines: list, fmt: str, ctx: Context, max_line_bytes: int, header: str) -> str | None:
    """The format of a batch: ``fmt``, or sniffed from its first usable lines (``header``: a TSV
    header row sent apart); sets the TSV columns."""
    usable = (ln for ln in lines if isinstance(ln, str) and ln.strip() and len(ln) <= max_line_bytes
              and not has_surrogate(ln))
    texts = list(itertools.islice(usable, SNIFF_LINES))
    if header and tsv_header(header) is not None:
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
    if chosen == "tsv" and texts:
        ctx.tsv_columns = tsv_header(texts[0])
    return chosen


def _unusable(line: str, max_line_bytes: int) -> tuple[str, str, str] | None:
    """The reject of a line too long to parse, or not text (a lone surrogate)."""
    if len(line) > max_line_bytes:
        return ("oversized_line", f"{len(line)} characters", line[:1000])
    if has_surrogate(line):
        return ("bad_encoding", "lone surrogate: not text", line)
    return None


def parse_lines(lines: list[str], site: str, fmt: str = "auto", scheme: str = "http", limits: Limits | None = None,
                max_line_bytes: int = 65536, header: str = "") -> BatchResult:
    """Parse one batch of a site's lines (the streaming ingest): records for status < 400,
    every other line counted; rejects returned with their reason for the dead-letter topic.
    Raises nothing: whatever a line holds, it is a record, a skip or a reject (issue 16)."""
    ctx = Context(site, scheme if scheme in ("http", "https") else "http", limits or Limits())
    counts = {"lines": len(lines), "records": 0, "dropped_status": 0, "skipped": 0, "rejected": 0}
    rejects: list[tuple[str, str, str]] = []
    chosen = _batch_format(lines, fmt, ctx, max_line_bytes, header)
    records: list[tuple] = []
    parse = PARSERS.get(chosen) if chosen else None
    for line in lines:
        if not isinstance(line, str):  # a raw message's list may hold anything (dustbuster.stream.records.decode_raw)
            counts["rejected"] += 1
            rejects.append(("not_a_string", f"a line of JSON type {type(line).__name__}", _shown(line)))
            continue
        if not line or line.isspace():
            counts["skipped"] += 1
            continue
        if len(line) > max_line_bytes or not line.isascii():
            bad = _unusable(line, max_line_bytes)
            if bad is not None:
                counts["rejected"] += 1
                rejects.append(bad)
                continue
        if parse is None:
            counts["rejected"] += 1
            rejects.append(("unknown_format", "no known log format matches the batch", line))
            continue
        try:
            rec = parse(line, ctx)
        except Skip:
            counts["skipped"] += 1
            continue
        except Exception as exc:  # noqa: BLE001 - ParseError, or a parser's bug made one (parse_one)
            err = exc if isinstance(exc, ParseError) else parser_failure(parse, exc)
            if chosen == "tsv" and tsv_header(line) is not None:
                counts["skipped"] += 1
                continue
            counts["rejected"] += 1
            rejects.append((err.reason, err.detail, line))
            continue
        if rec.status is not None and rec.status >= 400:
            counts["dropped_status"] += 1
            continue
        counts["records"] += 1
        records.append((rec.url, rec.status, rec.size, rec.digest, rec.sketch))
    return BatchResult(records, rejects, counts, chosen)
