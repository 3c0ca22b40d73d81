"""The reference log-line parsers: one pure function per format, each turning a line into a
:class:`LogRecord` or raising :class:`dustbuster.core.errors.ParseError` with a reason
(docs/semantics.md lists them).  They are the specification of what a line means: the fast paths of
:mod:`dustbuster.logs.fastparse` give the same results and hand them every line they cannot prove.

Formats: Apache/Nginx ``common`` and ``combined``, the ``vhost`` variants (``%v`` or ``%v:%p``
first), ``jsonl``, Heritrix ``heritrix`` crawl.log, ``cdx`` (CDX-11/CDX-9) and ``cdxj``, ``tsv``
with a header row (the NASA re-encoding) and ``urls`` (a URL list).  Which parser, fast path and
header check each format has, and how it is sniffed, is :mod:`dustbuster.logs.formats`' table.
What every parser shares (the context, the record, the URL rules) is :mod:`dustbuster.logs.record`'s.
"""

from __future__ import annotations

import re

from dustbuster.core.errors import ParseError

from dustbuster.core.strictjson import has_surrogate, loads_strict

from .record import _CTRL, BODY_METHODS, HTTP_METHODS, URL_METHODS, Context, LogRecord, Skip, absolute_url
from .record import parse_int as _int

_Q = r'"((?:[^"\\]|\\.)*)"'
_CLF = r'(\S+) (\S+) (\S+) \[([^\]]*)\] ' + _Q + r' (\d{3}|-) (\d+|-)'
_RE_COMMON = re.compile("^" + _CLF + r"\s*$")
_RE_COMBINED = re.compile("^" + _CLF + r" " + _Q + r" " + _Q + r"(?:\s.*)?$")
_RE_VHOST = re.compile(r"^(\S+) " + _CLF + r"(?: " + _Q + r" " + _Q + r")?(?:\s.*)?$")


def _request(req: str, host: str | None, status: int | None, size: int | None, ctx: Context) -> LogRecord:
    parts = req.split(" ")
    if len(parts) < 2:
        raise ParseError("malformed", f"request {req[:80]!r}")
    method = parts[0]
    target = " ".join(parts[1:-1]) if len(parts) > 2 and parts[-1].startswith("HTTP/") else " ".join(parts[1:])
    if method not in HTTP_METHODS:
        raise ParseError("bad_method", repr(method[:40]))
    if method not in URL_METHODS:
        raise Skip("method_" + method.lower())
    url = absolute_url(target, host, ctx)
    return LogRecord(url, status, size if method in BODY_METHODS else None)


# ``rx``: the line's regular expression; dustbuster.logs.fastparse passes an equivalent faster one
def parse_common(line: str, ctx: Context, rx: re.Pattern = _RE_COMMON) -> LogRecord:
    m = rx.match(line)
    if not m:
        raise ParseError("malformed", "not a common-log line")
    return _request(m.group(5), None, _int(m.group(6), "status"), _int(m.group(7), "size"), ctx)


def parse_combined(line: str, ctx: Context, rx: re.Pattern = _RE_COMBINED) -> LogRecord:
    m = rx.match(line)
    if not m:
        raise ParseError("malformed", "not a combined-log line")
    return _request(m.group(5), None, _int(m.group(6), "status"), _int(m.group(7), "size"), ctx)


def parse_vhost(line: str, ctx: Context, rx: re.Pattern = _RE_VHOST) -> LogRecord:
    m = rx.match(line)
    if not m or "[" in m.group(1):
        raise ParseError("malformed", "not a vhost-log line")
    vhost = m.group(1)
    if vhost.endswith(":80") and ctx.scheme == "http":
        vhost = vhost[:-3]
    elif vhost.endswith(":443"):
        vhost = vhost[:-4]
    return _request(m.group(6), vhost, _int(m.group(7), "status"), _int(m.group(8), "size"), ctx)


def _sketch_int(x: object) -> int:
    if isinstance(x, bool):
        raise ValueError("a boolean is not a hash")
    if isinstance(x, float):
        if not x.is_integer():  # NaN and the infinities too
            raise ValueError("not an integer")
        return int(x)
    if isinstance(x, str) and len(x) > 20:
        raise ValueError("too long")
    return int(x)  # type: ignore[call-overload]


def parse_sketch(value: object) -> tuple[int, ...] | None:
    """A min-hash sketch: a JSON list of integers or a string of hex numbers (comma/space
    separated); every hash an unsigned 64-bit number."""
    if value is None:
        return None
    try:
        if isinstance(value, list):
            out = tuple(_sketch_int(x) for x in value)
        elif isinstance(value, str):
            out = tuple(int(x, 16) if len(x) <= 18 else -1 for x in re.split(r"[,\s]+", value.strip()) if x)
        else:
            raise TypeError(type(value).__name__)
    except (TypeError, ValueError, OverflowError):
        out = (-1,)
    if any(not 0 <= x < 2**64 for x in out):
        raise ParseError("malformed", "sketch must be a list of integers or hex numbers of 64 bits")
    return out or None


def parse_jsonl(line: str, ctx: Context) -> LogRecord:
    obj = _json_object(line, "JSON line")
    target = obj.get("url") or obj.get("path")
    if not isinstance(target, str):
        raise ParseError("malformed", "no 'url' or 'path' string")
    method = obj.get("method", "GET")
    if not isinstance(method, str) or method not in HTTP_METHODS:
        raise ParseError("bad_method", repr(method)[:40])
    if method not in URL_METHODS:
        raise Skip("method_" + method.lower())
    status, size = obj.get("status"), obj.get("size")
    status = _int(str(status), "status") if status is not None else 200
    size = _int(str(size), "size") if size is not None else None
    host = obj.get("host")
    return LogRecord(
        absolute_url(target, host if isinstance(host, str) else None, ctx),
        status,
        size if method in BODY_METHODS else None,
        _digest(obj.get("digest")),
        parse_sketch(obj.get("sketch")),
    )


