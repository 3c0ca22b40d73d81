"""Log-line parsers: one pure function per format, each turning a line into a :class:`LogRecord`
or raising :class:`dust.errors.ParseError` with a reason (docs/semantics.md lists them).

Formats: Apache/Nginx ``common`` and ``combined``, the ``vhost`` variants (``%v`` or ``%v:%p``
first), ``jsonl``, Heritrix ``heritrix`` crawl.log, ``cdx`` (CDX-11/CDX-9) and ``cdxj``, and
``tsv`` with a header row (the NASA re-encoding).  :func:`sniff` picks one from sample lines.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Callable

from dust.errors import ParseError
from dust.tokens import token_count

FORMATS = ("common", "combined", "vhost", "jsonl", "heritrix", "cdx", "cdxj", "tsv")
HOSTLESS = frozenset({"common", "combined"})  #: formats whose lines carry no host

#: methods whose responses observe the document; others of HTTP_METHODS are listed without size.
BODY_METHODS = frozenset({"GET"})
URL_METHODS = frozenset({"GET", "HEAD", "POST"})
HTTP_METHODS = frozenset(
    {"GET", "HEAD", "POST", "PUT", "DELETE", "CONNECT", "OPTIONS", "TRACE", "PATCH", "PROPFIND",
     "PROPPATCH", "MKCOL", "COPY", "MOVE", "LOCK", "UNLOCK", "SEARCH", "REPORT"}
)


@dataclass(slots=True)
class Limits:
    max_url_length: int = 2048
    max_tokens: int = 256


@dataclass(slots=True)
class LogRecord:
    """One parsed line: an absolute URL (fragment dropped) and what the line says of it."""

    url: str
    status: int | None
    size: int | None
    digest: str | None = None
    sketch: tuple[int, ...] | None = None


class Skip(Exception):
    """A well-formed line that carries no page record (dns: URIs, OPTIONS *, ...): counted, not a reject."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


@dataclass(slots=True)
class Context:
    site: str | None = None
    scheme: str = "http"
    limits: Limits = field(default_factory=Limits)
    tsv_columns: dict[str, int] | None = None


_Q = r'"((?:[^"\\]|\\.)*)"'
_CLF = r'(\S+) (\S+) (\S+) \[([^\]]*)\] ' + _Q + r' (\d{3}|-) (\d+|-)'
_RE_COMMON = re.compile("^" + _CLF + r"\s*$")
_RE_COMBINED = re.compile("^" + _CLF + r" " + _Q + r" " + _Q + r"(?:\s.*)?$")
_RE_VHOST = re.compile(r"^(\S+) " + _CLF + r"(?: " + _Q + r" " + _Q + r")?(?:\s.*)?$")
_CTRL = re.compile(r"[\x00-\x20\x7f]")
_HOST = re.compile(r"^[A-Za-z0-9._~\-\[\]:%!$&'()*+,;=]+$")


def _int(text: str | None, what: str) -> int | None:
    if text is None or text in ("-", ""):
        return None
    try:
        return int(text)
    except ValueError:
        raise ParseError("malformed", f"{what} {text!r} is not a number") from None


def absolute_url(target: str, host: str | None, ctx: Context) -> str:
    """Form the site's absolute URL (scheme + host + path + query; fragment dropped) and police it."""
    if not target:
        raise ParseError("bad_target", "empty request target")
    low = target[:8].lower()
    if low.startswith("http://") or low.startswith("https://"):
        scheme, rest = target.split("://", 1)
        slash = rest.find("/")
        h, path = (rest, "/") if slash < 0 else (rest[:slash], rest[slash:])
        url = _join(scheme.lower(), h, path)
    elif target.startswith("/"):
        h = host or ctx.site
        if not h:
            raise ParseError("no_host", "the line has no host and no --site was given")
        url = _join(ctx.scheme, h, target)
    elif target == "*":
        raise Skip("asterisk_target")
    else:
        raise ParseError("bad_target", f"request target {target[:80]!r} is neither /path nor absolute")
    url = url.split("#", 1)[0]
    if len(url) > ctx.limits.max_url_length:
        raise ParseError("url_too_long", f"{len(url)} characters")
    if _CTRL.search(url):
        raise ParseError("bad_url", "control character or space in the URL")
    if token_count(url) > ctx.limits.max_tokens:
        raise ParseError("too_many_tokens", f"more than {ctx.limits.max_tokens} tokens")
    return url


