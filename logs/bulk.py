"""The bulk scanners: a block of log lines (a file's chunk, a topic batch) parsed at once, with no
Python loop per line for the common formats (``common``, ``combined``, ``vhost``, ``tsv``).

One regular expression per format is run over the whole block by ``findall``: each line is either
a *fast* line, in the fast path's own language (:mod:`dustbuster.logs.fastparse`, where the
equality with the reference is argued), giving its *span* (the text from the method to the size:
``GET /x HTTP/1.1" 200 512``; a TSV row's columns from the first one read to the last) and its
host (vhost), or a *catch-all* line, given whole, which the caller hands to the line loop
(``dustbuster.logs.reader.parse_each``: the fast parser, then the reference) with its line number.
The lines are then counted by (host, span) in C (``Counter``), and only each *distinct* span is
split in Python into method, target, status and size; its URL is formed once per (host, target)
by the fast path's own :func:`~dustbuster.logs.fastparse.fast_url` (a key it declines sends its
lines to the line loop); :func:`aggregate` adds each distinct URL once to the URL list with its
hits and size interval.  Beyond the papers (they say nothing of how a log is read).

The languages, per format, are the fast parsers' with every class kept within one line (no ``\\n``)
and a trailing ``\\r*`` tolerated where the line loop strips it; each is a subset of what the fast
parser takes with the same fields, so a fast line's record is the fast parser's, which is the
reference's (tests/test_bulk.py checks the URL lists, counts and rejects on every real log and on
the fuzz log).  A block holding a lone surrogate (bytes that are not UTF-8, decoded with
``surrogateescape``) or a line over the line cap is scanned with a guard that sends those lines to
the line loop, whose rejects they are.
"""

from __future__ import annotations

import itertools
import re
from collections import Counter
from dataclasses import dataclass, field
from itertools import repeat
from operator import add, not_
from typing import Sequence

import numpy as np

from dustbuster.core.urls.urllist import NO_BODY_STATUSES, URLInfo, URLList

from .fastparse import _prefix, fast_url
from .sitecap import SiteCap
from .record import BODY_METHODS, Context, LogRecord

# the target: a path of printable ASCII without space, '"', '\\' or '#' (an absolute or fragmented
# target, rare, goes to the line loop): fastparse.fast_url then forms prefix + target as it is
_REQ = r'"(GET|HEAD|POST) (/[!$-\[\]-~]*) HTTP/[^ "\\\n]*" ([0-9]{3}) ([0-9]{1,18}|-)'
_HEAD = r'\S+ \S+ \S+ \[[^\]\n]*\] ' + _REQ
_CLF_ROLES = ("method", "target", "status", "size")
_TAILS = {
    "common": r"[^\S\n]*",  # the reference's \s*$
    "combined": r' "[^"\\\n]*" "[^"\\\n]*"(?:[^\S\n][^\\\n]*)?',  # fastparse._combined_rest
    "vhost": r"(?:[^\S\n].*)?",  # fastparse._any_rest
}
_TSV_FIELDS = {"method": "GET|HEAD|POST", "status": "[0-9]{1,18}", "size": "[0-9]{1,18}|-|",
               "url": r'/[!"$-~]*', "host": r"[^\t\n\r]*"}


def guard(max_chars: int) -> str:
    """A line start that refuses lines holding a lone surrogate or longer than ``max_chars``."""
    return rf"(?![^\n]*[\ud800-\udfff])(?![^\n]{{{max_chars + 1}}})"


@dataclass(frozen=True)
class Scanner:
    """One format's block expression: its groups' roles (host, method, target, status, size; a
    format without method or size: GET, none), then the catch-all line."""

    pattern: str  #: the fast line's language, without the line end
    roles: tuple[str, ...] = _CLF_ROLES
    vhost: bool = False  #: the host is a vhost field: its default port dropped (fastparse.parse_vhost)
    tsv: bool = False  #: a size of 0 is no size (TSV: the NASA re-encoding wrote '-' as 0)

    def compile(self, guard: str = "") -> re.Pattern:
        return re.compile(rf"(?:{guard}{self.pattern}|(.*))\n")