def _json_object(text: str, what: str) -> dict:
    """The JSON object of a line (strict: no NaN/Infinity/1e400, nothing deeper than MAX_JSON_DEPTH).
    Text that is no JSON object is ``malformed`` (the format does not match); an object with bad
    numbers or nesting keeps loads_strict's reason."""
    if not text.lstrip().startswith("{"):
        raise ParseError("malformed", f"{what} is not a JSON object")
    try:
        obj = loads_strict(text)
    except ParseError as exc:
        if exc.reason == "bad_json":
            raise ParseError("malformed", f"{what} is not JSON") from None
        raise
    if not isinstance(obj, dict):
        raise ParseError("malformed", f"{what} is not a JSON object")
    return obj


def _digest(value: object) -> str | None:
    if not isinstance(value, str) or not value:
        return None
    if len(value) > 512 or has_surrogate(value) or _CTRL.search(value):
        raise ParseError("malformed", "digest is not a short printable string")
    return value


def parse_heritrix(line: str, ctx: Context) -> LogRecord:
    f = line.split()
    if len(f) < 10 or not re.match(r"^\d{4}-\d\d-\d\dT", f[0]):
        raise ParseError("malformed", "not a Heritrix crawl.log line")
    status = _int(f[1], "status")
    uri = f[3]
    if not (uri.startswith("http://") or uri.startswith("https://")):
        raise Skip("non_http_uri")
    if status is not None and status <= 0:
        raise Skip("crawl_failure")  # Heritrix negative codes: no document was fetched
    digest = f[9] if f[9] != "-" else None
    if digest and digest.startswith("sha1:"):
        digest = digest[5:]
    return LogRecord(absolute_url(uri, None, ctx), status, _int(f[2], "size"), digest)


def parse_cdx(line: str, ctx: Context) -> LogRecord:
    """CDX-11 ``N b a m s k r M S V g`` or CDX-9 ``N b a m s k r V g``.  The length field is the
    (compressed) record length, not the document's: only the digest is observed."""
    f = line.split(" ")
    if len(f) not in (9, 11) or not f[1].isdigit() or "://" not in f[2]:
        raise ParseError("malformed", "not a CDX line")
    status = _int(f[4], "status")
    return LogRecord(absolute_url(f[2], None, ctx), status, None, f[5] if f[5] != "-" else None)


def parse_cdxj(line: str, ctx: Context) -> LogRecord:
    parts = line.split(" ", 2)
    if len(parts) != 3 or not parts[1].isdigit() or not parts[2].startswith("{"):
        raise ParseError("malformed", "not a CDXJ line")
    obj = _json_object(parts[2], "CDXJ JSON block")
    url = obj.get("url")
    if not isinstance(url, str):
        raise ParseError("malformed", "CDXJ line without url")
    status = _int(str(obj.get("status", "")), "status")
    return LogRecord(absolute_url(url, None, ctx), status, None, _digest(obj.get("digest")))


TSV_ALIASES = {"url": ("url", "path", "request"), "status": ("response", "status"), "size": ("bytes", "size"), "method": ("method",), "host": ("vhost",)}


def tsv_header(line: str) -> dict[str, int] | None:
    cols = [c.strip().lower() for c in line.rstrip("\n").split("\t")]
    found = {}
    for key, names in TSV_ALIASES.items():
        for n in names:
            if n in cols:
                found[key] = cols.index(n)
                break
    return found if {"url", "status"} <= found.keys() else None


def parse_tsv(line: str, ctx: Context) -> LogRecord:
    """Tab-separated with a header row naming url/path, response/status, bytes/size[, method].
    A size of 0 is taken as unknown: the NASA re-encoding wrote '-' as 0."""
    cols = ctx.tsv_columns
    if cols is None:
        raise ParseError("malformed", "TSV without a header row")
    f = line.rstrip("\n").split("\t")
    if len(f) <= max(cols.values()):
        raise ParseError("malformed", "too few TSV columns")
    method = f[cols["method"]] if "method" in cols else "GET"
    if method not in HTTP_METHODS:
        raise ParseError("bad_method", repr(method[:40]))
    if method not in URL_METHODS:
        raise Skip("method_" + method.lower())
    size = _int(f[cols["size"]], "size") if "size" in cols else None
    url = absolute_url(f[cols["url"]], f[cols["host"]] if "host" in cols else None, ctx)
    return LogRecord(url, _int(f[cols["status"]], "status"), size or None if method in BODY_METHODS else None)


def parse_urls(line: str, ctx: Context) -> LogRecord:
    """A URL list: one absolute URL, or a path of ``ctx.site``, per line; blank lines and
    ``#`` comments are skipped.  The URL exists (a crawler met it) and nothing of its page is known:
    a listed record (``LogRecord.listed``), never Figure 1 size evidence (docs/semantics.md)."""
    text = line.strip()
    if not text or text.startswith("#"):
        raise Skip("blank")
    if any(c.isspace() for c in text):
        raise ParseError("malformed", "a URL list line holds one URL, without spaces")
    return LogRecord(absolute_url(text, None, ctx), None, None, listed=True)
