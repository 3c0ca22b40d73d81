"""Soft errors: pages that a site answers with status 200 where the item asked for does not exist
(Bar-Yossef, Broder, Kumar, Tomkins, "Sic transit gloria telae: towards an understanding of the
web's decay", WWW 2004, §3: fetch a URL that cannot exist next to the one in question, and compare
the answers).  Pure logic; the probing fetches are the caller's (dustbuster.sitevalidation).

Beyond the paper (ours; docs/validation.md "Soft errors"):

* **Probes.**  Per origin, one URL whose path is a random token (:func:`path_probe`).  Per *scope*
  (:func:`scope_key`: path with digit runs as ``N``, the sorted parameter names; one for all the
  site's host names, which run one software), on
  demand, when a page of that scope is fetched: the same URL with every id-like parameter value
  (digits, or a hex run of 6+ with a digit) replaced by a random value of the same kind and more
  digits (:func:`value_probe`) — the answer a site gives for an item that does not exist.
  A scope without an id-like value gets no probe.
* **Signature** (:class:`ErrorSignature`): the answer's normalised title and its word-set sketch
  (:func:`dustbuster.core.validation.identity.word_sketch`: word 3-grams, digits masked — an error page
  templated with the URL's values keeps most of them) and its content sketch.
* **Accepted** only when it cannot be a real page: the path probe always; a scope's value probes
  when the probes made from the scope's URLs (one or two) answer alike (:func:`alike`) and differ
  from the first URL's own page.  When they show that page, one more fetch tells why: the URL
  without its id-like values (:func:`value_dropped`) showing the same page means the site ignores
  the parameter (a session id: no signature, its URLs stay pages); another page means the
  logged URL itself now answers with the error page (a purged revision: the probes' answer is
  the signature).
* **Match** (:func:`is_soft_error`): a page whose content sketch is similar to a signature's
  (the thesis' 4 of 4), or whose normalised title equals a signature's non-empty title and whose
  masked word 3-grams resemble at least :data:`WORDS_THRESHOLD`.
"""

from __future__ import annotations

import random
import re
from dataclasses import dataclass
from urllib.parse import parse_qsl, urlencode

from dustbuster.core.validation.identity import PageIdentity
from dustbuster.core.urls.scope import split_url
from dustbuster.core.validation.sketch import Sketch, resemblance, similar

#: estimated resemblance of masked word 3-grams (16 min-hashes) above which a page with the signature's title is it
WORDS_THRESHOLD = 0.75
#: value probes per site and round at most (two per scope): the probes' share of a round's fetches stays small
MAX_SCOPE_PROBES = 16
PROBE_PREFIX = "dustbuster-probe-"
_ID_VALUE = re.compile(r"^(?:\d+|(?=[0-9a-f]*\d)[0-9a-f]{6,})$", re.I)
_DIGITS = re.compile(r"\d+")


def is_id_value(value: str) -> bool:
    """A value that names an item: digits, or a hex run of 6+ characters holding a digit."""
    return bool(_ID_VALUE.match(value))


def scope_key(url: str) -> str:
    """The soft-error scope of a URL: path with digit runs ``N``, sorted parameter names."""
    _head, path, tail = split_url(url)
    names = sorted({k for k, _ in parse_qsl(tail[1:], keep_blank_values=True)})
    return f"{_DIGITS.sub('N', path)}?{'&'.join(names)}"


def path_probe(origin: str, rnd: random.Random) -> str:
    """A URL of ``origin`` that cannot exist: a random token as the path."""
    return f"{origin}/{PROBE_PREFIX}{rnd.getrandbits(64):016x}"


def value_probe(url: str, rnd: random.Random) -> str | None:
    """``url`` with each id-like parameter value replaced by a random one that cannot exist
    (digits → 12 random digits, hex → 16 random hex digits); None when the URL has no such value."""
    head, path, tail = split_url(url)
    pairs = parse_qsl(tail[1:], keep_blank_values=True)
    out, changed = [], False
    for k, v in pairs:
        if is_id_value(v):
            v = str(rnd.randrange(10**11, 10**12)) if v.isdigit() else f"{rnd.getrandbits(64):016x}"
            changed = True
        out.append((k, v))
    return f"{head}{path}?{urlencode(out)}" if changed else None


def value_dropped(url: str) -> str | None:
    """``url`` without its id-like parameters (the page a parameter the site ignores would show);
    None when the URL has no such value."""
    head, path, tail = split_url(url)
    pairs = parse_qsl(tail[1:], keep_blank_values=True)
    kept = [(k, v) for k, v in pairs if not is_id_value(v)]
    if len(kept) == len(pairs):
        return None
    return f"{head}{path}?{urlencode(kept)}" if kept else f"{head}{path}"


@dataclass(frozen=True)
class ErrorSignature:
    title: str  #: normalised
    words: Sketch | None
    sketch: Sketch | None

    @classmethod
    def of(cls, ident: PageIdentity) -> "ErrorSignature":
        return cls(ident.norm_title, ident.words, ident.sketch)

    def to_json(self) -> dict:
        return {"title": self.title, "sketch": self.sketch.to_json() if self.sketch else None}


def alike(a: PageIdentity, b: PageIdentity, threshold: float = 1.0) -> bool:
    """Two answers are one page for soft-error purposes (the match rule of the module docstring)."""
    return is_soft_error(a, [ErrorSignature.of(b)], threshold)


def is_soft_error(ident: PageIdentity | None, signatures: list[ErrorSignature], threshold: float = 1.0) -> bool:
    """Whether the page matches one of the site's error signatures (module docstring)."""
    if ident is None:
        return False
    for sig in signatures:
        if sig.sketch is not None and ident.sketch is not None and similar(ident.sketch, sig.sketch, threshold):
            return True
        if (sig.title and sig.title == ident.norm_title and sig.words is not None and ident.words is not None
                and resemblance(sig.words, ident.words) >= WORDS_THRESHOLD - 1e-9):
            return True
    return False


def accept_scope_probes(sources: list[PageIdentity], probes: list[PageIdentity],
                        dropped: PageIdentity | None = None) -> ErrorSignature | None:
    """The scope's error signature from its value probes (module docstring), or None.  ``dropped``:
    the page of the first source without its id-like values, fetched when a probe shows that
    source's own page (an ignored parameter, or a source that is itself an error page?)."""
    if not probes or (len(probes) >= 2 and not alike(probes[0], probes[1])):
        return None
    if sources and alike(probes[0], sources[0]):
        if dropped is not None and alike(dropped, sources[0]):
            return None  # the page ignores the values (a session id): its own page, not an error
        if dropped is None and len(probes) < 2:
            return None  # one probe, nothing to tell them apart: no signature, as before
        # without the values the page is another (or two probes agree): the URL itself shows the error page
    return ErrorSignature.of(probes[0])


__all__ = ["ErrorSignature", "MAX_SCOPE_PROBES", "PROBE_PREFIX", "WORDS_THRESHOLD", "accept_scope_probes", "alike",
           "is_id_value", "is_soft_error", "path_probe", "scope_key", "value_dropped", "value_probe"]