def scanner_for(chosen: str | None, ctx: Context) -> Scanner | None:
    """The bulk scanner of a format, or None (the line loop reads it)."""
    if chosen in ("common", "combined"):
        return Scanner(_HEAD + _TAILS[chosen])
    if chosen == "vhost":
        return Scanner(r"([^\s\[]+) " + _HEAD + _TAILS["vhost"], ("host", *_CLF_ROLES), vhost=True)
    if chosen == "tsv" and ctx.tsv_columns is not None:
        return _tsv_scanner(ctx.tsv_columns)
    return None


def _tsv_scanner(cols: dict[str, int]) -> Scanner | None:
    """A TSV row as fastparse._fast_tsv takes it, split on tabs, the columns it reads captured
    in column order; None when one column has two roles (the line loop decides)."""
    role = {i: k for k, i in cols.items()}
    if len(role) != len(cols):
        return None
    parts = [f"({_TSV_FIELDS[role[i]]})" if i in role else r"[^\t\n]*" for i in range(max(role) + 1)]
    roles = tuple("target" if role[i] == "url" else role[i] for i in sorted(role))
    return Scanner("\t".join(parts) + r"(?:\t[^\n]*)?\r*", roles, tsv=True)


@dataclass
class Scan:
    """A block's fast lines counted by row (their groups) in first-seen order, each row's record
    (None: its lines go to the line loop), and the other lines."""

    lines: int
    counts: Counter
    records: dict  #: row -> (url, status, size or -1) or None
    keys: list = field(default_factory=list)  #: every line's row, in order (kept with a fallback, or asked for)
    fallback: list[tuple[int, str]] = field(default_factory=list)  #: (position, line)


def scan(text: str, scanner: Scanner, ctx: Context, guard: str = "", cache: dict | None = None,
         keep_rows: bool = False, max_cached: int | None = None) -> Scan:
    """The lines of ``text`` (each ended by ``\\n``) as counted rows and other lines; ``cache``: the
    record of each row, kept across the blocks of one read (same context), cleared when it would
    hold more than ``max_cached`` rows (default ``MAX_CACHED``)."""
    max_cached = MAX_CACHED if max_cached is None else max_cached
    rows = _compiled(scanner, guard).findall(text)
    n = len(rows)
    if not n:
        return Scan(0, Counter(), {})
    counts = Counter(rows)
    cache = cache if cache is not None else {}
    new = list(itertools.filterfalse(cache.__contains__, counts))
    fresh = dict(zip(new, _records(new, scanner, ctx))) if new else {}
    records = {k: fresh[k] if k in fresh else cache[k] for k in counts}
    if fresh:
        if len(cache) + len(fresh) > max_cached:
            cache.clear()  # the block's records are already taken: a clear strands nothing
        cache.update(itertools.islice(fresh.items(), max_cached))
    if None not in records.values():
        return Scan(n, counts, records, rows if keep_rows else [])
    slow = list(map(not_, map(records.__getitem__, rows)))
    at = scanner.roles.index("status")
    matched = any(r is None and k[at] for k, r in records.items())  # a declined line of the fast language
    lines = text.split("\n") if matched else [row[-1] for row in itertools.compress(rows, slow)]
    others = list(zip(itertools.compress(range(n), slow), lines if not matched else itertools.compress(lines, slow)))
    for k in [k for k, r in records.items() if r is None]:
        del counts[k]
    return Scan(n, counts, records, rows, others)


MAX_CACHED = 1 << 17  #: rows whose record a read keeps across its blocks (~64 MB at most)
_COMPILED: dict[tuple[Scanner, str], re.Pattern] = {}


def _compiled(scanner: Scanner, guard: str) -> re.Pattern:
    rx = _COMPILED.get((scanner, guard))
    if rx is None:
        if len(_COMPILED) > 64:
            _COMPILED.clear()
        rx = _COMPILED[(scanner, guard)] = scanner.compile(guard)
    return rx


