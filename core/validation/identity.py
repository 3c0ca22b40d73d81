"""What a fetched page says about its own identity (ours, beyond the papers; docs/validation.md
"Page identity").

The papers compare two pages by their text alone (WWW 2007 §5.3, thesis §6.3).  Text that looks
the same today can still be two pages (two empty listings, two look-alike pages of one template,
two URLs answered with one error page).  The site itself says more, and every fetch keeps it here,
for the validator (:mod:`dustbuster.core.validation.validate`) and ``dustbuster truth`` alike:

* ``status`` and the redirect ``chain`` (the URLs answered 30x, in order) with the ``final_url``;
* ``canonical``: the declared canonical URL — ``<link rel="canonical" href>`` (RFC 6596) in the
  document, or an HTTP ``Link: <…>; rel="canonical"`` header (the header wins).  Resolved against
  the page's final URL, its fragment dropped.  A document that declares *several different*
  canonicals declares none (search engines ignore such pages' declarations too); a ``<link>``
  in ``<body>`` counts as well (what browsers and most crawlers accept);
* ``title``: the text of the first ``<title>``, entities decoded;
* ``robots``: the ``<meta name="robots">`` content, lower-cased (``noindex``, ``nofollow``, …);
* ``links``: the page's same-origin ``<a href>`` / ``<area href>`` links, absolute and normalized, at
  most 500, read from the same first :data:`HEAD_BYTES` bytes (:mod:`dustbuster.core.urls.pagelinks`;
  they become listed URLs of the site); not compared, not in :meth:`PageIdentity.to_json`;
* ``sketch``: the validator's content sketch (:mod:`dustbuster.core.validation.sketch`) and ``words``, a
  16-min-hash sketch of the page's word 3-grams with digits masked (the soft-error signature,
  :mod:`dustbuster.core.validation.softerror`: an error page templated with the URL's values keeps most of them).

Title normalisation (:func:`normalize_title`): entities decoded, Unicode NFKC, case folded, every
run of non-word characters one space, stripped.  Two titles are "the same" when their normal forms
are equal; an empty title says nothing.  On real pages: ``"Foo &amp; Bar – MyWiki"`` and
``"foo & bar - mywiki"`` are the same, ``"fonts-noto-mono"`` and ``"fonts-droid-fallback"`` are not.
"""

from __future__ import annotations

import html
import re
import unicodedata
from dataclasses import dataclass, field
from html.parser import HTMLParser
from typing import Any
from urllib.parse import urljoin, urldefrag

from dustbuster.core.urls.pagelinks import MAX_HREFS, same_origin_links
from dustbuster.core.validation.sketch import Sketch, document_words, minhash, shingles

#: bytes of a document searched for ``<title>``, canonical links, robots meta, ``<base href>`` and the
#: ``<a>``/``<area>`` links (heads are small; a link in a huge body past this is not seen)
HEAD_BYTES = 262_144
WORD_K = 16
WORD_N = 3
_NONWORD = re.compile(r"[\W_]+", re.UNICODE)
_DIGITS = re.compile(r"\d+")
_LINK_CANONICAL = re.compile(r'<\s*([^>]*)>\s*((?:;[^,]*)*)', re.S)


class _Head(HTMLParser):
    """Title, canonical links, robots meta, first ``<base href>`` and the followable hrefs
    (``<a>``, ``<area>``, not ``rel="nofollow"``; at most :data:`~dustbuster.core.urls.pagelinks.MAX_HREFS`
    distinct) of a document (anywhere in it)."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.title: str | None = None
        self._in_title = False
        self._title_parts: list[str] = []
        self.canonicals: list[str] = []
        self.robots: list[str] = []
        self.base: str | None = None
        self.hrefs: dict[str, None] = {}

    def handle_starttag(self, tag, attrs):
        a = {k.lower(): (v or "") for k, v in attrs}
        if tag in ("a", "area") and a.get("href") and len(self.hrefs) < MAX_HREFS:
            if "nofollow" not in a.get("rel", "").lower().split():
                self.hrefs[a["href"]] = None
        elif tag == "base" and self.base is None and a.get("href", "").strip():
            self.base = a["href"]
        elif tag == "title" and self.title is None:
            self._in_title = True
        elif tag == "link" and "canonical" in a.get("rel", "").lower().split() and a.get("href", "").strip():
            self.canonicals.append(a["href"].strip())
        elif tag == "meta" and a.get("name", "").lower() == "robots":
            self.robots.append(a.get("content", "").lower())

    handle_startendtag = handle_starttag

    def handle_endtag(self, tag):
        if tag == "title" and self._in_title:
            self._in_title = False
            self.title = "".join(self._title_parts)

    def handle_data(self, data):
        if self._in_title:
            self._title_parts.append(data)


@dataclass(frozen=True)
class HeadFacts:
    title: str = ""
    canonicals: tuple[str, ...] = ()
    robots: str = ""
    base: str = ""  #: the first ``<base href>``, as written
    hrefs: tuple[str, ...] = ()  #: followable ``<a>``/``<area>`` hrefs, as written, distinct, in order

    @property
    def nofollow(self) -> bool:
        """The robots meta asks not to follow the page's links (``nofollow`` or ``none``)."""
        return bool({"nofollow", "none"} & set(re.split(r"[,\s]+", self.robots)))


