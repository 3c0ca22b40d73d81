"""What every log-line parser shares: the parse context (:class:`Context`, :class:`Limits`), the
record a line gives (:class:`LogRecord`) or :class:`Skip`, the HTTP methods, and the rules each
parser applies to a line's numbers (:func:`parse_int`) and URL (:func:`absolute_url`: the site's
absolute URL, policed).  The parsers are :mod:`dustbuster.logs.parsers`'s."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from dustbuster.core.errors import ParseError
from dustbuster.core.strictjson import has_surrogate
from dustbuster.core.urls.tokens import token_count

#: methods whose responses observe the document; others of HTTP_METHODS are listed without size.
BODY_METHODS = frozenset({"GET"})
URL_METHODS = frozenset({"GET", "HEAD", "POST"})
HTTP_METHODS = frozenset(
    {"GET", "HEAD", "POST", "PUT", "DELETE", "CONNECT", "OPTIONS", "TRACE", "PATCH", "PROPFIND",
     "PROPPATCH", "MKCOL", "COPY", "MOVE", "LOCK", "UNLOCK", "SEARCH", "REPORT"}
)


@dataclass(slots=True)
class Limits:
    """The bounds on one line's URL: its length in characters and its tokens."""

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
    #: a URL from a URL list (format ``urls``: a crawler's frontier, a sitemap): it exists, nothing
    #: was observed of it; listed apart from the log's URLs (dustbuster.core.urls.urllist.URLList.listed)
    listed: bool = False


class Skip(Exception):
    """A well-formed line that carries no page record (dns: URIs, OPTIONS *, ...): counted, not a reject."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


@dataclass(slots=True)
class Context:
    """What a parser needs beyond the line: the site and scheme for lines without them, the limits,
    and a TSV's columns (from its header row)."""

    site: str | None = None
    scheme: str = "http"
    limits: Limits = field(default_factory=Limits)
    tsv_columns: dict[str, int] | None = None


_CTRL = re.compile(r"[\x00-\x20\x7f]")
_HOST = re.compile(r"^[A-Za-z0-9._~\-\[\]:%!$&'()*+,;=]+$")


def parse_int(text: str | None, what: str) -> int | None:
    """A status or size field: None for ``-`` or nothing, else a 64-bit integer (``malformed`` otherwise)."""
    if text is None or text in ("-", ""):
        return None
    if len(text) > 20:  # int() of thousands of digits is slow and no status or size is that long
        raise ParseError("malformed", f"{what} {text[:40]!r}... is not a number of 64 bits")
    try:
        n = int(text)
    except ValueError:
        raise ParseError("malformed", f"{what} {text[:40]!r} is not a number") from None
    if not -2**63 < n < 2**63:
        raise ParseError("malformed", f"{what} {text!r} is not a number of 64 bits")
    return n


def absolute_url(target: str, host: str | None, ctx: Context) -> str:
    """Form the site's absolute URL (scheme + host + path + query; fragment dropped) and police it."""
    if not target:
        raise ParseError("bad_target", "empty request target")
    low = target[:8].lower()
    h: str | None
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
    if has_surrogate(url):
        raise ParseError("bad_url", "lone surrogate in the URL")
    if token_count(url) > ctx.limits.max_tokens:
        raise ParseError("too_many_tokens", f"more than {ctx.limits.max_tokens} tokens")
    return url


def _join(scheme: str, host: str, path: str) -> str:
    """``scheme://host`` + path, the host lower-cased, without userinfo or the default port, and checked."""
    host = host.lower()
    if "@" in host:  # userinfo never belongs in a URL list
        host = host.rsplit("@", 1)[1]
    if (scheme == "http" and host.endswith(":80")) or (scheme == "https" and host.endswith(":443")):
        host = host.rsplit(":", 1)[0]
    if not host or not _HOST.match(host):
        raise ParseError("bad_url", f"bad host {host[:80]!r}")
    return f"{scheme}://{host}{path}"
