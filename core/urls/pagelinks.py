"""The same-origin links of a fetched page (ours, beyond the papers; docs/validation.md
"Links of fetched pages").

The papers learn only from logs (WWW 2007 §4: the URL list is the log's).  The pages the validator
fetches name more URLs of the site; they become URLs of the site's URL list *without sizes* (no
Figure 1 evidence of their own), for the parameter and scope rules and for validation samples.
:class:`dustbuster.core.validation.identity._Head` collects the hrefs while it reads the title (one parse of
the document's first :data:`~dustbuster.core.validation.identity.HEAD_BYTES` bytes); :func:`same_origin_links`
turns them into URLs:

* which hrefs: ``<a href>`` and ``<area href>`` (what a visitor follows), not ``<link>`` (the
  declared canonical is the page's own identity, :mod:`dustbuster.core.validation.identity`; ``alternate``
  links are mostly feeds and translations, not pages of the log's kind); a link marked
  ``rel="nofollow"``, and every link of a page whose robots meta says ``nofollow`` or ``none``, is
  left out: the site asks crawlers not to follow them, and the validator would fetch them;
* resolved against the page's final URL (after redirects), or its first ``<base href>`` when that
  is http(s); the fragment dropped; normalized (:func:`dustbuster.core.urls.normalize.normalize`: RFC 3986,
  as the canonizer sees URLs);
* kept only when http(s) with the page's scheme, host and port, at most :data:`MAX_URL` characters,
  and free of control characters (what the raw topic accepts);
* de-duplicated in first-seen order, at most :data:`MAX_LINKS` per page, from at most
  :data:`MAX_HREFS` distinct hrefs (a page of thousands of external links costs bounded work).

Nothing here raises: an href that does not parse is left out.
"""

from __future__ import annotations

import re
from typing import Iterable
from urllib.parse import urljoin

from dustbuster.core.errors import ParseError
from dustbuster.core.urls.normalize import MAX_URL, normalize

#: same-origin links kept per page
MAX_LINKS = 500
#: distinct hrefs of a page looked at (the rest are not resolved)
MAX_HREFS = 5000
#: hrefs that name no page of the site, skipped before resolving
_NOT_A_PAGE = ("#", "javascript:", "mailto:", "tel:", "data:", "about:", "blob:", "ftp:", "file:")
#: characters no link we keep may hold: C0 controls, space, DEL, lone surrogates, U+FFFD (bytes
#: that were not UTF-8: the URL's real bytes are lost)
_BAD = re.compile("[\x00-\x20\x7f\ud800-\udfff\ufffd]")
#: an href holding these is left out before it is escaped: it lost its bytes (not UTF-8), is no text,
#: holds a control character other than the tab and line ends browsers strip (NUL reads as U+FFFD
#: there), or a backslash (browsers read it as "/" in http(s) URLs, urljoin does not: ``/\\other.host``)
_LOST = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f\ud800-\udfff\ufffd\\\\]")


def origin(url: str) -> str:
    """``scheme://host[:port]`` of a normalized http(s) URL ("" for anything else)."""
    if not url.startswith(("http://", "https://")):
        return ""
    scheme, rest = url.split("://", 1)
    host = rest.split("/", 1)[0].split("?", 1)[0]
    return f"{scheme}://{host}" if host else ""


def _other_host(href: str, own: str) -> bool:
    """``href`` is plainly absolute (``http://``, ``https://``, ``//``) and names another authority
    than ``own`` (``scheme://host[:port]``, normalized): skipped before the costly resolving.  An
    authority written otherwise (upper case, the default port) is left to :func:`same_origin_links`."""
    head = href[:8].lower()
    if head.startswith("//"):
        rest = href[2:]
    elif head.startswith(("http://", "https://")):
        rest = href.split("//", 1)[1]
    else:
        return False
    end = len(rest)
    for sep in "/?#":
        i = rest.find(sep, 0, end)
        if i >= 0:
            end = i
    auth = rest[:end].lower()
    host = own.split("://", 1)[1]
    return auth != host and auth.split(":", 1)[0] != host.split(":", 1)[0]


def _absolute(href: str, base: str) -> str:
    """``href`` resolved against ``base`` and normalized, or "" when it is not an http(s) URL we keep."""
    if len(href) > MAX_URL or _LOST.search(href):
        return ""
    try:
        url = normalize(urljoin(base, href))
    except (ParseError, ValueError):
        return ""
    if len(url) > MAX_URL or _BAD.search(url):
        return ""
    return url


def page_base(final_url: str, base_href: str = "") -> str:
    """The URL the page's links are resolved against: its ``<base href>`` (itself resolved against
    the final URL) when that is http(s), else the final URL."""
    if base_href:
        b = _absolute(base_href.strip(), final_url)
        if origin(b):
            return b
    return final_url


def same_origin_links(hrefs: Iterable[str], final_url: str, base_href: str = "") -> tuple[str, ...]:
    """The page's links as the module docstring says: absolute, normalized, same origin as
    ``final_url``, distinct, first seen first, at most :data:`MAX_LINKS`."""
    try:
        own = origin(normalize(final_url))
    except (ParseError, ValueError):
        return ()
    if not own:
        return ()
    base = page_base(final_url, base_href)
    out: dict[str, None] = {}
    seen: set[str] = set()
    for href in hrefs:
        href = href.strip()
        if not href or href in seen or href.lower().startswith(_NOT_A_PAGE):
            continue
        seen.add(href)
        if _other_host(href, own):
            continue
        url = _absolute(href, base)
        if url and origin(url) == own:
            out[url] = None
            if len(out) >= MAX_LINKS:
                break
        if len(seen) >= MAX_HREFS:
            break
    return tuple(out)


__all__ = ["MAX_HREFS", "MAX_LINKS", "origin", "page_base", "same_origin_links"]
