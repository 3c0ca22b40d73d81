"""Figure 3's draw order (WWW 2007 §5.3, Figure 3: "a random URL" of the test list the rule
changes), moved out of :mod:`dustbuster.core.validation.validate`.  Ours: the URLs whose pages this round
has fetched already come first (docs/validation.md)."""

from __future__ import annotations

import random
from typing import Callable

from dustbuster.core.validation.fetched import RoundFetcher


def sample_order(cands: list[str], rewrite: Callable[[str], str], fetch: RoundFetcher, seed: int) -> list[str]:
    """Figure 3's random draw (fixed by ``seed``), with the URLs whose pages this round has
    fetched already first (both u and R(u), then one of them): the same evidence for fewer
    fetches.  Ours; the draw stays random within each group."""
    random.Random(seed).shuffle(cands)
    have = fetch.cache
    return sorted(cands, key=lambda u: (u not in have) + (rewrite(u) not in have))


__all__ = ["sample_order"]
