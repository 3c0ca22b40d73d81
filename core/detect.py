"""Phase 1: detecting likely DUST rules (WWW 2007 §5.1, Figure 1; thesis §5.1, Figure 5.1).

For every substring α of every URL (0..S tokens, sentinels ``^``/``$`` included, so rules may be
anchored) the envelope (p, s) with ``u = pαs`` is recorded.  Substrings are grouped into buckets
by envelope; a bucket of size 1 or larger than T is ignored (small buckets heuristic, §4); every
pair of distinct members (α, β) of a usable bucket whose URLs are LikelySimilar adds one to the
support of the pair.  The support of (α, β) is thus ``|(E(α) ∩ E(β)) \\ (O ∪ D_αβ)|``.

The same bucket pass yields both the T_low and the T_high supports (§5.2): a bucket of size k
counts toward T_low when 2 <= k <= T_low and toward T_high when 2 <= k <= T_high.

Implementation (same result as Figure 1, checked against a literal plain-dict oracle in
tests/oracle.py): envelopes are identified exactly by the ids of their prefix and suffix in a
prefix trie and a suffix trie of the token sequences, so a bucket key is one 64-bit integer;
grouping is a numpy sort instead of the paper's sort of a text file.  Substring texts are only
materialised for members of usable buckets.

Positions: in ``^ t1 .. tk $`` (n = k + 2 tokens) a non-empty substring is any [i, j) with
0 <= i < j <= n and j - i <= S; the empty substring (ℓ = 0, thesis §5.1) is taken at the
positions 1 <= i <= n - 1 between the sentinels.  Bounded cost (ours): a URL whose envelopes
would exceed ``params.max_envelopes`` gets a smaller S of its own (:func:`max_span`), the same in
the streaming engine (core/incremental.py); docs/cost.md.
"""

from __future__ import annotations

import logging
import time
from functools import lru_cache
from dataclasses import dataclass, field
from itertools import accumulate, combinations
from typing import Callable

import numpy as np

from .params import DustParams
from .tokens import _TOKEN_RE, shrinks, wrap
from .urllist import URLList, likely_similar

log = logging.getLogger(__name__)

Progress = Callable[[str, int, int], None]


@dataclass(frozen=True, slots=True)
class Pair:
    """A likely pair (α, β) in internal form (sentinels ``\\x02``/``\\x03``), oriented α > β."""

    alpha: str
    beta: str
    support: int  #: support with T_low (ranks and filters)
    support_high: int  #: support with T_high (drives elimination)


