"""Training pairs for the learned canonizer from fetched pages (seq2seq paper §2.2–2.3).

The paper clusters crawled pages by content (64-bit simhash, Hamming distance ≤ 3, same title:
"we prioritize precision over recall") and trains on (url_source, url_target) for every URL of
every cluster, url_target being the cluster's canonical member, so (url_target, url_target) pairs
are included (§2.3); a singleton cluster gives its identity pair.

Ours, from what ``dustbuster truth`` already fetched and recorded (no other fetching):

* pages: the records that fetched ``ok``; a redirected URL is a member of its final page's
  content, as any other (the paper's "Redirection" case, §3.4);
* clusters: the connected components of estimated resemblance ≥ ``threshold`` of the pages'
  256-min-hash signatures (:func:`dustbuster.core.report.truth.cluster`), default 0.95 — stricter than the
  0.9 that defines the truth we are scored on, for the paper's precision-first reason (a page with
  little main content and the site's chrome is the paper's typical error);
* the canonical member: the URL with the fewest tokens (the paper's rule), then the shortest (our
  rules' shrinking preference, WWW 2007 §4), then the higher document-frequency sum of its tokens
  (the paper's tie-break), then the first in text order, so the choice is deterministic;
* every pair is encoded with placeholders (:mod:`dustbuster.core.urls.urltokens`), the target against
  the source's arguments.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from dataclasses import dataclass, field
from typing import Iterable, Mapping, Sequence

from dustbuster.core.errors import DustError
from dustbuster.core.report.truth import Signature, cluster
from dustbuster.core.urls.urltokens import FunctionTokens, encode, encode_target, function_tokens, url_tokens

#: resemblance of the training clusters (module docstring)
TRAIN_THRESHOLD = 0.95


@dataclass(frozen=True)
class Page:
    url: str
    signature: Signature


@dataclass
class TrainingData:
    """The pairs and how they were made (stored with the model)."""

    pairs: list[tuple[str, str]]  #: (url, canonical url), identity pairs included
    functions: FunctionTokens
    sequences: list[tuple[tuple[str, ...], tuple[str, ...]]] = field(default_factory=list)
    stats: dict = field(default_factory=dict)


def pages_from_truth(records: Iterable[Mapping]) -> list[Page]:
    """The fetched pages of ``dustbuster truth`` records (JSON lines): ok ones with a signature,
    each URL once (the first record wins)."""
    out: dict[str, Page] = {}
    for r in records:
        if not isinstance(r, Mapping) or not isinstance(r.get("url"), str):
            continue  # not a truth record (the CLI reads JSON lines of any shape)
        sig = r.get("signature")
        if not r.get("ok") or not isinstance(sig, Mapping) or r["url"] in out:
            continue
        try:
            out[r["url"]] = Page(r["url"], Signature.from_json(sig))
        except (KeyError, TypeError, ValueError) as e:
            raise DustError(f"a truth record of {r.get('url')!r} has a bad signature: {e}") from e
    return list(out.values())


def canonical_member(urls: Sequence[str], df: Mapping[str, int]) -> str:
    """The cluster's canonical URL (module docstring: fewest tokens, shortest, highest df sum, text)."""
    def key(u: str) -> tuple:
        toks = url_tokens(u)
        return (len(toks), len(u), -sum(df.get(t, 0) for t in set(toks)), u)
    return min(urls, key=key)


def training_data(pages: Sequence[Page], threshold: float = TRAIN_THRESHOLD) -> TrainingData:
    """The paper's training pairs (§2.3) from the pages' content clusters."""
    if not pages:
        raise DustError("no fetched pages to learn from (the truth file holds no ok page)")
    urls = [p.url for p in pages]
    ids = cluster([p.signature for p in pages], threshold)
    members: dict[int, list[str]] = defaultdict(list)
    for u, c in zip(urls, ids):
        members[c].append(u)
    df: Counter[str] = Counter()
    for u in urls:
        df.update(set(url_tokens(u)))
    functions = function_tokens(urls)
    pairs, seqs = [], []
    for group in members.values():
        target = canonical_member(group, df)
        for u in group:
            src = encode(u, functions)
            pairs.append((u, target))
            seqs.append((src.tokens, encode_target(target, src, functions)))
    dup = sum(len(g) - 1 for g in members.values())
    stats = {"pages": len(pages), "clusters": len(members), "duplicate_urls": dup,
             "rewrite_pairs": sum(1 for u, v in pairs if u != v), "pairs": len(pairs),
             "singletons": sum(1 for g in members.values() if len(g) == 1), "threshold": threshold,
             "function_tokens": len(functions.tokens)}
    return TrainingData(pairs, functions, seqs, stats)


__all__ = ["Page", "TRAIN_THRESHOLD", "TrainingData", "canonical_member", "pages_from_truth", "training_data"]
