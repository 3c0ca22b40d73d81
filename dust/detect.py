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
positions 1 <= i <= n - 1 between the sentinels.
"""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass, field
from itertools import combinations
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


def _positions(n: int, S: int) -> tuple[np.ndarray, np.ndarray]:
    """All (i, j) substring positions of a token sequence of length n (see module docstring)."""
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
    # --- tokenize; prefix/suffix trie ids; char offsets (Figure 1 lines 5-10) ---
    pref: dict[tuple[int, str], int] = {}
    suff: dict[tuple[int, str], int] = {}
    p_flat: list[int] = []
    q_flat: list[int] = []
    o_flat: list[int] = []
    base = np.zeros(nurl, dtype=np.int64)
    lens = np.zeros(nurl, dtype=np.int64)
    pos = 0
    step = max(1, nurl // 100)
    for ui, w in enumerate(wrapped):
        toks = _TOKEN_RE.findall(w)
        offs = [m.start() for m in _TOKEN_RE.finditer(w)]
        n = len(toks)
        base[ui] = pos
        lens[ui] = n
        pid = 0
        pids = [0]
        for t in toks:
            key = (pid, t)
            pid = pref.get(key)
            if pid is None:
                pid = pref[key] = len(pref) + 1
            pids.append(pid)
        sid = 0
        sids = [0]
        for t in reversed(toks):
            key = (sid, t)
            sid = suff.get(key)
            if sid is None:
                sid = suff[key] = len(suff) + 1
            sids.append(sid)
        sids.reverse()
        p_flat.extend(pids)
        q_flat.extend(sids)
        offs.append(len(w))
        o_flat.extend(offs)
        pos += n + 1
        if progress and (ui % step == 0 or ui == nurl - 1):
            progress("tokenize", ui + 1, nurl)
    P = np.asarray(p_flat, dtype=np.int64)
    Q = np.asarray(q_flat, dtype=np.int64)
    O = np.asarray(o_flat, dtype=np.int64)
    nq = len(suff) + 1
    del pref, suff, p_flat, q_flat, o_flat
    # --- the substring table ST as arrays: bucket key, url, char start, char end ---
    keys, tus, cas, cbs = [], [], [], []
    for n in np.unique(lens).tolist() if nurl else []:
        us = np.flatnonzero(lens == n)
        ii, jj = _positions(n, params.S)
        bi = base[us][:, None] + ii[None, :]
        bj = base[us][:, None] + jj[None, :]
        keys.append((P[bi] * nq + Q[bj]).ravel())
        tus.append(np.repeat(us, len(ii)))
        cas.append(O[bi].ravel())
        cbs.append(O[bj].ravel())
    if keys:
        key = np.concatenate(keys)
        tu = np.concatenate(tus)
        ca = np.concatenate(cas)
        cb = np.concatenate(cbs)
    else:
        key = tu = ca = cb = np.zeros(0, dtype=np.int64)
    del keys, tus, cas, cbs, P, Q, O
    ntuples = len(key)
    if progress:
        progress("substrings", ntuples, ntuples)
    # --- buckets (Figure 1 line 11) ---
    order = np.argsort(key, kind="stable")
    ks = key[order]
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
    # --- substring ids of the members of usable buckets ---
    texts: list[str] = []
    ids: dict[str, int] = {}
    mu = tu[mem]
    aid = np.fromiter(
        (
            ids.setdefault(wrapped[u][a:b], len(ids))
            for u, a, b in zip(mu.tolist(), ca[mem].tolist(), cb[mem].tolist())
        ),
        dtype=np.int64,
        count=nmem,
    )
    texts = list(ids)
    del ids, tu, ca, cb, mem
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


def _likely_similar_mask(
    urllist: URLList, urls: list[str], u1: np.ndarray, u2: np.ndarray, params: DustParams
) -> np.ndarray:
    """Vectorised LikelySimilar (see :func:`dust.urllist.likely_similar`, which it equals)."""
    if not params.similarity or not len(u1):
        return np.ones(len(u1), dtype=bool)
    infos = [urllist.infos[u] for u in urls]
    has = np.fromiter((i.lo is not None for i in infos), dtype=bool, count=len(infos))
    lo = np.fromiter((i.lo if i.lo is not None else 0 for i in infos), dtype=np.int64, count=len(infos))
    hi = np.fromiter((i.hi if i.hi is not None else 0 for i in infos), dtype=np.int64, count=len(infos))
    sig = np.fromiter((bool(i.digests or i.sketches) for i in infos), dtype=bool, count=len(infos))
    disjoint = has[u1] & has[u2] & ((hi[u1] < lo[u2]) | (hi[u2] < lo[u1]))
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