@dataclass
class SupportTable:
    """All pair supports of one URL list (no MS filter).

    ``texts[i]`` is the internal text of substring id i; ``codes`` are ``lo_id * len(texts) + hi_id``
    with ``lo_id < hi_id``; ``high``/``low`` are the counts (``low`` may be 0).
    """

    texts: list[str]
    codes: np.ndarray
    high: np.ndarray
    low: np.ndarray
    stats: dict = field(default_factory=dict)

    def decode(self, code: int) -> tuple[str, str]:
        n = len(self.texts)
        return self.texts[code // n], self.texts[code % n]

    def as_dict(self, which: str = "low") -> dict[tuple[str, str], int]:
        """``{(a, b): support}`` with ``a < b`` in plain string order; zero supports omitted."""
        counts = self.low if which == "low" else self.high
        out = {}
        for code, c in zip(self.codes.tolist(), counts.tolist()):
            if c:
                a, b = self.decode(code)
                out[(a, b) if a < b else (b, a)] = c
        return out


def envelope_count(n: int, span: int) -> int:
    """Envelopes of a URL of n tokens (sentinels included) with substrings of 0..span tokens: the
    n - 1 empty ones, plus min(n - i, span) non-empty ones starting at each position i."""
    span = min(span, n)
    return (n - 1) + span * n - span * (span - 1) // 2


@lru_cache(maxsize=1024)
def max_span(n: int, S: int, max_envelopes: int = 0) -> int:
    """The longest substring (in tokens) taken from a URL of n tokens, sentinels included: S, or,
    when that would give the URL more than ``max_envelopes`` envelopes (0 = no cap), the largest
    span that fits, but at least 1 (the decoders' token cap then bounds the count: 2n - 1)."""
    span = S
    if max_envelopes:
        while span > 1 and envelope_count(n, span) > max_envelopes:
            span -= 1
    return span


def _positions(n: int, S: int, max_envelopes: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """All (i, j) substring positions of a token sequence of length n (see module docstring), with
    substrings of at most :func:`max_span` tokens."""
    S = max_span(n, S, max_envelopes)
    ii, jj = [], []
    for i in range(n + 1):
        if 1 <= i <= n - 1:
            ii.append(i)
            jj.append(i)
        for j in range(i + 1, min(n, i + S) + 1):
            ii.append(i)
            jj.append(j)
    return np.asarray(ii, dtype=np.int64), np.asarray(jj, dtype=np.int64)


def count_supports(urllist: URLList, params: DustParams, progress: Progress | None = None) -> SupportTable:
    """Figure 1 lines 5–20 for T_low and T_high at once."""
    t0 = time.perf_counter()
    urls = urllist.urls()
    nurl = len(urls)
    wrapped = [wrap(u) for u in urls]
    # --- tokenize; prefix/suffix ids; char offsets (Figure 1 lines 5-10) ---
    # An envelope (p, s) is identified by the ids of the strings p and s: equal ids ⇔ equal strings.
    findall = _TOKEN_RE.findall
    offsets = [list(accumulate(map(len, findall(w)), initial=0)) for w in wrapped]
    counts = np.fromiter((len(o) for o in offsets), dtype=np.int64, count=nurl)
    lens = counts - 1  # tokens per URL (sentinels included)
    base = np.zeros(nurl, dtype=np.int64)
    if nurl:
        base[1:] = np.cumsum(counts)[:-1]
    pos = int(counts.sum())
    O = np.fromiter((o for offs in offsets for o in offs), dtype=np.int64, count=pos)
    if progress:
        progress("tokenize", nurl, nurl)
    P = _prefix_ids(wrapped, O, counts)
    # suffixes are the prefixes of the reversed strings; offsets mirror
    rev_pos = _mirror(base, counts)
    lengths = np.fromiter((len(w) for w in wrapped), dtype=np.int64, count=nurl)
    Q = _prefix_ids([w[::-1] for w in wrapped], (np.repeat(lengths, counts) - O)[rev_pos], counts)[rev_pos]
    nq = int(Q.max()) + 1 if pos else 1
    del offsets, rev_pos
    if progress:
        progress("envelopes", nurl, nurl)
    # --- the substring table ST as arrays: bucket key and the flat (start, end) token indices ---
    groups = []
    total = 0
    for n in np.unique(lens).tolist() if nurl else []:
        us = np.flatnonzero(lens == n)
        ii, jj = _positions(n, params.S, params.max_envelopes)
        groups.append((us, ii, jj, total))
        total += len(us) * len(ii)
    idx_t = np.int32 if pos < 2**31 else np.int64
    key = np.empty(total, dtype=np.int64)
    tbi = np.empty(total, dtype=idx_t)
    tbj = np.empty(total, dtype=idx_t)
    for us, ii, jj, at in groups:
        b = base[us].astype(idx_t)[:, None]
        end = at + len(us) * len(ii)
        bi = (b + ii.astype(idx_t)[None, :]).ravel()
        bj = (b + jj.astype(idx_t)[None, :]).ravel()
        np.multiply(P[bi], nq, out=key[at:end])
        key[at:end] += Q[bj]
        tbi[at:end] = bi
        tbj[at:end] = bj
    del groups, P, Q
    ntuples = len(key)
    if progress:
        progress("substrings", ntuples, ntuples)
    # --- buckets (Figure 1 line 11): sort by envelope ---
    order, ks = _sort_keys(key)
    del key
    if ntuples:
        starts = np.flatnonzero(np.r_[True, ks[1:] != ks[:-1]])
    else:
        starts = np.zeros(0, dtype=np.int64)
    sizes = np.diff(np.r_[starts, ntuples])
    del ks
    usable = (sizes >= 2) & (sizes <= params.t_high)
    st, sz = starts[usable], sizes[usable]
    mstart = np.cumsum(sz) - sz  # start of each usable bucket in member space
    nmem = int(sz.sum())
    member_pos = np.repeat(st - mstart, sz) + np.arange(nmem)
    mem = order[member_pos]
    del order, member_pos
    mbi = tbi[mem].astype(np.int64)
    mbj = tbj[mem].astype(np.int64)
    del tbi, tbj, mem
    mu = np.searchsorted(base, mbi, side="right") - 1  # the URL of each member
    ca, cb = O[mbi], O[mbj]
    del O, mbi, mbj
    # --- substring ids of the members of usable buckets ---
    ids: dict[str, int] = {}
    isd = ids.setdefault
    aid = np.asarray(
        [isd(wrapped[u][a:b], len(ids)) for u, a, b in zip(mu.tolist(), ca.tolist(), cb.tolist())],
        dtype=np.int64,
    )
    texts = list(ids)
    del ids, ca, cb
    if progress:
        progress("buckets", len(st), len(starts))
    # --- pairs of each usable bucket (Figure 1 lines 12-16) ---
    m1s, m2s, lows = [], [], []
    for k in range(2, params.t_high + 1):
        sel = mstart[sz == k]
        if not len(sel):
            continue
        combos = np.asarray(list(combinations(range(k), 2)), dtype=np.int64)
        m1s.append((sel[:, None] + combos[None, :, 0]).ravel())
        m2s.append((sel[:, None] + combos[None, :, 1]).ravel())
        lows.append(np.full(len(sel) * len(combos), k <= params.t_low))
    if m1s:
        m1 = np.concatenate(m1s)
        m2 = np.concatenate(m2s)
        low = np.concatenate(lows)
    else:
        m1 = m2 = np.zeros(0, dtype=np.int64)
        low = np.zeros(0, dtype=bool)
    del m1s, m2s, lows
    sim = _likely_similar_mask(urllist, urls, mu[m1], mu[m2], params)
    a1, a2 = aid[m1], aid[m2]
    del m1, m2
    na = max(1, len(texts))
    codes = np.minimum(a1, a2) * na + np.maximum(a1, a2)
    del a1, a2
    ninst = len(codes)
    codes_sim = codes[sim]
    low_sim = low[sim]
    uh, ch = np.unique(codes_sim, return_counts=True)
    ul, cl = np.unique(codes_sim[low_sim], return_counts=True)
    cl_full = np.zeros(len(uh), dtype=np.int64)
    cl_full[np.searchsorted(uh, ul)] = cl
    stats = {
        "urls": nurl,
        "tuples": ntuples,
        "buckets": int(len(starts)),
        "buckets_usable_high": int(len(st)),
        "buckets_usable_low": int(((sz >= 2) & (sz <= params.t_low)).sum()),
        "instances": int(ninst),
        "instances_disqualified": int(ninst - len(codes_sim)),
        "distinct_pairs": int(len(uh)),
        "detect_seconds": round(time.perf_counter() - t0, 3),
    }
    log.debug("count_supports: %s", stats)
    return SupportTable(texts=texts, codes=uh, high=ch.astype(np.int64), low=cl_full, stats=stats)


def _common_prefix_len(a: str, b: str) -> int:
    lo, hi = 0, min(len(a), len(b))
    while lo < hi:  # the largest m with a[:m] == b[:m], by bisection on C-speed comparisons
        mid = (lo + hi + 1) // 2
        if a[:mid] == b[:mid]:
            lo = mid
        else:
            hi = mid - 1
    return lo


def _mirror(base: np.ndarray, counts: np.ndarray) -> np.ndarray:
    """Flat index of the t-th from last element of each segment, for every flat position."""
    seg_base = np.repeat(base, counts)
    local = np.arange(int(counts.sum()), dtype=np.int64) - seg_base
    return seg_base + np.repeat(counts, counts) - 1 - local


def _prefix_ids(strings: list[str], offs: np.ndarray, counts: np.ndarray) -> np.ndarray:
    """Dense ids of the prefixes ``strings[k][:o]`` for the flat offsets ``offs`` (``counts[k]``
    of them per string): equal ids exactly when the prefix strings are equal.

    Exact and hash-free: with the strings sorted and ``lcp[r]`` the common prefix length of the
    sorted strings r-1 and r, the prefix of length o of the string at sorted rank r is shared by
    ranks j..r exactly, where j is the last rank <= r with lcp[j] < o; so (j, o) names the string.
    """
    n = len(strings)
    if not n:
        return np.zeros(0, dtype=np.int64)
    order = sorted(range(n), key=strings.__getitem__)
    rank = np.empty(n, dtype=np.int64)
    rank[np.asarray(order, dtype=np.int64)] = np.arange(n, dtype=np.int64)
    lcp = np.empty(n, dtype=np.int64)
    lcp[0] = -1
    lcp[1:] = [_common_prefix_len(strings[a], strings[b]) for a, b in zip(order, order[1:])]
    q_rank = np.repeat(rank, counts)
    j = np.empty(len(offs), dtype=np.int64)
    by_o = np.argsort(offs, kind="stable")
    o_sorted = offs[by_o]
    starts = np.flatnonzero(np.r_[True, o_sorted[1:] != o_sorted[:-1]])
    ends = np.r_[starts[1:], len(offs)]
    ranks = np.arange(n, dtype=np.int64)
    for a, b in zip(starts.tolist(), ends.tolist()):
        o = int(o_sorted[a])
        last_break = np.maximum.accumulate(np.where(lcp < o, ranks, 0))
        sel = by_o[a:b]
        j[sel] = last_break[q_rank[sel]]
    width = int(offs.max()) + 1
    _, dense = np.unique(j * width + offs, return_inverse=True)
    return dense.astype(np.int64).reshape(-1)


def _sort_keys(key: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(order, sorted keys) of non-negative int64 keys.

    ``argsort`` is slow on millions of keys; sorting values is fast.  So the key's low bits and the
    element's index are packed into one int64 and sorted by value.  When key and index do not fit
    in 63 bits together, the elements are first partitioned by the key's high bits (a radix pass
    on a small integer, stable), and each partition is sorted the same way with local indices.
    """
    n = len(key)
    if not n:
        return np.zeros(0, dtype=np.int64), key
    kbits = max(1, int(key.max()).bit_length())
    tbits = max(1, int(n - 1).bit_length())
    if kbits + tbits <= 63:
        packed = (key << tbits) | np.arange(n, dtype=np.int64)
        packed.sort()
        return packed & ((1 << tbits) - 1), packed >> tbits
    lowbits = 63 - tbits
    part = (key >> lowbits).astype(np.int32)
    by_part = np.argsort(part, kind="stable")
    counts = np.bincount(part)
    del part
    order = np.empty(n, dtype=np.int64)
    ks = np.empty(n, dtype=np.int64)
    lowmask = (1 << lowbits) - 1
    at = 0
    for c in counts.tolist():
        if not c:
            continue
        idx = by_part[at:at + c]
        packed = ((key[idx] & lowmask) << tbits) | np.arange(c, dtype=np.int64)
        packed.sort()
        local = packed & ((1 << tbits) - 1)
        order[at:at + c] = idx[local]
        ks[at:at + c] = key[order[at:at + c]]
        at += c
    return order, ks


def _likely_similar_mask(
    urllist: URLList, urls: list[str], u1: np.ndarray, u2: np.ndarray, params: DustParams
) -> np.ndarray:
    """Vectorised LikelySimilar (see :func:`dustbuster.core.urllist.likely_similar`, which it equals)."""
    if not params.similarity or not len(u1):
        return np.ones(len(u1), dtype=bool)
    infos = [urllist.infos[u] for u in urls]
    has = np.fromiter((i.lo is not None for i in infos), dtype=bool, count=len(infos))
    lo = np.fromiter((i.lo if i.lo is not None else 0 for i in infos), dtype=np.int64, count=len(infos))
    hi = np.fromiter((i.hi if i.hi is not None else 0 for i in infos), dtype=np.int64, count=len(infos))
    sig = np.fromiter((bool(i.digests or i.sketches) for i in infos), dtype=bool, count=len(infos))
    slack = params.size_slack * np.maximum(hi[u1], hi[u2])  # the same float arithmetic as likely_similar
    disjoint = has[u1] & has[u2] & ((hi[u1] + slack < lo[u2]) | (hi[u2] + slack < lo[u1]))
    sim = ~disjoint
    both_sig = np.flatnonzero(sig[u1] & sig[u2])
    if len(both_sig):
        a_list, b_list = u1[both_sig].tolist(), u2[both_sig].tolist()
        sim[both_sig] = [likely_similar(infos[a], infos[b], params) for a, b in zip(a_list, b_list)]
    return sim


def orient(a: str, b: str) -> tuple[str, str]:
    """(α, β) with α > β: the shrinking direction first (§5.3)."""
    return (a, b) if shrinks(a, b) else (b, a)


def likely_pairs(table: SupportTable, params: DustParams) -> list[Pair]:
    """Figure 1 lines 21–22: pairs with T_low support >= MS, ranked by support.

    Ties are broken by T_high support, then by the pair's display text, for a deterministic order.
    """
    keep = np.flatnonzero(table.low >= params.ms)
    out = []
    for idx in keep.tolist():
        a, b = orient(*table.decode(int(table.codes[idx])))
        out.append(Pair(a, b, int(table.low[idx]), int(table.high[idx])))
    out.sort(key=lambda p: (-p.support, -p.support_high, p.alpha, p.beta))
    return out


def detect(urllist: URLList, params: DustParams | None = None, progress: Progress | None = None) -> tuple[list[Pair], dict]:
    """DetectLikelyRules (Figure 1): ranked likely pairs and statistics."""
    params = params or DustParams()
    table = count_supports(urllist, params, progress)
    pairs = likely_pairs(table, params)
    table.stats["likely_pairs"] = len(pairs)
    return pairs, table.stats
