"""Phase 2: refinement and redundancy elimination (WWW 2007 §5.2, Figure 2; thesis Figure 5.2).

Lemma 5.3: a rule α' → β' refines α → β iff there is an envelope (γ, δ) with α' = γαδ and
β' = γβδ.  We check it as the paper says: find α in α' (every occurrence), replace it by β and
compare with β'.  Occurrences are token-aligned and γβδ must keep its token boundaries, since the
strings are over the token alphabet (see dustbuster.core.urls.tokens).  Two *pairs* are compared in both
directions: pair (α', β') refines pair (α, β) when α' → β' refines α → β or β → α.
"""

from __future__ import annotations

import bisect
from collections import defaultdict
from typing import Sequence

from dustbuster.core.model.pair import Pair
from dustbuster.core.params import DustParams
from dustbuster.core.urls.tokens import find_aligned, is_boundary


def rule_refines(a2: str, b2: str, a1: str, b1: str) -> bool:
    """True when the rule a2 → b2 refines the rule a1 → b1 (Lemma 5.3)."""
    extra = len(a2) - len(a1)
    if extra < 0 or extra != len(b2) - len(b1):
        return False
    if a1 and a1 not in a2:
        return False
    if b1 and b1 not in b2:
        return False
    k = find_aligned(a2, a1)
    la, lb = len(a1), len(b1)
    while k != -1:
        if (
            b2.startswith(a2[:k])
            and b2.endswith(a2[k + la:])
            and b2[k:k + lb] == b1
            and is_boundary(b2, k)
            and is_boundary(b2, k + lb)
        ):
            return True
        k = find_aligned(a2, a1, k + 1)
    return False


def pair_refines(p2: Pair | tuple[str, str], p1: Pair | tuple[str, str]) -> bool:
    """Pair p2 refines pair p1, checked in both directions (§5.2)."""
    a2, b2 = (p2.alpha, p2.beta) if isinstance(p2, Pair) else p2
    a1, b1 = (p1.alpha, p1.beta) if isinstance(p1, Pair) else p1
    return rule_refines(a2, b2, a1, b1) or rule_refines(a2, b2, b1, a1)


def elimination_order(pairs: Sequence[Pair]) -> list[Pair]:
    """Figure 2's input order: by calculated support (T_high, §5.2) descending; ties by T_low
    support descending, then by text."""
    return sorted(pairs, key=lambda p: (-p.support_high, -p.support, p.alpha, p.beta))


def eliminate(pairs: Sequence[Pair], params: DustParams | None = None) -> tuple[list[Pair], list[tuple[Pair, Pair]]]:
    """EliminateRedundancies (Figure 2) on a list already in :func:`elimination_order`.

    ``R[i].size`` is the T_high support.  Returns the surviving pairs (input order) and the list of
    ``(eliminated, because_of)`` for the evidence.

    Only pairs whose |len(α) − len(β)| match can refine each other (γ and δ add the same length to
    both sides), so the window scan visits only those; it visits them in the paper's order, so the
    result is the one Figure 2 gives.
    """
    params = params or DustParams()
    R = list(pairs)
    n = len(R)
    sizes = [p.support_high for p in R]
    neg = [-s for s in sizes]  # ascending, for bisect
    groups: dict[int, list[int]] = defaultdict(list)
    dl = [abs(len(p.alpha) - len(p.beta)) for p in R]
    for idx, d in enumerate(dl):
        groups[d].append(idx)
    eliminated = [False] * n
    why: list[tuple[Pair, Pair]] = []
    for i in range(n):
        if eliminated[i]:
            continue
        s = sizes[i]
        slack = max(params.mrd * s, params.mad)
        # last index e with s - size[e] <= slack (sizes are non-increasing), capped by MW
        e = bisect.bisect_right(neg, -(s - slack)) - 1
        e = min(e, i + params.mw, n - 1)
        g = groups[dl[i]]
        lo = bisect.bisect_right(g, i)
        hi = bisect.bisect_right(g, e)
        for c in g[lo:hi]:
            if pair_refines(R[i], R[c]):
                if not eliminated[c]:
                    why.append((R[c], R[i]))
                eliminated[c] = True
            elif pair_refines(R[c], R[i]):
                eliminated[i] = True
                why.append((R[i], R[c]))
                break
    return [p for p, e in zip(R, eliminated) if not e], why
