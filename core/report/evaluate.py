"""The papers' quality metrics of a canonicalizer against a content ground truth.

Input: the evaluated pages in crawl order (each unique URL with its content cluster and URL
class, from ``dustbuster truth``) and a canonicalization function.  Definitions:

* **Discovered redundancy** (WWW 2007 §3 "Metrics"; thesis §6.7): U_b unique URLs before, U_a
  unique canonical URLs after; (U_b − U_a) / U_b.
* **Coverage** (WWW 2007 §3; thesis §6.6): duplicates of a URL list = unique URLs − unique
  content clusters ("document sketches").  Before: D_b = U_b − K.  After canonization the list is
  the canonical URLs a crawler fetches (the first URL of each canonical form, see below), whose
  duplicates are D_a = U_a − #Covered.  Coverage = (D_b − D_a) / D_b.  A false merge lowers D_a
  too (a cluster that is never fetched has no duplicate left), so coverage is reported next to
  **removed correctly**: the URLs not fetched whose page is the page fetched for their canonical
  form, over D_b — the share of the duplicates the canonicalizer really removes.
* **False merges**: canonical forms whose URLs show different content (≥ 2 clusters): the
  number of such groups, and the URLs in them whose cluster is not the fetched URL's (a crawler
  would skip them and lose their page unless another URL of their cluster is fetched).
* **Crawl simulation** (Xu, Liu, Callan, SIGIR 2017, §3.2): the URLs are visited in order; a URL
  is crawled when its canonical form was not crawled before.  #Crawled = U_a; a content cluster
  is covered when any of its URLs is crawled.  Precision = #Covered / #Crawled, Recall =
  #Covered / #Clusters, F1 = their harmonic mean.
* The same **per URL class**: the pages of one class evaluated alone (their own clusters and
  canonical forms).

Pure code: no I/O.  tests/test_evaluate.py works the definitions on hand-made cases.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from dataclasses import dataclass, field
from typing import Callable, Hashable, Iterable, Sequence

Canon = Callable[[str], str]


@dataclass(frozen=True, slots=True)
class Page:
    """One evaluated unique URL: its content cluster and its class."""

    url: str
    cluster: Hashable
    cls: str = ""


@dataclass
class FalseMerge:
    canonical: str
    urls: list[tuple[str, Hashable]]  #: (url, cluster) in crawl order; the first is the one fetched

    def to_json(self) -> dict:
        return {"canonical": self.canonical, "urls": [[u, str(c)] for u, c in self.urls]}


@dataclass
class Scores:
    urls: int  #: U_b, unique URLs evaluated
    clusters: int  #: K, content clusters among them
    crawled: int  #: U_a, unique canonical URLs = URLs a crawler fetches
    covered: int  #: clusters with a crawled URL
    removed_correctly: int  #: URLs not crawled whose page is their canonical form's fetched page
    false_merge_groups: int
    false_merge_urls: int
    examples: list[FalseMerge] = field(default_factory=list)

    @property
    def duplicates_before(self) -> int:
        return self.urls - self.clusters

    @property
    def duplicates_after(self) -> int:
        return self.crawled - self.covered

    @property
    def redundancy(self) -> float:
        return (self.urls - self.crawled) / self.urls if self.urls else 0.0

    @property
    def coverage(self) -> float | None:
        d = self.duplicates_before
        return (d - self.duplicates_after) / d if d else None

    @property
    def removed_share(self) -> float | None:
        d = self.duplicates_before
        return self.removed_correctly / d if d else None

    @property
    def precision(self) -> float:
        return self.covered / self.crawled if self.crawled else 0.0

    @property
    def recall(self) -> float:
        return self.covered / self.clusters if self.clusters else 0.0

    @property
    def f1(self) -> float:
        p, r = self.precision, self.recall
        return 2 * p * r / (p + r) if p + r else 0.0

    def to_json(self) -> dict:
        r = lambda x: None if x is None else round(x, 6)  # noqa: E731
        return {"urls": self.urls, "clusters": self.clusters, "crawled": self.crawled, "covered": self.covered,
                "duplicates_before": self.duplicates_before, "duplicates_after": self.duplicates_after,
                "redundancy": r(self.redundancy), "coverage": r(self.coverage),
                "removed_correctly": self.removed_correctly, "removed_share": r(self.removed_share),
                "false_merge_groups": self.false_merge_groups, "false_merge_urls": self.false_merge_urls,
                "precision": r(self.precision), "recall": r(self.recall), "f1": r(self.f1),
                "false_merge_examples": [e.to_json() for e in self.examples]}


def score(pages: Sequence[Page], canon: Canon, examples: int = 5) -> Scores:
    """Every metric of the module docstring for ``pages`` (unique URLs, in crawl order)."""
    groups: dict[str, list[Page]] = {}
    for p in pages:
        groups.setdefault(canon(p.url), []).append(p)
    covered = {g[0].cluster for g in groups.values()}
    removed_ok = fm_urls = 0
    merges: list[FalseMerge] = []
    for form, g in groups.items():
        fetched = g[0].cluster
        same = sum(1 for p in g[1:] if p.cluster == fetched)
        removed_ok += same
        if len({p.cluster for p in g}) > 1:
            fm_urls += len(g) - 1 - same
            merges.append(FalseMerge(form, [(p.url, p.cluster) for p in g]))
    merges.sort(key=lambda m: -len({c for _, c in m.urls}))
    return Scores(len(pages), len({p.cluster for p in pages}), len(groups), len(covered), removed_ok,
                  len(merges), fm_urls, merges[:examples])


def by_class(pages: Sequence[Page], canon: Canon, examples: int = 2) -> dict[str, Scores]:
    """:func:`score` of each URL class alone, classes by decreasing number of URLs."""
    parts: dict[str, list[Page]] = defaultdict(list)
    for p in pages:
        parts[p.cls].append(p)
    order = sorted(parts, key=lambda c: (-len(parts[c]), c))
    return {c: score(parts[c], canon, examples) for c in order}


def unique_in_order(pages: Iterable[Page]) -> list[Page]:
    """The first record of each URL, in order (a truth file lists each URL once; this makes sure)."""
    seen: set[str] = set()
    out = []
    for p in pages:
        if p.url not in seen:
            seen.add(p.url)
            out.append(p)
    return out


def consistent(s: Scores) -> list[str]:
    """The identities every score must satisfy; the names of those that fail (empty: consistent).
    The CI run of bench/quality checks them on real data."""
    bad = []
    checks = {
        "crawled <= urls": s.crawled <= s.urls,
        "covered <= crawled": s.covered <= s.crawled,
        "covered <= clusters": s.covered <= s.clusters,
        "clusters <= urls": s.clusters <= s.urls,
        "removed correctly <= duplicates before": s.removed_correctly <= s.duplicates_before,
        "removed = correct + false-merged": s.urls - s.crawled == s.removed_correctly + s.false_merge_urls,
        "lost clusters <= false-merged URLs": s.clusters - s.covered <= s.false_merge_urls,
        "no false merge, no lost cluster": s.false_merge_groups > 0 or s.covered == s.clusters,
        "0 <= precision, recall <= 1": 0 <= s.precision <= 1 and 0 <= s.recall <= 1,
    }
    for name, ok in checks.items():
        if not ok:
            bad.append(name)
    return bad


def cluster_sizes(pages: Iterable[Page]) -> Counter:
    return Counter(p.cluster for p in pages)


__all__ = ["Canon", "FalseMerge", "Page", "Scores", "by_class", "cluster_sizes", "consistent", "one_per_content",
           "score", "unique_in_order"]


def one_per_content(urls: list) -> list:
    """The first URL of each content of a false-merge group (the first one is the page fetched)."""
    seen: set = set()
    return [(u, c) for u, c in urls if not (c in seen or seen.add(c))]  # type: ignore[func-returns-value]  # add's None is the point: keeps each c's first
