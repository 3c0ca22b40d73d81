"""The log formats: one table, :data:`TABLE`, one :class:`LogFormat` per format, from which everything
that lists formats is derived: :data:`FORMATS` (the names, in the table's order), :data:`PARSERS`
(what every reader uses: a format's fast path when it has one, else its reference parser),
:data:`FAST_PARSERS`, :data:`HOSTLESS`, :func:`sniff`, the header checks of the reader and of
``dustbuster feed`` (:func:`header_check`, :func:`is_header_line`) and the commands' ``--format``
help (:func:`format_help`).  Adding a format is one entry here (and its parser in
:mod:`dustbuster.logs.parsers`; a fast path in :mod:`dustbuster.logs.fastparse` is optional).

Import order, no cycle: :mod:`~dustbuster.logs.record` ← :mod:`~dustbuster.logs.parsers` (the
reference) ← :mod:`~dustbuster.logs.fastparse` (the fast paths, built on the reference) ← this
module.  Neither parser module knows of the table (tests/test_formats_table.py checks it).
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Callable, cast

from dustbuster.core.errors import ParseError

from . import fastparse
from .parsers import (parse_cdx, parse_cdxj, parse_combined, parse_common, parse_heritrix, parse_jsonl, parse_tsv,
                      parse_urls, parse_vhost, tsv_header)
from .record import Context, LogRecord, Skip

log = logging.getLogger(__name__)

Parser = Callable[[str, Context], LogRecord]


@dataclass(frozen=True)
class LogFormat:
    """One log format.  ``parser``: the reference (:mod:`dustbuster.logs.parsers`); ``fast``: a
    fast path giving the same results (:mod:`dustbuster.logs.fastparse`), or None; ``hostless``: its
    lines carry no host (``--site`` needed); ``header``: the check of a header row naming the
    columns (the row's columns, else None): such a first line picks the format when sniffing, sets
    the columns of the lines after it, and is sent apart by ``dustbuster feed``; ``legend``: a
    header line that is no record and sets nothing (skipped); ``sniff_rank``: the order in which
    :func:`sniff` scores the format on sample lines (lower first, ties keep the earlier), None when
    it is not scored; ``sniff_fallback``: picked when no scored format parses any sample line and
    every line is one of its lines; ``note``: shown after its name in ``--format`` help."""

    name: str
    parser: Parser
    fast: Parser | None = None
    hostless: bool = False
    header: Callable[[str], dict | None] | None = None
    legend: Callable[[str], bool] | None = None
    sniff_rank: int | None = None
    sniff_fallback: bool = False
    note: str = ""


def _cdx_legend(line: str) -> bool:
    return line.startswith(" CDX")


TABLE: tuple[LogFormat, ...] = (
    LogFormat("common", parse_common, fastparse.parse_common, hostless=True, sniff_rank=2),
    LogFormat("combined", parse_combined, fastparse.parse_combined, hostless=True, sniff_rank=0),
    LogFormat("vhost", parse_vhost, fastparse.parse_vhost, sniff_rank=1),
    LogFormat("jsonl", parse_jsonl, fastparse.parse_jsonl, sniff_rank=3),
    LogFormat("heritrix", parse_heritrix, sniff_rank=4),
    LogFormat("cdx", parse_cdx, legend=_cdx_legend, sniff_rank=6),
    LogFormat("cdxj", parse_cdxj, sniff_rank=5),
    LogFormat("tsv", parse_tsv, fastparse.parse_tsv, header=tsv_header),
    LogFormat("urls", parse_urls, sniff_fallback=True, note="a URL list: see --urls"),
)

BY_NAME: dict[str, LogFormat] = {f.name: f for f in TABLE}
FORMATS: tuple[str, ...] = tuple(BY_NAME)
HOSTLESS: frozenset[str] = frozenset(f.name for f in TABLE if f.hostless)  #: formats whose lines carry no host
FAST_PARSERS: dict[str, Parser] = {f.name: f.fast for f in TABLE if f.fast is not None}
#: the parsers in use: each format's fast path where it has one (same results), else its reference parser
PARSERS: dict[str, Parser] = {f.name: f.fast or f.parser for f in TABLE}
#: the formats :func:`sniff` scores, in the order it tries them
SNIFF_ORDER: tuple[str, ...] = tuple(f.name for f in sorted((f for f in TABLE if f.sniff_rank is not None),
                                                            key=lambda f: cast(int, f.sniff_rank)))  # None: left out


def format_help() -> str:
    """The ``--format`` help of the commands: ``auto`` and every format of the table."""
    return "auto (default), " + ", ".join(f.name + (f" ({f.note})" if f.note else "") for f in TABLE)


def header_of(line: str) -> str | None:
    """The format whose header row ``line`` is (the first in the table), or None."""
    return next((f.name for f in TABLE if f.header is not None and f.header(line) is not None), None)


def header_check(fmt: str) -> Callable[[str], bool] | None:
    """What tells a header row to send apart for lines of format ``fmt`` (``auto``: any format's),
    or None when the format has none (``dustbuster feed``)."""
    if fmt == "auto":
        return lambda line: header_of(line) is not None
    spec = BY_NAME.get(fmt)
    if spec is None or spec.header is None:
        return None
    check = spec.header
    return lambda line: check(line) is not None


def is_header_line(fmt: str | None, line: str) -> bool:
    """A header line of format ``fmt``, not a record: its column header or its legend."""
    spec = BY_NAME.get(fmt) if fmt else None
    if spec is None:
        return False
    if spec.header is not None:
        return spec.header(line) is not None
    return spec.legend is not None and spec.legend(line)


def set_columns(fmt: str | None, first: str | None, ctx: Context) -> None:
    """The columns of a format with a header row, from its first non-blank line ``first``."""
    spec = BY_NAME.get(fmt) if fmt else None
    if spec is not None and spec.header is not None and first is not None:
        ctx.tsv_columns = spec.header(first)


def sniff(lines: list[str], ctx: Context) -> str:
    """The format of the sample lines: the format whose header row the first line is; else the
    format that parses most of them (ties: :data:`SNIFF_ORDER`); else, when none parses any, a
    fallback format that takes every line (a URL list).  Raises ParseError when none fits."""
    probe = Context(site=ctx.site or "sniff.invalid", scheme=ctx.scheme, limits=ctx.limits)
    if lines and (by_header := header_of(lines[0])) is not None:
        return by_header
    best, best_score = None, 0
    for fmt in SNIFF_ORDER:
        score = _score(PARSERS[fmt], fmt, lines, probe)
        if score > best_score:
            best, best_score = fmt, score
            if score == len(lines):
                break  # no later format can score more (ties keep the earlier)
    if best is None and lines:
        best = next((f.name for f in TABLE if f.sniff_fallback and all(_takes(f.parser, ln, probe) for ln in lines)),
                    None)  # no log format matches and every line is one of the fallback's (a URL list)
    if best is None:
        raise ParseError("unknown_format", "no known log format matches the first lines")
    return best


def _score(parse: Parser, fmt: str, lines: list[str], probe: Context) -> int:
    """The sample lines that are of the format: parsed, skipped, or rejected for a reason other
    than ``malformed``."""
    score = 0
    for line in lines:
        try:
            parse(line, probe)
            score += 1
        except Skip:
            score += 1
        except ParseError as exc:
            if exc.reason != "malformed":
                score += 1
        except Exception as exc:  # noqa: BLE001 - a parser bug: this format does not match the line
            log.debug("%s parser raised %r while sniffing", fmt, exc)
    return score


def _takes(parse: Parser, line: str, ctx: Context) -> bool:
    try:
        parse(line, ctx)
    except Skip:
        return True
    except ParseError:
        return False
    return True