def _join(scheme: str, host: str, path: str) -> str:
    host = host.lower()
    if "@" in host:  # userinfo never belongs in a URL list
        host = host.rsplit("@", 1)[1]
    if (scheme == "http" and host.endswith(":80")) or (scheme == "https" and host.endswith(":443")):
        host = host.rsplit(":", 1)[0]
    if not host or not _HOST.match(host):
        raise ParseError("bad_url", f"bad host {host[:80]!r}")
    return f"{scheme}://{host}{path}"


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


def parse_common(line: str, ctx: Context) -> LogRecord:
    m = _RE_COMMON.match(line)
    if not m:
        raise ParseError("malformed", "not a common-log line")
    return _request(m.group(5), None, _int(m.group(6), "status"), _int(m.group(7), "size"), ctx)


def parse_combined(line: str, ctx: Context) -> LogRecord:
    m = _RE_COMBINED.match(line)
    if not m:
        raise ParseError("malformed", "not a combined-log line")
    return _request(m.group(5), None, _int(m.group(6), "status"), _int(m.group(7), "size"), ctx)


def parse_vhost(line: str, ctx: Context) -> LogRecord:
    m = _RE_VHOST.match(line)
    if not m or "[" in m.group(1):
        raise ParseError("malformed", "not a vhost-log line")
    vhost = m.group(1)
    if vhost.endswith(":80") and ctx.scheme == "http":
        vhost = vhost[:-3]
    elif vhost.endswith(":443"):
        vhost = vhost[:-4]
    return _request(m.group(6), vhost, _int(m.group(7), "status"), _int(m.group(8), "size"), ctx)


def parse_sketch(value: object) -> tuple[int, ...] | None:
    """A min-hash sketch: a JSON list of integers or a string of hex numbers (comma/space separated)."""
    if value is None:
        return None
    try:
        if isinstance(value, list):
            return tuple(int(x) for x in value) or None
        if isinstance(value, str):
            return tuple(int(x, 16) for x in re.split(r"[,\s]+", value.strip()) if x) or None
    except (TypeError, ValueError):
        pass
    raise ParseError("malformed", "sketch must be a list of integers or hex numbers")


def parse_jsonl(line: str, ctx: Context) -> LogRecord:
    try:
        obj = json.loads(line)
    except ValueError:
        raise ParseError("malformed", "not JSON") from None
    if not isinstance(obj, dict):
        raise ParseError("malformed", "JSON line is not an object")
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
    digest = obj.get("digest")
    return LogRecord(
        absolute_url(target, host if isinstance(host, str) else None, ctx),
        status,
        size if method in BODY_METHODS else None,
        digest if isinstance(digest, str) and digest else None,
        parse_sketch(obj.get("sketch")),
    )


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
    try:
        obj = json.loads(parts[2])
    except ValueError:
        raise ParseError("malformed", "CDXJ JSON block") from None
    url = obj.get("url") if isinstance(obj, dict) else None
    if not isinstance(url, str):
        raise ParseError("malformed", "CDXJ line without url")
    status = _int(str(obj.get("status", "")), "status")
    digest = obj.get("digest")
    return LogRecord(absolute_url(url, None, ctx), status, None, digest if isinstance(digest, str) else None)


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


PARSERS: dict[str, Callable[[str, Context], LogRecord]] = {
    "common": parse_common,
    "combined": parse_combined,
    "vhost": parse_vhost,
    "jsonl": parse_jsonl,
    "heritrix": parse_heritrix,
    "cdx": parse_cdx,
    "cdxj": parse_cdxj,
    "tsv": parse_tsv,
}


def sniff(lines: list[str], ctx: Context) -> str:
    """The format that parses most of the sample lines (ties: the order of FORMATS, except that
    combined beats common and vhost when equal).  Raises ParseError when none parses any."""
    probe = Context(site=ctx.site or "sniff.invalid", scheme=ctx.scheme, limits=ctx.limits)
    if lines and tsv_header(lines[0]) is not None:
        return "tsv"
    best, best_score = None, 0
    for fmt in ("combined", "vhost", "common", "jsonl", "heritrix", "cdxj", "cdx"):
        score = 0
        for line in lines:
            try:
                PARSERS[fmt](line, probe)
                score += 1
            except Skip:
                score += 1
            except ParseError as exc:
                if exc.reason != "malformed":
                    score += 1
        if score > best_score:
            best, best_score = fmt, score
    if best is None:
        raise ParseError("unknown_format", "no known log format matches the first lines")
    return best
