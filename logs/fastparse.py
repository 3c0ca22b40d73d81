"""Fast paths of the line parsers for the common formats: Apache/Nginx ``common``,
``combined``, ``vhost``, ``jsonl`` and ``tsv``.

Each fast parser takes only the lines whose result it can prove equal to the reference parser's
(:mod:`dustbuster.logs.parsers`) and hands every other line to that parser, so
records, skips, reject reasons and details are the reference's by construction:

* a CLF-family line: one regular expression for its head up to the size, whose language is a
  subset of the reference's with the same (deterministic) fields — ``"GET|HEAD|POST <printable
  ASCII target> HTTP/..."``, a three-digit status, a size of at most 18 digits or ``-`` — and
  ``str`` methods for the rest of the line (referer and user agent without backslashes, anything
  after them), where the reference's quoted-string alternation cost ~12 µs a line;
* a JSON line: json's own C scanner once (what ``json.loads`` does); a flat object whose numbers
  are finite and within 64 bits is taken, anything else (NaN, 1e400, nesting, bad types) goes to
  the reference;
* a TSV row: ``str.split`` on tabs, as the reference does; taken when the method is one of
  URL_METHODS (or there is no method column), status and size are ``-``, empty or up to 18 ASCII
  digits (what ``int`` reads as the reference's ``parse_int`` does; a status also not ``-`` or empty)
  and the target is plain (below);
* the URL: ``scheme://host`` (the reference's own ``_join``, remembered per scheme and host) + the
  target, for targets of printable ASCII without a space, within the length and token limits;
* the lines handed over meet the reference's own code with its quoted-string expression unrolled
  (same language, same groups, no alternation per character: :func:`_unrolled`).

tests/test_fastparse.py checks the equality on every line of tests/data/logs and on generated and
mutated lines (Hypothesis).
"""

from __future__ import annotations

import json
import math
import re
from typing import Literal

from dustbuster.core.errors import ParseError
from dustbuster.core.strictjson import check_json_value
from dustbuster.core.urls.tokens import token_count

from . import parsers as ref
from .parsers import parse_sketch
from .record import BODY_METHODS, URL_METHODS, Context, LogRecord, _join

# The head of a CLF line up to the size, as the reference reads it: \S+ fields, the bracketed
# date, the request "GET|HEAD|POST <target> HTTP/...", a three-digit status, a size of at most 18
# digits or "-".  The target: printable ASCII but space, '"' and '\' (the reference's split and
# URL checks then accept it as it is).  The rest of the line is checked with str methods (below):
# a regular expression's character classes cost ~20 ns a character here, str.split and find much less.
_HEAD = r'\S+ \S+ \S+ \[[^\]]*\] "(GET|HEAD|POST) ([!#-\[\]-~]+) HTTP/[^ "\\]*" ([0-9]{3}) ([0-9]{1,18}|-)'
_FAST_CLF = re.compile(_HEAD)
_FAST_VHOST = re.compile(r"([^\s\[]+) " + _HEAD)
_MAX_INT = 2**64
_REF_JSONL = ref.parse_jsonl


def _unrolled(rx: re.Pattern) -> re.Pattern:
    """The reference's expression with each quoted string ``"((?:[^"\\]|\\.)*)"`` written
    ``"([^"\\]*(?:\\.[^"\\]*)*)"``: the same language ((A|B)* = A*(BA*)*) and the same groups
    (a quoted string ends at its first unescaped quote either way), without an alternation per
    character; for the lines the fast path declines (and the non-matching ones: sniff)."""
    return re.compile(rx.pattern.replace(ref._Q, r'"([^"\\]*(?:\\.[^"\\]*)*)"'))


_SAME_COMMON, _SAME_COMBINED, _SAME_VHOST = (_unrolled(r) for r in (ref._RE_COMMON, ref._RE_COMBINED, ref._RE_VHOST))


_PREFIXES: dict[tuple[str, str], str] = {}  #: (scheme, host) -> "scheme://host", "" when rejected
_MAX_PREFIXES = 4096


def _new_prefix(scheme: str, host: str) -> str:
    """``scheme://host`` as the reference forms it (lower case, no user info or default port),
    or "" when the reference rejects the host; remembered (a bounded dict: a plain lookup is what
    the hot path can afford)."""
    try:
        prefix = _join(scheme, host, "")
    except ParseError:
        prefix = ""
    if len(_PREFIXES) >= _MAX_PREFIXES:
        _PREFIXES.clear()
    _PREFIXES[(scheme, host)] = prefix
    return prefix


