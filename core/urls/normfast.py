"""RFC 3986 normalization of the common URLs without yarl: exactly what
:func:`dustbuster.core.urls.normalize._normalize` (yarl) returns, for the URLs this module understands, else None.

Understood: printable ASCII ``http``/``https`` URLs (scheme in any case) whose authority is a
host of ``[A-Za-z0-9.-]`` with an optional port, no user info.  Done as yarl 1.x does it:

* scheme and host to lower case (an IPv4 address is its own compressed form);
* the port as a number, dropped when it is the scheme's default (80, 443), ``h:`` = ``h``;
* path and query requoted (yarl's ``PATH_REQUOTER`` and ``QUERY_REQUOTER``): an escape of a
  character that needs none is decoded, other escapes get upper-case hex, a ``%`` that starts no
  escape becomes ``%25``, any other character outside the component's safe set is escaped (a
  space in the query becomes ``+``); the separators ``/`` ``+`` in the path and ``=`` ``+`` ``&``
  ``;`` in the query stay escaped when they were;
* dot segments removed (yarl's ``normalize_path``); an empty path is ``/``, an empty query is dropped;
* the fragment dropped.

Anything else (user info, IPv6, non-ASCII, control characters, other schemes, ports over 5 digits)
returns None and goes to yarl.  tests/test_normfast.py checks the equality with yarl (Hypothesis,
thousands of examples, and every URL of tests/data/logs with variants that need the work).
"""

from __future__ import annotations

import re
import string

_ALLOWED = string.ascii_letters + string.digits + "-._~" + "!$'()*,"
_PATH_SAFE, _PATH_PROTECTED = _ALLOWED + "+&=;" + "@:" + "/", "/+"
_QUERY_SAFE, _QUERY_PROTECTED = _ALLOWED + "?/:@" + "=+&;", "=+&;"
_HEX = "0123456789ABCDEFabcdef"
_DEFAULT_PORTS = {"http": 80, "https": 443}

_AUTHORITY = r"([A-Za-z][A-Za-z0-9+.-]*)://([A-Za-z0-9.-]+)(?::([0-9]{0,5}))?"
_SPLIT = re.compile(_AUTHORITY + r"(/[^?#]*)?(?:\?([^#]*))?(?:#.*)?", re.S)
# the same when path and query need no requoting (no escape, every character safe): most URLs
_SPLIT_SAFE = re.compile(_AUTHORITY + f"(/[{re.escape(_PATH_SAFE)}]*)?(?:\\?([{re.escape(_QUERY_SAFE)}]*))?(?:#.*)?", re.S)


def _replacements(safe: str, protected: str, qs: bool) -> dict[str, str]:
    """What yarl's requoter writes for each escape ``%XX`` (any case) and each unsafe ASCII character."""
    out = {}
    for v in range(256):
        c, upper = chr(v), f"%{v:02X}"
        keep = v < 128 and c in safe and c not in protected
        for a in {upper[1], upper[1].lower()}:
            for b in {upper[2], upper[2].lower()}:
                out["%" + a + b] = c if keep else upper
    for v in range(128):
        c = chr(v)
        if c not in safe:
            out[c] = "+" if qs and c == " " else f"%{v:02X}"
    return out


def _requoter(safe: str, protected: str, qs: bool):
    table = _replacements(safe, protected, qs)
    work = re.compile(f"%[{_HEX}]{{2}}|[^{re.escape(safe)}]")

    def requote(text: str) -> str:
        if work.search(text) is None:
            return text
        return work.sub(lambda m: table[m.group()], text)

    return requote


_requote_path = _requoter(_PATH_SAFE, _PATH_PROTECTED, False)
_requote_query = _requoter(_QUERY_SAFE, _QUERY_PROTECTED, True)


def _has_dot_segments(path: str) -> bool:
    return "/./" in path or "/../" in path or path.endswith(("/.", "/.."))


def remove_dot_segments(path: str) -> str:
    """yarl's ``normalize_path`` for a path that starts with ``/``: ``.`` dropped, ``..`` drops
    the segment before it (never the root), a path ending in ``.`` or ``..`` ends with ``/``."""
    segments = path[1:].split("/")
    out: list[str] = []
    for seg in segments:
        if seg == "..":
            if out:
                out.pop()
        elif seg != ".":
            out.append(seg)
    if segments[-1] in (".", ".."):
        out.append("")
    return "/" + "/".join(out)


def fast_normalize(url: str) -> str | None:
    """yarl's normalization of ``url`` (as :func:`dustbuster.core.urls.normalize._normalize` renders it), or None
    when ``url`` is not one of the common forms this function handles."""
    if not url.isascii() or not url.isprintable():
        return None
    m = _SPLIT_SAFE.fullmatch(url)
    requote = m is None
    if m is None:  # requote
        m = _SPLIT.fullmatch(url)
        if m is None:
            return None
    scheme, host, port, path, query = m.groups()
    scheme = scheme.lower()
    default = _DEFAULT_PORTS.get(scheme)
    if default is None:
        return None
    netloc = host.lower()
    if port:
        p = int(port)
        if p > 65535:
            return None
        if p != default:
            netloc = f"{netloc}:{p}"
    if path:
        if requote:
            path = _requote_path(path)
        if "." in path and _has_dot_segments(path):
            path = remove_dot_segments(path)
    else:
        path = "/"
    if query:
        return f"{scheme}://{netloc}{path}?{_requote_query(query) if requote else query}"
    return f"{scheme}://{netloc}{path}"
