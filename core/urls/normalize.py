"""The universal normalization step applied before a site's rules: RFC 3986 §6.2.2 and
§6.2.3 syntax- and scheme-based normalization, by yarl (aio-libs; already installed with aiohttp).

What it does, with yarl's behaviour written down and tested (tests/test_normalize.py):

* scheme and host to lower case; IDNA hosts to their ``xn--`` form (§6.2.2.1);
* percent-encodings: hex digits upper case, unreserved characters decoded, a ``%`` that starts no
  valid escape encoded as ``%25`` (§6.2.2.2); in the query yarl also decodes the reserved
  characters that need no escaping there (``%2F`` → ``/``, ``%3F`` → ``?``) but keeps the
  separators ``%26`` ``%3D`` ``%2B`` and ``%23`` encoded — servers decode such values alike;
* dot segments removed (§6.2.2.3); the default port of http/https dropped and an empty path
  becomes ``/`` (§6.2.3);
* the fragment is dropped (our choice: a crawler never sends it; log URLs have none either);
* an empty query (``/p?``) loses its ``?`` (yarl).

It does not sort parameters or touch letter case in paths: those are site rules' business
(DustBuster learns them).  A string yarl cannot parse (``http://h:port/``) raises
:class:`~dustbuster.core.errors.ParseError`; callers keep such a URL as it is and count it.

Speed: a URL already in normal form is returned as it is (one regular expression);
the common http(s) URLs that need work (scheme or host case, default port, fragment, dot segments,
escapes) are normalized by :mod:`dustbuster.core.urls.normfast` without yarl, with yarl's exact result; the rest
(user info, IPv6, non-ASCII, other schemes...) go to yarl.
"""

from __future__ import annotations

import re
from functools import lru_cache

from dustbuster.core.errors import ParseError
from dustbuster.core.urls.normfast import fast_normalize

MAX_URL = 8192

# URLs that are certainly normalized already (most URLs a crawler sees): lower-case http(s)
# scheme and plain lower-case host, no port or user info, path and query of characters that need
# no escaping and have no escape, non-empty query, no fragment.  Dot segments and xn-- hosts are
# checked in code.  tests/test_canonizer.py checks (Hypothesis) that yarl leaves every such URL
# unchanged, so skipping it changes no result.
_PLAIN = re.compile(r"https?://([a-z0-9](?:[a-z0-9.-]*[a-z0-9])?)(/[A-Za-z0-9\-._~!$&'()*+,;=:@/]*)"
                    r"(?:\?[A-Za-z0-9\-._~!$&'()*+,;=:@/?]+)?")


def already_normal(url: str) -> bool:
    m = _PLAIN.fullmatch(url)
    if m is None:
        return False
    host, path = m.group(1), m.group(2)
    if ".." in host or "xn--" in host or "-." in host or ".-" in host:
        return False
    return not ("/./" in path or "/../" in path or path.endswith(("/.", "/..")))


def normalize(url: str) -> str:
    """RFC 3986 normalization of ``url`` (see the module docstring).  Raises ParseError."""
    if already_normal(url):
        return url
    if len(url) <= MAX_URL:
        out = fast_normalize(url)  # yarl's result for the common forms, without yarl
        if out is not None:
            return out
    return _normalize(url)


@lru_cache(maxsize=65536)
def _normalize(url: str) -> str:
    """yarl's normalization (the reference; dustbuster.core.urls.normfast gives the same for the forms it takes)."""
    from yarl import URL

    if len(url) > MAX_URL:
        raise ParseError("url_too_long", f"{len(url)} characters")
    try:
        u = URL(url)
        if u.raw_fragment:
            u = u.with_fragment(None)
        out = str(u)
        if u.absolute and u.raw_path == "/" and not out.endswith("/") and not u.raw_query_string:
            out += "/"  # yarl prints "http://h" for "http://h/": RFC 3986 §6.2.3 wants the "/"
        return out
    except Exception as exc:  # noqa: BLE001 - yarl raises ValueError, but also IndexError ("http://[::1]:808@/")
        raise ParseError("bad_url", f"{type(exc).__name__}: {str(exc)[:200]}") from None


def normalize_or_keep(url: str) -> tuple[str, bool]:
    """``(normalized, True)``, or ``(url, False)`` when it cannot be parsed."""
    try:
        return normalize(url), True
    except ParseError:
        return url, False