def _records(rows: list, scanner: Scanner, ctx: Context) -> list[tuple | None]:
    """(url, status, size or -1) of distinct rows, None where the fast path declines: the URLs
    formed in C loops (``scheme://host`` + target: the expressions take only plain paths) where
    the URL is within both limits and the host one the reference takes; :func:`_record`
    (fastparse.fast_url) for the rest (and the catch-all rows)."""
    n = len(rows)
    cols: dict[str, tuple[str, ...]] = dict(zip(scanner.roles, zip(*rows)))
    target, status = cols["target"], cols["status"]
    method, size = cols.get("method", repeat("GET", n)), cols.get("size", repeat("", n))
    prefixes = _prefixes(cols.get("host"), n, ctx, scanner.vhost)
    urls = list(map(add, prefixes, target))
    limit = min(ctx.limits.max_url_length, ctx.limits.max_tokens)  # a token is at least one character
    slow = np.fromiter(map(len, urls), np.int64, n) > limit
    slow |= np.fromiter(map(not_, prefixes), bool, n)  # and the catch-all rows (no target)
    slow |= np.fromiter(map(not_, target), bool, n)
    get = np.fromiter(map(_BODY.__contains__, method), bool, n)
    st = list(map(int, map(_STATUS_TEXT.get, status, status)))
    sz = np.fromiter(map(int, map(_SIZE_TEXT.get, size, size)), np.int64, n)
    sz[~get | ((sz == 0) if scanner.tsv else False)] = -1
    out: list[tuple | None] = list(zip(urls, st, sz.tolist()))
    for i in np.flatnonzero(slow).tolist():
        out[i] = _record(dict(zip(scanner.roles, rows[i])), scanner, ctx)
    return out


_BODY = frozenset(BODY_METHODS)
_SIZE_TEXT = {"-": "-1", "": "-1"}
_STATUS_TEXT = {"": "0"}  #: a catch-all row's (declined anyway)


def _prefixes(hosts: tuple | None, n: int, ctx: Context, vhost: bool) -> list[str]:
    """``scheme://host`` of each row's host (the site's where none; a vhost's default port
    dropped), "" where the reference refuses it."""
    if hosts is None:
        return [_prefix(ctx.scheme, ctx.site) or ""] * n
    of_host = {h: _prefix(ctx.scheme, (_vhost(h, ctx) if vhost else h) or ctx.site) or "" for h in dict.fromkeys(hosts)}
    return list(map(of_host.__getitem__, hosts))


def _vhost(host: str, ctx: Context) -> str:
    """fastparse.parse_vhost's port handling."""
    if host.endswith(":80") and ctx.scheme == "http":
        return host[:-3]
    if host.endswith(":443"):
        return host[:-4]
    return host


def _record(f: dict, scanner: Scanner, ctx: Context) -> tuple | None:
    """(url, status, size or -1) of one row's fields, as fastparse gives it; None where it declines."""
    target, host = f["target"], f.get("host")
    if not target or not f["status"]:
        return None  # a catch-all row, or an empty TSV target (the reference rejects it)
    url = fast_url(target, _vhost(host, ctx) if scanner.vhost else host, ctx)  # type: ignore[arg-type]  # a vhost row has a host
    if url is None:
        return None
    method, size = f.get("method", "GET"), f.get("size", "")
    n = int(size) if size not in ("-", "") else -1
    if scanner.tsv and n == 0:
        n = -1  # TSV: unknown (the NASA re-encoding wrote '-' as 0)
    return url, int(f["status"]), n if method in _BODY else -1


