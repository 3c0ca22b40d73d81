"""Figure 1's supports of a :class:`dustbuster.core.mining.incremental.SiteSupports`' committed URL list,
as the tests compare them with the batch engine's and the reference miner's.  The product counts
them at each window from the list it keeps (state/partitions.py), never through these."""

from __future__ import annotations

from dustbuster.core.mining.detect import Pair, SupportTable, count_supports, likely_pairs as _likely_pairs
from dustbuster.core.mining.incremental import SiteSupports
from dustbuster.core.urls.urllist import URLList


def table(sup: SiteSupports, urllist: URLList | None = None) -> SupportTable:
    """Figure 1's supports of the committed URL list (``urllist`` when the caller has it)."""
    return count_supports(sup.urllist() if urllist is None else urllist, sup.params)


def supports(sup: SiteSupports) -> dict[tuple[str, str], tuple[int, int]]:
    """All non-zero (T_low, T_high) supports, keyed (a, b) with a < b (committed state)."""
    t = table(sup)
    low, high = t.as_dict("low"), t.as_dict("high")
    return {k: (low.get(k, 0), h) for k, h in high.items()}


def likely_pairs(sup: SiteSupports) -> list[Pair]:
    """Figure 1's likely pairs of the committed URL list."""
    return _likely_pairs(table(sup), sup.params)
