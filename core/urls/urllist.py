"""The URL list of the papers (WWW 2007 §3, "A URL list is a list of records ...") and LikelySimilar.

Each unique URL keeps what the similarity likeliness heuristic (§4) needs:

* its size interval ``I_u = [min, max]`` of observed sizes (§4: "we track all its occurrences in
  the URL list, and keep the minimum and the maximum size values encountered");
* the content digests and min-hash sketches seen for it, when the list comes from a crawl (§4:
  "When available, documents sketches are used to indicate which URL pairs are likely similar").

Semantics of a record (docs/semantics.md has the table and the reasons):

* status >= 400: dropped by the caller (§5.1 pre-processing (3)); never reaches this module;
* status 304 or another redirect (301, 302, 303, 307, 308), or an unknown size: the URL is listed
  but adds no size observation (the body is not the document);
* otherwise the size widens the URL's interval; digests and sketches are recorded.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Iterable, Iterator

from dustbuster.core.params import DustParams

#: statuses whose body is not the document: no size / digest observation.
MAX_ERROR_URLS = 20_000  #: URLs logged with status >= 400 that a URL list keeps (URLList.errors)
NO_BODY_STATUSES = frozenset({301, 302, 303, 304, 305, 307, 308})


@dataclass(slots=True)
class URLInfo:
    """What the URL list knows about one unique URL."""

    hits: int = 0
    lo: int | None = None
    hi: int | None = None
    digests: set[str] | None = None
    sketches: set[tuple[int, ...]] | None = None
    first_seen: int | None = None  #: unix seconds of the first record (streaming: ingest time)
    last_seen: int | None = None

    def observe(
        self,
        status: int | None,
        size: int | None,
        digest: str | None = None,
        sketch: tuple[int, ...] | None = None,
        when: int | None = None,
    ) -> None:
        self.hits += 1
        if when is not None:
            if self.first_seen is None or when < self.first_seen:
                self.first_seen = when
            if self.last_seen is None or when > self.last_seen:
                self.last_seen = when
        if status is not None and status in NO_BODY_STATUSES:
            return
        if size is not None and size >= 0:
            if self.lo is None or size < self.lo:
                self.lo = size
            if self.hi is None or size > self.hi:
                self.hi = size
        if digest:
            if self.digests is None:
                self.digests = set()
            self.digests.add(digest)
        if sketch:
            if self.sketches is None:
                self.sketches = set()
            self.sketches.add(tuple(sketch))

    @property
    def interval(self) -> tuple[int, int] | None:
        return None if self.lo is None else (self.lo, self.hi)  # type: ignore[return-value]

    def merge(self, other: "URLInfo") -> None:
        self.hits += other.hits
        if other.lo is not None:
            self.lo = other.lo if self.lo is None else min(self.lo, other.lo)
            self.hi = other.hi if self.hi is None else max(self.hi, other.hi)  # type: ignore[type-var]
        if other.digests:
            self.digests = (self.digests or set()) | other.digests
        if other.sketches:
            self.sketches = (self.sketches or set()) | other.sketches


def sketch_similar(a: tuple[int, ...], b: tuple[int, ...], threshold: float) -> bool:
    """Min-hash resemblance estimate (thesis §6.3): the fraction of equal components."""
    n = min(len(a), len(b))
    if n == 0:
        return False
    equal = sum(1 for x, y in zip(a, b) if x == y)
    return equal >= threshold * n - 1e-9


def likely_similar(a: URLInfo, b: URLInfo, params: DustParams | None = None) -> bool:
    """LikelySimilar of §5.1: False only when the documents are *unlikely* to be similar.

    Order of evidence: sketches when both URLs have them, else digests when both have them,
    else size intervals when both have them (disjoint intervals → False), else True.

    Beyond the paper: intervals closer than ``params.size_slack`` times the larger size count as
    overlapping (default 2 %).  Logs record bytes sent, and the same document travels with
    headers or links that differ by a few dozen bytes between URLs (Apache's ``%O`` with
    MultiViews' ``Content-Location``; a page that prints its own URL); the paper's exact overlap
    then hides real DUST from every later phase.  ``size_slack=0`` is the paper's test.
    With ``params.similarity`` off, always True (``--no-similarity``).
    """
    p = params or _DEFAULT
    if not p.similarity:
        return True
    if a.sketches and b.sketches:
        return any(sketch_similar(x, y, p.sketch_threshold) for x in a.sketches for y in b.sketches)
    if a.digests and b.digests:
        return not a.digests.isdisjoint(b.digests)
    if a.lo is not None and b.lo is not None:
        slack = p.size_slack * max(a.hi, b.hi)  # type: ignore[type-var, operator]  # hi is set with lo (observe)
        return not (a.hi + slack < b.lo or b.hi + slack < a.lo)  # type: ignore[operator]
    return True


_DEFAULT = DustParams()


@dataclass
class URLList:
    """Unique URLs with their observations, in first-seen order."""

    infos: dict[str, URLInfo] = field(default_factory=dict)
    #: URLs known only from a URL list (a crawler's frontier, ``dustbuster mine --urls``),
    #: not in ``infos``: nothing was observed of them, so they take no part in Figure 1 nor in any
    #: LikelySimilar comparison; they are test URLs for the validator (:meth:`test_urls`)
    listed: dict[str, None] = field(default_factory=dict)
    #: URLs the log holds with status >= 400 (§5.1 drops those lines; the first MAX_ERROR_URLS):
    #: the validator counts the parameters a rule would change on them (core/validation/narrow.py)
    errors: dict[str, None] = field(default_factory=dict, compare=False)

    def note_errors(self, urls: Iterable[str]) -> None:
        """URLs logged with status >= 400, kept apart (bounded by MAX_ERROR_URLS)."""
        for u in urls:
            if len(self.errors) >= MAX_ERROR_URLS:
                return
            self.errors[u] = None

    def add(
        self,
        url: str,
        status: int | None = 200,
        size: int | None = None,
        digest: str | None = None,
        sketch: tuple[int, ...] | None = None,
    ) -> None:
        info = self.infos.get(url)
        if info is None:
            info = self.infos[url] = URLInfo()
            self.listed.pop(url, None)
        info.observe(status, size, digest, sketch)

    def list_only(self, url: str) -> None:
        """A URL of a URL list: listed apart unless the log has it (``listed``)."""
        if url not in self.infos:
            self.listed[url] = None

    def test_urls(self) -> list[str]:
        """The log's URLs, then the URL list's: what the validator samples (Figure 3)."""
        return [*self.infos, *self.listed]

    def __len__(self) -> int:
        return len(self.infos)

    def __contains__(self, url: object) -> bool:
        return url in self.infos

    def __iter__(self) -> Iterator[str]:
        return iter(self.infos)

    def urls(self) -> list[str]:
        return list(self.infos)

    def info(self, url: str) -> URLInfo:
        return self.infos[url]

    def similar(self, u1: str, u2: str, params: DustParams | None = None) -> bool:
        return likely_similar(self.infos[u1], self.infos[u2], params)

    @property
    def sized(self) -> int:
        return sum(1 for i in self.infos.values() if i.lo is not None)