def parse_head(body: bytes, content_type: str = "text/html") -> HeadFacts:
    """The title, canonical hrefs (as written), robots meta, ``<base href>`` and followable hrefs of an
    HTML document; empty for others."""
    ctype = (content_type or "").split(";")[0].strip().lower()
    if ctype not in ("text/html", "application/xhtml+xml", ""):
        return HeadFacts()
    p = _Head()
    try:
        p.feed(body[:HEAD_BYTES].decode("utf-8", "replace"))
        p.close()
    except Exception:  # noqa: BLE001 - html.parser is lenient; a failure leaves what was found so far
        pass
    title = p.title if p.title is not None else "".join(p._title_parts)
    return HeadFacts(" ".join(title.split()), tuple(p.canonicals), ",".join(r for r in p.robots if r), p.base or "",
                     tuple(p.hrefs))


def link_header_canonical(value: str) -> list[str]:
    """The targets of ``rel="canonical"`` in an HTTP Link header value (RFC 8288)."""
    out = []
    for m in _LINK_CANONICAL.finditer(value or ""):
        params = m.group(2).lower()
        if re.search(r';\s*rel\s*=\s*"?([^";]*\s)?canonical(\s[^";]*)?"?\s*(;|$)', params):
            out.append(m.group(1).strip())
    return out


def resolve_canonical(hrefs: list[str] | tuple[str, ...], base: str) -> str:
    """One absolute canonical URL from the declared hrefs, or "" when none or several different."""
    urls = {_joined(base, h) for h in hrefs if h}
    urls = {u for u in urls if u.startswith(("http://", "https://"))}
    return urls.pop() if len(urls) == 1 else ""


def _joined(base: str, href: str) -> str:
    """``href`` resolved against ``base``, fragment dropped; "" when urljoin refuses it (``A://[``)."""
    try:
        return urldefrag(urljoin(base, href))[0]
    except ValueError:
        return ""


def normalize_title(title: str) -> str:
    """A title's normal form (module docstring)."""
    t = unicodedata.normalize("NFKC", html.unescape(title or "")).casefold()
    return _NONWORD.sub(" ", t).strip()


def word_sketch(body: bytes, content_type: str = "text/html") -> Sketch | None:
    """16 min-hashes of the document's word 3-grams, digits masked (None for a document without
    words): a page templated with the URL's values (``revision #123 of Foo does not exist``) keeps
    most of them, while two texts that share a vocabulary but not their sentences do not."""
    ws = [_DIGITS.sub("#", w) for w in document_words(body, content_type)]
    if not ws:
        return None
    return Sketch("words", minhash(shingles(ws, WORD_N), WORD_K), "", len(ws))


@dataclass(frozen=True)
class PageIdentity:
    """What one fetch says about the page's identity (module docstring)."""

    url: str
    status: int | None = None
    final_url: str = ""
    chain: tuple[str, ...] = ()  #: the URLs that answered 30x, in order (url first when it redirected)
    canonical: str = ""  #: the declared canonical URL, absolute, or ""
    title: str = ""
    robots: str = ""
    sketch: Sketch | None = None
    words: Sketch | None = field(default=None, compare=False)
    links: tuple[str, ...] = field(default=(), compare=False)  #: same-origin links (core/urls/pagelinks.py)

    @property
    def redirected(self) -> bool:
        return bool(self.chain)

    @property
    def norm_title(self) -> str:
        return normalize_title(self.title)

    def declared(self) -> str:
        """The URL this page says is its own, when other than the one asked for: where it redirects
        to, else its declared canonical; "" when neither."""
        for c in (self.final_url if self.chain else "", self.canonical):
            if c and c != self.url:
                return c
        return ""

    def to_json(self, with_sketch: bool = True) -> dict:
        d: dict[str, Any] = {"url": self.url, "status": self.status, "final_url": self.final_url or self.url}
        for k in ("chain", "canonical", "title", "robots"):
            if getattr(self, k):
                d[k] = list(self.chain) if k == "chain" else getattr(self, k)
        if self.sketch is not None and with_sketch:
            d["sketch"] = self.sketch.to_json()
        return d

    @classmethod
    def from_json(cls, d: dict) -> "PageIdentity":
        sk = d.get("sketch")
        return cls(str(d.get("url") or ""), d.get("status"), str(d.get("final_url") or ""),
                   tuple(str(x) for x in d.get("chain") or ()), str(d.get("canonical") or ""),
                   str(d.get("title") or ""), str(d.get("robots") or ""),
                   Sketch.from_json(sk) if isinstance(sk, dict) else None)


def page_identity(url: str, final_url: str, chain: list[str] | tuple[str, ...], status: int | None, body: bytes,
                  content_type: str, link_header: str = "", page_sketch: Sketch | None = None) -> PageIdentity:
    """The identity of a page answered ``status`` at ``final_url`` after ``chain``."""
    facts = parse_head(body, content_type)
    header = link_header_canonical(link_header)
    canonical = resolve_canonical(header, final_url) if header else resolve_canonical(facts.canonicals, final_url)
    links = () if facts.nofollow else same_origin_links(facts.hrefs, final_url or url, facts.base)
    return PageIdentity(url, status, final_url, tuple(chain), canonical, facts.title, facts.robots, page_sketch,
                        word_sketch(body, content_type), links)


__all__ = ["HeadFacts", "PageIdentity", "link_header_canonical", "normalize_title", "page_identity", "parse_head",
           "resolve_canonical", "word_sketch"]