def aggregate(ul: URLList, scan_: Scan, extra: Sequence[tuple[int, LogRecord]] = (),
              cap: SiteCap | None = None) -> tuple[int, int]:
    """Add a block's records to ``ul``, each distinct URL once: its hits, its size interval (sizes
    of statuses whose body is not the document left out, as :meth:`URLInfo.observe` does), new
    URLs in first-seen order.  ``extra``: (position, LogRecord) of the line loop's records, placed
    by position.  Status >= 400 is dropped; returns (records, dropped) of the fast lines.  ``cap``:
    a new URL is added only where it admits it (logs/sitecap.py), in first-seen order."""
    keys = list(scan_.counts)
    cols = list(zip(*map(scan_.records.__getitem__, keys))) or [(), (), ()]
    urls = list(cols[0]) + [r.url for _, r in extra]
    cnt = np.fromiter(itertools.chain(scan_.counts.values(), repeat(1, len(extra))), np.int64, len(urls))
    st = np.fromiter(itertools.chain(cols[1], (r.status or 0 for _, r in extra)), np.int64, len(urls))
    sz = np.fromiter(itertools.chain(cols[2], (-1 if r.size is None else r.size for _, r in extra)), np.int64, len(urls))
    fast = np.arange(len(urls)) < len(keys)
    drop = st >= 400
    dropped, records = int(cnt[drop & fast].sum()), int(cnt[~drop & fast].sum())
    keep = ~drop
    if not keep.all():
        ul.note_errors(itertools.compress(urls, drop.tolist()))  # for the validator (core/validation/narrow.py)
        urls = list(itertools.compress(urls, keep.tolist()))
        cnt, st, sz = cnt[keep], st[keep], sz[keep]
    pos = None
    if extra:
        first = _first_positions(scan_.keys)
        kept_keys = itertools.compress(keys, keep[:len(keys)].tolist())
        pos = np.fromiter(itertools.chain(map(first.__getitem__, kept_keys), (p for p, _ in extra)), np.int64, len(urls))
    sz[np.isin(st, _NO_BODY)] = -1
    _merge(ul.infos, urls, cnt, sz, pos, cap)
    return records, dropped


_NO_BODY = np.array(sorted(NO_BODY_STATUSES), dtype=np.int64)
_NONE = np.iinfo(np.int64).max


def _first_positions(keys: list) -> dict:
    """Each key's first position in the block (the last write of the reversed walk wins)."""
    n = len(keys)
    return dict(zip(reversed(keys), range(n - 1, -1, -1)))


def _merge(infos: dict, urls: list[str], cnt: np.ndarray, sz: np.ndarray, pos: np.ndarray | None,
           cap: SiteCap | None = None) -> None:
    """Per distinct URL: hits (sum of ``cnt``), size interval (of ``sz`` >= 0), into ``infos``;
    new URLs in the order of ``pos`` (their first position) or of ``urls``, those ``cap`` admits."""
    distinct = list(dict.fromkeys(urls))
    ids = np.fromiter(map(dict(zip(distinct, itertools.count())).__getitem__, urls), np.int64, len(urls))
    m = len(distinct)
    hits = np.bincount(ids, weights=cnt, minlength=m).astype(np.int64).tolist()
    obs = sz >= 0
    lo, hi = np.full(m, _NONE, np.int64), np.full(m, -1, np.int64)
    np.minimum.at(lo, ids[obs], sz[obs])
    np.maximum.at(hi, ids[obs], sz[obs])
    lo_l = [None if v == _NONE else v for v in lo.tolist()] if (lo == _NONE).any() else lo.tolist()
    hi_l = [None if v < 0 else v for v in hi.tolist()]
    order = range(m)
    if pos is not None:
        first = np.full(m, _NONE, np.int64)
        np.minimum.at(first, ids, pos)
        order = np.argsort(first, kind="stable").tolist()
    new = [i for i in order if distinct[i] not in infos] if infos else order
    if cap is not None and cap.max_urls:
        new = list(itertools.compress(new, cap.taken(list(map(distinct.__getitem__, new)),
                                                     list(map(hits.__getitem__, new)))))
    infos.update(zip(map(distinct.__getitem__, new), map(URLInfo, map(hits.__getitem__, new),
                                                          map(lo_l.__getitem__, new), map(hi_l.__getitem__, new))))
    if len(new) == m:
        return
    fresh = set(new)
    for i in range(m):
        if i in fresh:
            continue
        info = infos.get(distinct[i])
        if info is None:
            continue  # left out by the cap
        info.hits += hits[i]
        if lo_l[i] is not None:
            info.lo = lo_l[i] if info.lo is None or lo_l[i] < info.lo else info.lo
            info.hi = hi_l[i] if info.hi is None or hi_l[i] > info.hi else info.hi
