"""Content ground truth of a URL list: page signatures, content clusters, URL classes.

The papers define duplicates by content: "the number of duplicate URLs in a given URL list is
defined as the difference between the number of unique URLs and the number of unique document
sketches" (WWW 2007 §3 "Metrics"; thesis §6.6 fetches every URL of a test log and sketches it).
``dustbuster truth`` fetches each URL once and clusters the pages here.

Similarity used for the clusters (our choice, written down in docs/quality.md):

* the words and 10-word shingles of the visible text exactly as the validator makes them
  (:mod:`dustbuster.core.validation.sketch`: scripts, styles and head removed, Unicode words lower-cased);
* the resemblance (Jaccard of the shingle sets, thesis §6.3) estimated with :data:`SIG_K` = 256
  min-hashes instead of the validator's 4: with 4, two pages of resemblance 0.9 get equal
  sketches only about 0.9⁴ ≈ 66 % of the time, so "same sketch" would split near-identical pages
  at random; 256 estimate it within ±0.015 (one standard deviation at 0.95; with 64, ±0.03 split
  a Trac help page fetched twice, resemblance about 0.94, estimated 0.875);
* two pages are the same content when the estimated resemblance is at least 0.9 (Broder's
  "roughly the same" threshold; it tolerates a changed date, counter or sidebar on a long page
  and separates pages that share only navigation chrome unless their own text is tiny);
* clusters are the connected components of that relation (single link), found through locality
  sensitive hashing (32 bands of 8 min-hashes: a pair of resemblance 0.9 is a candidate with
  probability 1 − (1 − 0.9⁸)³² > 0.99999) and checked pair by pair;
* anything that is not text (images, PDFs) is compared by its exact digest (xxhash64), as the
  validator does;
* beyond text (:mod:`dustbuster.core.validation.identity`): two pages whose titles differ after
  normalisation are two pages whatever their text (:func:`split_by_title`: look-alike pages of one
  template, empty listings of different items), and pages that match the site's soft-error
  signature are no pages (``dustbuster truth`` records them as failures, ``soft_error``).
"""

from __future__ import annotations

import re
from typing import Iterable, Sequence
from urllib.parse import urlsplit

import numpy as np
from xxhash import xxh64_hexdigest

from dustbuster.core.validation.sketch import Sketch, document_words, resemblance, shingles

SIG_K = 256
BANDS = 32
THRESHOLD = 0.9
_DIGITS = re.compile(r"[0-9]+")
_rng = np.random.default_rng(20071)  # fixed: signatures must be comparable across runs
_A = _rng.integers(1, 2**63, SIG_K, dtype=np.uint64) * np.uint64(2) + np.uint64(1)  # odd multipliers
_B = _rng.integers(0, 2**63, SIG_K, dtype=np.uint64)


#: A page's content signature is a :class:`~dustbuster.core.validation.sketch.Sketch` with :data:`SIG_K`
#: min-hashes (the validator's sketches have 4): same fields, JSON form and resemblance.
Signature = Sketch


def signature(body: bytes, content_type: str = "text/html", k: int = SIG_K,
              hosts: "re.Pattern[str] | None" = None) -> Signature:
    """The page's signature, from the same visible text, words and shingles as the validator's
    sketches (:func:`dustbuster.core.validation.sketch.document_words`, the site's ``hosts`` one word
    as there), with k universal-hash min-hashes."""
    ws = document_words(body, content_type, hosts)
    if ws:
        x = np.fromiter(shingles(ws), dtype=np.uint64)
        with np.errstate(over="ignore"):
            mins = (x[:, None] * _A[None, :k] + _B[None, :k]).min(axis=0)
        return Signature("text", tuple(int(v) for v in mins), "", len(ws))
    return Signature("digest", (), xxh64_hexdigest(body), 0)


class _UnionFind:
    def __init__(self, n: int) -> None:
        self.parent = list(range(n))

    def find(self, i: int) -> int:
        while self.parent[i] != i:
            self.parent[i] = self.parent[self.parent[i]]
            i = self.parent[i]
        return i

    def union(self, i: int, j: int) -> None:
        ri, rj = self.find(i), self.find(j)
        if ri != rj:
            self.parent[max(ri, rj)] = min(ri, rj)


def _candidates(sigs: Sequence[Signature], reps: Sequence[int], bands: int) -> Iterable[tuple[int, int]]:
    """Every pair of distinct signatures (given by representative index) that share a band: every
    pair that can be similar, and few others.  Digests are grouped by equality alone."""
    buckets: dict[tuple, list[int]] = {}
    for i in reps:
        s = sigs[i]
        if s.kind != "text":
            continue
        rows = max(1, len(s.minhashes) // bands)
        for b in range(bands):
            band = s.minhashes[b * rows:(b + 1) * rows]
            if band:
                buckets.setdefault((b, band), []).append(i)
    for members in buckets.values():
        for x in range(len(members)):
            for y in range(x + 1, len(members)):
                yield members[x], members[y]


def cluster(sigs: Sequence[Signature], threshold: float = THRESHOLD, bands: int = BANDS) -> list[int]:
    """Cluster ids (0, 1, ... in order of first member) of the pages: connected components of
    "estimated resemblance >= threshold" over the candidate pairs, plus every pair of pages whose
    signatures are equal (so equal pages are always together)."""
    uf = _UnionFind(len(sigs))
    exact: dict[tuple, int] = {}
    for i, s in enumerate(sigs):
        key = (s.kind, s.minhashes, s.digest)
        if key in exact:
            uf.union(exact[key], i)
        else:
            exact[key] = i
    for i, j in _candidates(sigs, list(exact.values()), bands):
        if uf.find(i) != uf.find(j) and resemblance(sigs[i], sigs[j]) >= threshold - 1e-9:
            uf.union(i, j)
    ids: dict[int, int] = {}
    return [ids.setdefault(uf.find(i), len(ids)) for i in range(len(sigs))]


def split_by_title(ids: Sequence[int], titles: Sequence[str]) -> list[int]:
    """The clusters ``ids`` split so that each holds one normalised title (ids renumbered in order
    of first member); an empty title is a title of its own ("")."""
    from dustbuster.core.validation.identity import normalize_title

    out: dict[tuple[int, str], int] = {}
    return [out.setdefault((c, normalize_title(t)), len(out)) for c, t in zip(ids, titles)]


def url_class(url: str) -> str:
    """The URL's class for per-class reporting: its first path segment with every run of digits
    written ``N`` (``/wiki/Foo`` → ``wiki``, ``/search.html?q=x`` → ``search.html``, ``/story_5`` →
    ``story_N``, ``story.php3`` → ``story.php3``: one class per script, not per page), ``/`` for the root page."""
    try:
        path = urlsplit(url).path
    except ValueError:
        return "?"
    seg = path.lstrip("/").split("/", 1)[0]
    stem, dot, ext = seg.rpartition(".") if "." in seg else (seg, "", "")
    return _DIGITS.sub("N", stem) + dot + ext or "/"


__all__ = ["BANDS", "SIG_K", "THRESHOLD", "Signature", "cluster", "resemblance", "signature", "split_by_title",
           "url_class"]