def _prefix(scheme: str, host: str | None) -> str | None:
    if not host:
        return None
    p = _PREFIXES.get((scheme, host))
    if p is None:
        p = _new_prefix(scheme, host)
    return p or None


def _url(prefix: str | None, path: str, ctx: Context) -> str | None:
    """``prefix + path`` less its fragment, when within the limits; ``path`` is printable ASCII
    without a space (so the reference's control-character and surrogate checks pass)."""
    if prefix is None:
        return None
    if "#" in path:
        path = path.split("#", 1)[0]
    url = prefix + path
    n, limits = len(url), ctx.limits
    if n > limits.max_url_length:
        return None
    if n > limits.max_tokens and token_count(url) > limits.max_tokens:
        return None  # a token is at least one character: short URLs need no count
    return url


def fast_url(target: str, host: str | None, ctx: Context) -> str | None:
    """The reference's ``absolute_url(target, host, ctx)`` for the plain cases, else None (the
    caller then asks the reference, which gives the same URL or the reject)."""
    if not target.isascii() or not target.isprintable() or " " in target:
        return None
    if target[:1] == "/":
        h = host or ctx.site
        return _url(_prefix(ctx.scheme, h), target, ctx)
    if target.startswith(("http://", "https://")):
        scheme, rest = target.split("://", 1)
        slash = rest.find("/")
        h, path = (rest, "/") if slash < 0 else (rest[:slash], rest[slash:])
        return _url(_prefix(scheme, h), path, ctx)
    return None


def _clf(m: re.Match, host: str | None, ctx: Context) -> LogRecord | None:
    """The record of a fast-matched line (groups method, target, status, size), or None."""
    method, target, status, size = m.groups()[-4:]
    if target[0] == "/":  # the regular expression let only printable ASCII through
        h = host or ctx.site
        url = _url(_prefix(ctx.scheme, h), target, ctx)
    else:
        url = fast_url(target, host, ctx)
    if url is None:
        return None
    return LogRecord(url, int(status), int(size) if method == "GET" and size != "-" else None)


def _any_rest(rest: str) -> bool:
    """``rest`` matches the reference's ``(?:\\s.*)?$``: nothing, or whitespace then one line."""
    return not rest or (rest[0].isspace() and rest.find("\n", 1) < 0)


def _combined_rest(line: str, pos: int) -> bool:
    """``line[pos:]`` matches the reference's `` "Q" "Q"(?:\\s.*)?$`` (referer, user agent, anything
    after): taken here only without backslashes, where a quoted string is ``"[^"]*"``."""
    if line.find("\\", pos) >= 0:
        return False
    parts = line[pos:].split('"', 4)
    return len(parts) == 5 and parts[0] == " " and parts[2] == " " and _any_rest(parts[4])


def parse_common(line: str, ctx: Context) -> LogRecord:
    m = _FAST_CLF.match(line)
    if m is not None:
        rest = line[m.end():]
        if not rest or rest.isspace():  # the reference's \s*$
            rec = _clf(m, None, ctx)
            if rec is not None:
                return rec
    return ref.parse_common(line, ctx, _SAME_COMMON)


def parse_combined(line: str, ctx: Context) -> LogRecord:
    m = _FAST_CLF.match(line)
    if m is not None and _combined_rest(line, m.end()):
        rec = _clf(m, None, ctx)
        if rec is not None:
            return rec
    return ref.parse_combined(line, ctx, _SAME_COMBINED)


def parse_vhost(line: str, ctx: Context) -> LogRecord:
    m = _FAST_VHOST.match(line)
    if m is None or not _any_rest(line[m.end():]):
        return ref.parse_vhost(line, ctx, _SAME_VHOST)
    vhost = m.group(1)  # the reference's port handling
    if vhost.endswith(":80") and ctx.scheme == "http":
        vhost = vhost[:-3]
    elif vhost.endswith(":443"):
        vhost = vhost[:-4]
    return _clf(m, vhost, ctx) or ref.parse_vhost(line, ctx, _SAME_VHOST)


