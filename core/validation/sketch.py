"""Content sketches for validation (thesis §6.3; WWW 2007 §5.3 "DocSketch").

* Text and HTML: the visible text's words, all word n-grams (n = 10, "shingles"), each hashed;
  the sketch is the minimum hash under k independent hash functions (k = 4 in the thesis).  The
  fraction of equal minima estimates the resemblance |S(A) ∩ S(B)| / |S(A) ∪ S(B)|.
  Similar: "all 4 of 4 equal" (the thesis' default, ``threshold = 1.0``) or a lower fraction
  ("two of the four", §6.3, for print versions with extra chrome).
* Anything else (images, PDFs as bytes): an exact content signature, xxhash64 of the body (the
  content signature of ../shared/papers/xxhash-dedup.txt, §5 step 5).
* A text shorter than n words has a single shingle: the whole text.

Choices: visible text = the HTML with ``script``, ``style``, ``noscript``, ``template`` and ``head``
removed, entities decoded; words = maximal runs of letters/digits (Unicode), lower-cased.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from html.parser import HTMLParser
from typing import Any, Mapping

from xxhash import xxh3_64_intdigest, xxh64_hexdigest

SHINGLE_N = 10
K = 4
_WORD = re.compile(r"\w+", re.UNICODE)
_HIDDEN = {"script", "style", "noscript", "template", "head", "title"}
_TEXT_TYPES = ("text/", "application/xhtml", "application/xml", "application/json")


class _Visible(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.parts: list[str] = []
        self.hidden = 0

    def handle_starttag(self, tag, attrs):
        if tag in _HIDDEN:
            self.hidden += 1

    def handle_endtag(self, tag):
        if tag in _HIDDEN and self.hidden:
            self.hidden -= 1

    def handle_data(self, data):
        if not self.hidden:
            self.parts.append(data)


def visible_text(html: str) -> str:
    p = _Visible()
    try:
        p.feed(html)
        p.close()
    except Exception:  # noqa: BLE001 - html.parser is lenient; any failure falls back to the raw text
        return html
    return " ".join(p.parts)


def words(text: str) -> list[str]:
    return [w.lower() for w in _WORD.findall(text)]


def shingles(ws: list[str], n: int = SHINGLE_N) -> set[int]:
    """Hashed word n-grams (64-bit)."""
    if not ws:
        return set()
    if len(ws) < n:
        return {xxh3_64_intdigest(" ".join(ws).encode())}
    return {xxh3_64_intdigest(" ".join(ws[i:i + n]).encode()) for i in range(len(ws) - n + 1)}


def minhash(sh: set[int], k: int = K) -> tuple[int, ...]:
    """k minima under k hash functions (xxh3 with seeds 1..k over the shingle's 8 bytes)."""
    if not sh:
        return ()
    raw = [x.to_bytes(8, "little") for x in sh]
    return tuple(min(xxh3_64_intdigest(b, seed=s) for b in raw) for s in range(1, k + 1))


@dataclass(frozen=True, slots=True)
class Sketch:
    """A document's sketch: min-hashes of its shingles (text) or its exact digest (other)."""

    kind: str  #: "text" or "digest"
    minhashes: tuple[int, ...] = ()
    digest: str = ""
    words: int = 0

    def to_json(self) -> dict:
        return {"kind": self.kind, "minhashes": list(self.minhashes), "digest": self.digest, "words": self.words}

    @classmethod
    def from_json(cls, d: Mapping[str, Any]) -> "Sketch":
        return cls(str(d["kind"]), tuple(int(x) for x in d.get("minhashes") or ()), str(d.get("digest") or ""),
                   int(d.get("words") or 0))


#: what a host of the site becomes in a page's words (:func:`site_hosts_pattern`)
SITE_HOST = "sitehost"


def site_hosts_pattern(hosts: "tuple[str, ...] | list[str] | frozenset[str]") -> "re.Pattern[str] | None":
    """A regex of the site's host names (with an optional port), longest first: a page that prints
    its own host (a feed's links, a permalink, "you are on www.x") is the same page under each of
    the site's aliases, so those names are one word in its sketch (ours, beyond the papers;
    docs/validation.md "Host aliases").

    >>> site_hosts_pattern(["wiki.test", "www.wiki.test"]).sub(SITE_HOST, "see http://www.wiki.test:8080/a or wiki.test")
    'see http://sitehost/a or sitehost'
    """
    names = sorted({h.lower() for h in hosts if h}, key=lambda h: (-len(h), h))
    if not names:
        return None
    return re.compile(r"(?i)(?<![\w.-])(?:" + "|".join(re.escape(h) for h in names) + r")(?::\d+)?(?![\w-])")


def document_words(body: bytes, content_type: str = "text/html",
                   hosts: "re.Pattern[str] | None" = None) -> list[str]:
    """The words a document is sketched by: the visible text of HTML (scripts, styles and head
    removed), the text of other text types; [] for a document that is not text or has no word
    (it is then compared by its exact digest).  ``hosts``: the site's host names
    (:func:`site_hosts_pattern`), each written as one word."""
    ctype = (content_type or "").split(";")[0].strip().lower()
    if not (ctype.startswith(_TEXT_TYPES) or not ctype):
        return []
    text = body.decode("utf-8", "replace")
    if ctype in ("text/html", "application/xhtml+xml") or (not ctype and "<html" in text[:2000].lower()):
        text = visible_text(text)
    if hosts is not None:
        text = hosts.sub(SITE_HOST, text)
    return words(text)


def sketch(body: bytes, content_type: str = "text/html", k: int = K, n: int = SHINGLE_N,
           hosts: "re.Pattern[str] | None" = None) -> Sketch:
    ws = document_words(body, content_type, hosts)
    if ws:
        return Sketch("text", minhash(shingles(ws, n), k), "", len(ws))
    return Sketch("digest", (), xxh64_hexdigest(body), 0)


def resemblance(a: Sketch, b: Sketch) -> float:
    """Estimated resemblance (Jaccard of the shingle sets): the fraction of equal min-hashes; exact
    digests compare 0 or 1; text never resembles a digest."""
    if a.kind != b.kind:
        return 0.0
    if a.kind == "digest":
        return 1.0 if a.digest == b.digest else 0.0
    n = min(len(a.minhashes), len(b.minhashes))
    if n == 0:
        return 0.0
    return sum(1 for x, y in zip(a.minhashes, b.minhashes) if x == y) / n


def similar(a: Sketch, b: Sketch, threshold: float = 1.0) -> bool:
    """Thesis §6.3: similar when at least ``threshold`` of the min-hashes agree (1.0 = all)."""
    return resemblance(a, b) >= threshold - 1e-9
