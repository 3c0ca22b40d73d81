"""Training pairs of the learned canonizer (seq2seq paper §2.2-2.3) from fetched pages."""

from __future__ import annotations

import pytest

from dustbuster.core.errors import DustError
from dustbuster.core.report.learnpairs import Page, canonical_member, pages_from_truth, training_data
from dustbuster.core.report.truth import SIG_K
from dustbuster.core.validation.sketch import Sketch
from dustbuster.core.urls.urltokens import decode, encode


def sig(n: int, change: int = 0) -> Sketch:
    """A text signature of content n; ``change`` of its 256 min-hashes differ (resemblance 1 - change/256)."""
    base = [n * 1000 + i for i in range(SIG_K)]
    return Sketch("text", tuple(base[:SIG_K - change] + [10**9 + i for i in range(change)]), "", 100)


H = "http://h.test"


def test_clusters_become_pairs_to_the_canonical_member():
    pages = [Page(f"{H}/wiki/A", sig(1)), Page(f"{H}/wiki/A?version=3", sig(1)),
             Page(f"{H}/wiki/A?action=view", sig(1, change=5)),  # resemblance 0.98: same content
             Page(f"{H}/wiki/B", sig(2)), Page(f"{H}/wiki/B?version=1", sig(2, change=40))]  # 0.84: not
    td = training_data(pages)
    assert sorted(td.pairs) == sorted([(f"{H}/wiki/A", f"{H}/wiki/A"), (f"{H}/wiki/A?version=3", f"{H}/wiki/A"),
                                       (f"{H}/wiki/A?action=view", f"{H}/wiki/A"), (f"{H}/wiki/B", f"{H}/wiki/B"),
                                       (f"{H}/wiki/B?version=1", f"{H}/wiki/B?version=1")])
    assert td.stats["clusters"] == 3 and td.stats["duplicate_urls"] == 2 and td.stats["singletons"] == 2
    for (u, v), (src, tgt) in zip(td.pairs, td.sequences):
        e = encode(u, td.functions)
        assert src == e.tokens and decode(tgt, e.args) == v


def test_the_threshold_is_stricter_than_the_truth():
    pages = [Page(f"{H}/a", sig(1)), Page(f"{H}/a?x=1", sig(1, change=20))]  # resemblance ~0.92
    assert training_data(pages).stats["clusters"] == 2
    assert training_data(pages, threshold=0.9).stats["clusters"] == 1


CANONICAL = [
    # fewest tokens first (the paper), then the shortest, then the higher df sum, then text
    ([f"{H}/a/b", f"{H}/a"], f"{H}/a"),
    ([f"{H}/wiki", f"{H}/"], f"{H}/"),
    ([f"{H}/abc", f"{H}/ab"], f"{H}/ab"),
    ([f"{H}/zz", f"{H}/yy"], f"{H}/yy"),
]


@pytest.mark.parametrize("urls,expected", CANONICAL)
def test_canonical_member(urls, expected):
    assert canonical_member(urls, {}) == expected
    assert canonical_member(list(reversed(urls)), {}) == expected


def test_document_frequency_breaks_ties():
    assert canonical_member([f"{H}/xy", f"{H}/ab"], {"xy": 9, "ab": 1}) == f"{H}/xy"


def test_pages_from_truth_keeps_ok_records_once():
    good = {"url": f"{H}/a", "ok": True, "signature": sig(1).to_json()}
    recs = [good, dict(good, signature=sig(2).to_json()), {"url": f"{H}/b", "ok": False, "signature": None},
            {"url": f"{H}/c", "ok": True}]
    pages = pages_from_truth(recs)
    assert [p.url for p in pages] == [f"{H}/a"] and pages[0].signature == sig(1)
    with pytest.raises(DustError, match="bad signature"):
        pages_from_truth([{"url": f"{H}/d", "ok": True, "signature": {"minhashes": [1]}}])


def test_no_pages_is_a_clear_error():
    with pytest.raises(DustError, match="no fetched pages"):
        training_data([])