#: json.loads's own scanner (the C one), called without json.loads's layers of Python
_SCAN = json.JSONDecoder().scan_once  # type: ignore[attr-defined]  # set by JSONDecoder.__init__, not in typeshed


def _plain_json(obj: object) -> bool:
    """True when ``loads_strict`` would accept this parsed object as it is: a dict whose numbers
    are finite and within 64 bits, nested at most MAX_JSON_DEPTH deep."""
    if type(obj) is not dict:
        return False
    for v in obj.values():
        t = type(v)
        if t is str:
            continue
        if t is int:
            if not -_MAX_INT < v < _MAX_INT:
                return False
        elif t is float:
            if not math.isfinite(v):
                return False
        elif t is dict or t is list:
            try:
                check_json_value(obj)
            except ParseError:
                return False
            return True
    return True


def _json_int(v: object, default: int | None) -> int | None | bool:
    """The reference's ``_int(str(v))`` for None and 64-bit ints; False for anything else."""
    if v is None:
        return default
    if type(v) is int and -2**63 < v < 2**63:
        return v
    return False


def _json_digest(v: object) -> str | None | Literal[False]:
    """The reference's ``_digest(v)`` when it accepts v; False when the reference must decide."""
    if not isinstance(v, str) or not v:
        return None
    if len(v) <= 512 and v.isascii() and v.isprintable() and " " not in v:
        return v
    return False


def parse_jsonl(line: str, ctx: Context) -> LogRecord:
    rec = _fast_jsonl(line, ctx)
    return rec if rec is not None else _REF_JSONL(line, ctx)


def _fast_jsonl(line: str, ctx: Context) -> LogRecord | None:
    if line[:1] != "{":
        return None
    try:  # what json.loads does, less its wrappers: scan, then only JSON whitespace may follow
        obj, end = _SCAN(line, 0)
    except Exception:  # noqa: BLE001 - whatever it is, the reference decides
        return None
    if (end != len(line) and line[end:].strip(" \t\n\r")) or not _plain_json(obj):
        return None
    target = obj.get("url") or obj.get("path")
    method = obj.get("method", "GET")
    if type(target) is not str or not target or type(method) is not str or method not in URL_METHODS:
        return None
    status, size = _json_int(obj.get("status"), 200), _json_int(obj.get("size"), None)
    digest = _json_digest(obj.get("digest"))
    if status is False or size is False or digest is False:
        return None
    host = obj.get("host")
    url = fast_url(target, host if type(host) is str else None, ctx)
    if url is None:
        return None
    sketch = obj.get("sketch")
    if sketch is not None:
        try:
            sketch = parse_sketch(sketch)
        except ParseError:
            return None
    return LogRecord(url, status, size if method in BODY_METHODS else None, digest, sketch)


def _plain_int(text: str) -> int | None | bool:
    """The reference's ``parse_int`` for ``-``, nothing and up to 18 ASCII digits; False otherwise."""
    if text.isdigit() and len(text) <= 18 and text.isascii():
        return int(text)
    return None if text in ("-", "") else False


def parse_tsv(line: str, ctx: Context) -> LogRecord:
    cols = ctx.tsv_columns
    rec = _fast_tsv(line, ctx, cols) if cols is not None else None
    return rec if rec is not None else ref.parse_tsv(line, ctx)


def _fast_tsv(line: str, ctx: Context, cols: dict[str, int]) -> LogRecord | None:
    """The reference's record for a TSV row whose method is one of URL_METHODS (or absent),
    status up to 18 ASCII digits, size that or ``-``, empty (or absent) and target plain
    (:func:`fast_url`); None for anything else (the reference then decides, and raises what it
    raises, in its order)."""
    f = line.rstrip("\n").split("\t")
    if len(f) <= max(cols.values()):
        return None
    m = cols.get("method")
    method = f[m] if m is not None else "GET"
    status = f[cols["status"]]
    if method not in URL_METHODS or not (status.isdigit() and len(status) <= 18 and status.isascii()):
        return None
    s = cols.get("size")
    size = _plain_int(f[s]) if s is not None else None
    if size is False:
        return None
    h = cols.get("host")
    url = fast_url(f[cols["url"]], f[h] if h is not None else None, ctx)
    if url is None:
        return None
    return LogRecord(url, int(status), (size or None) if method in BODY_METHODS else None)
