"""Phase 1: detecting likely DUST rules (WWW 2007 §5.1, Figure 1; thesis §5.1, Figure 5.1).

For every substring α of every URL (0..S tokens, sentinels ``^``/``$`` included, so rules may be
anchored) the envelope (p, s) with ``u = pαs`` is recorded.  Substrings are grouped into buckets
by envelope; a bucket of size 1 or larger than T is ignored (small buckets heuristic, §4); every
pair of distinct members (α, β) of a usable bucket whose URLs are LikelySimilar adds one to the
support of the pair.  The support of (α, β) is thus ``|(E(α) ∩ E(β)) \\ (O ∪ D_αβ)|``.

The same bucket pass yields both the T_low and the T_high supports (§5.2): a bucket of size k
counts toward T_low when 2 <= k <= T_low and toward T_high when 2 <= k <= T_high.

Implementation (same result as Figure 1, checked against a literal plain-dict oracle in
tests/oracle.py): token sequences, hence prefixes, suffixes and substrings, get exact integer names
(:mod:`dustbuster.core.urls.substrings`: token ids, then ids of 2^k-token windows by doubling; no
fingerprints), so an envelope (p, s) is a pair of dense ids and a bucket key one 64-bit integer;
grouping is a numpy sort instead of the paper's sort of a text file.  A tuple whose prefix or
suffix occurs in no other URL is alone in its bucket and is counted but not sorted.  Substring
texts are sliced once per distinct substring that takes part in a LikelySimilar instance.

Positions: in ``^ t1 .. tk $`` (n = k + 2 tokens) a non-empty substring is any [i, j) with
0 <= i < j <= n and j - i <= S; the empty substring (ℓ = 0, thesis §5.1) is taken at the
positions 1 <= i <= n - 1 between the sentinels.  Bounded cost (ours): a URL whose envelopes
would exceed ``params.max_envelopes`` gets a smaller S of its own (:func:`max_span`); streaming
windows run this same function on a site's URL list (state/partitions.py); docs/cost.md.
"""

from __future__ import annotations

import logging
import time
from functools import lru_cache
from dataclasses import dataclass, field
from itertools import combinations
from typing import Callable

import numpy as np

from dustbuster.core.model.pair import Pair
from dustbuster.core.params import DustParams
from dustbuster.core.urls.substrings import TokenNames, Tokens, dense, hashed_parts, seq_keys
from dustbuster.core.urls.urlindex import URLIndex
from dustbuster.core.urls.tokens import shrinks, wrap
from dustbuster.core.urls.urllist import URLList, likely_similar

log = logging.getLogger(__name__)

Progress = Callable[[str, int, int], None]


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


@lru_cache(maxsize=1024)
def _positions(n: int, S: int, max_envelopes: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """All (i, j) substring positions of a token sequence of length n (see module docstring), with
    substrings of at most :func:`max_span` tokens: for each i in order, the empty substring (i, i)
    when 1 <= i <= n - 1, then (i, i + 1), (i, i + 2), ...  Cached; the arrays are read-only."""
    S = max_span(n, S, max_envelopes)
    i = np.arange(n + 1, dtype=np.int64)
    empty = ((i >= 1) & (i <= n - 1)).astype(np.int64)
    count = empty + np.minimum(n, i + S) - i
    ii = np.repeat(i, count)
    local = np.arange(len(ii), dtype=np.int64) - np.repeat(np.cumsum(count) - count, count)
    jj = ii + local + 1 - empty[ii]
    ii.setflags(write=False)
    jj.setflags(write=False)
    return ii, jj


def count_supports(urllist: URLList, params: DustParams, progress: Progress | None = None,
                   index: URLIndex | None = None) -> SupportTable:
    """Figure 1 lines 5–20 for T_low and T_high at once.  ``index``: the list's parse kept
    between windows (:meth:`URLIndex.refresh`), which then keeps the token ids too
    (:func:`kept_token_names`): only the URLs appended since the last count are scanned; the
    same supports."""
    t0 = time.perf_counter()
    urls = urllist.urls()
    nurl = len(urls)
    # --- tokenize; prefix/suffix ids (Figure 1 lines 5-10) ---
    if index is not None and index.urllist is urllist:
        tok = Tokens.named(kept_token_names(index, urls))
    else:
        tok = Tokens([wrap(u) for u in urls])
    if progress:
        progress("tokenize", nurl, nurl)
    base, url_of, P, Q = _envelope_ids(tok)
    if progress:
        progress("envelopes", nurl, nurl)
    # --- the substring table ST: bucket keys of the tuples that may share their envelope ---
    key, tbi, tbj, ntuples = _tuples(tok.n, base, P, Q, params)
    del P, Q
    if progress:
        progress("substrings", ntuples, ntuples)
    # --- buckets (Figure 1 line 11): sort by envelope, some of the envelopes at a time ---
    nbuckets = ntuples - len(key)  # each tuple left out has an envelope of its own
    sz_l, mem_l, low_l = [], [], []
    for order, ks in hashed_parts(key):  # a bucket is within one part; the parts' order is no matter
        starts = np.flatnonzero(np.r_[True, ks[1:] != ks[:-1]])
        sizes = np.diff(np.r_[starts, len(ks)])
        nbuckets += len(starts)
        del ks
        usable = (sizes >= 2) & (sizes <= params.t_high)
        st, sz = starts[usable], sizes[usable]
        mstart = np.cumsum(sz) - sz  # start of each usable bucket in the part's member space
        mem_l.append(order[np.repeat(st - mstart, sz) + np.arange(int(sz.sum()))])
        sz_l.append(sz)
        low_l.append(int(((sz >= 2) & (sz <= params.t_low)).sum()))
        del order, starts, sizes, usable, st, mstart
    del key
    sz = np.concatenate(sz_l) if sz_l else np.zeros(0, dtype=np.int64)
    mem = np.concatenate(mem_l) if mem_l else np.zeros(0, dtype=np.int64)
    del sz_l, mem_l
    mstart = np.cumsum(sz) - sz  # start of each usable bucket in member space
    nmem = int(sz.sum())
    mbi, mbj = tbi[mem], tbj[mem]
    del tbi, tbj, mem
    mu = url_of[mbi]  # the URL of each member
    del url_of
    if progress:
        progress("buckets", len(sz), nbuckets)
    # --- pairs of each usable bucket (Figure 1 lines 12-16), LikelySimilar ones only ---
    m1, m2, low = _bucket_pairs(mstart, sz, params)
    sim = _likely_similar_mask(urllist, urls, mu[m1], mu[m2], params)
    ninst = len(m1)
    m1, m2, low = m1[sim], m2[sim], low[sim]
    # --- substring ids of the members of those instances: texts only for the distinct ones ---
    aid, texts = _member_ids(tok, mbi - mu, mbj - mbi, np.r_[m1, m2], nmem)
    a1, a2 = aid[m1], aid[m2]
    del m1, m2, aid
    na = max(1, len(texts))
    codes = np.minimum(a1, a2) * na + np.maximum(a1, a2)
    del a1, a2
    uh, ch = np.unique(codes, return_counts=True)
    ul, cl = np.unique(codes[low], return_counts=True)
    cl_full = np.zeros(len(uh), dtype=np.int64)
    cl_full[np.searchsorted(uh, ul)] = cl
    stats = {
        "urls": nurl,
        "tuples": ntuples,
        "buckets": int(nbuckets),
        "buckets_usable_high": int(len(sz)),
        "buckets_usable_low": sum(low_l),
        "instances": int(ninst),
        "instances_disqualified": int(ninst - len(codes)),
        "distinct_pairs": int(len(uh)),
        "detect_seconds": round(time.perf_counter() - t0, 3),
    }
    log.debug("count_supports: %s", stats)
    return SupportTable(texts=texts, codes=uh, high=ch.astype(np.int64), low=cl_full, stats=stats)


def kept_token_names(index: URLIndex, urls: list[str] | None = None, windows: bool = True) -> TokenNames:
    """The token ids kept with ``index`` (made on first use), brought up to date with its list's
    URLs (``urls``: that list's, when the caller has them): only the appended URLs scanned.  A
    two-process mine calls it before it forks, so that the names the child uses are kept.
    ``windows``: name the appended URLs' windows, prefixes and suffixes too (else the count does:
    TokenNames.update)."""
    names = index.token_names
    if names is None:
        names = index.token_names = TokenNames()
    names.update([wrap(u) for u in (index.urllist.urls() if urls is None else urls)], windows=windows)
    return names


def _envelope_ids(tok: Tokens) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """(base, url_of, P, Q) over the token boundaries of all URLs, flat (``base[u]`` the first of
    URL u's n + 1, ``url_of`` the URL of each): P the id of the prefix before the boundary, Q of
    the suffix after it (dense ids, or the ids kept with the token ids where ``tok`` has them:
    core/urls/keptwindows.py); equal ids ⇔ equal strings, so (P, Q) names an envelope (p, s)."""
    nurl = len(tok.n)
    counts = tok.n + 1
    base = tok.base + np.arange(nurl, dtype=np.int64)
    small = np.int32 if nurl < 2**31 else np.int64  # URL numbers and envelope ids: half the bytes where they fit
    url_of = np.repeat(np.arange(nurl, dtype=small), counts)
    if tok.prefix is not None and tok.suffix is not None:  # kept with the list's token ids (Tokens.named)
        return base, url_of, tok.prefix, tok.suffix
    at = np.arange(int(counts.sum()), dtype=np.int64) - base[url_of]  # the boundary's index in its URL
    start = tok.base[url_of]
    P = dense(seq_keys(tok.levels, start, at), narrow=True)
    Q = dense(seq_keys(tok.levels, start + at, tok.n[url_of] - at), narrow=True)
    return base, url_of, P, Q


def _tuples(lens: np.ndarray, base: np.ndarray, P: np.ndarray, Q: np.ndarray, params: DustParams
            ) -> tuple[np.ndarray, np.ndarray, np.ndarray, int]:
    """(key, start, end, count) of the substring tuples (module docstring's positions): the
    envelope key ``P * nq + Q`` and flat boundary indices, and the number of all tuples.  Only
    tuples whose prefix and suffix both occur in another URL are kept: the others are alone in
    their bucket (a URL has one tuple per envelope), which is then never usable.  A URL's shared
    prefixes are those up to some boundary (a prefix of a shared prefix is shared), its shared
    suffixes those from some boundary on."""
    nq = int(Q.max()) + 1 if len(Q) else 1
    if not len(P):
        return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64), 0
    last_p = np.add.reduceat((np.bincount(P)[P] >= 2).astype(np.int64), base) - 1  # last shared prefix end
    first_q = lens + 1 - np.add.reduceat((np.bincount(Q)[Q] >= 2).astype(np.int64), base)  # first shared suffix start
    idx_t: type[np.signedinteger] = np.int32 if len(P) < 2**31 else np.int64
    base_t, last_p, first_q = base.astype(idx_t), last_p.astype(idx_t), first_q.astype(idx_t)
    groups = []
    total = kept = 0
    for n in np.unique(lens).tolist():  # how many tuples each length keeps, then the columns filled in place
        us = np.flatnonzero(lens == n)
        ii, jj = (x.astype(idx_t) for x in _positions(n, params.S, params.max_envelopes))
        total += len(us) * len(ii)
        k = int(np.count_nonzero((ii[None, :] <= last_p[us][:, None]) & (jj[None, :] >= first_q[us][:, None])))
        groups.append((us, ii, jj, kept))
        kept += k
    key = np.empty(kept, dtype=np.int64)
    bis, bjs = np.empty(kept, dtype=idx_t), np.empty(kept, dtype=idx_t)
    for us, ii, jj, at in groups:
        row, col = np.nonzero((ii[None, :] <= last_p[us][:, None]) & (jj[None, :] >= first_q[us][:, None]))
        b = base_t[us][row]
        end = at + len(row)
        bi, bj = bis[at:end], bjs[at:end]
        np.add(b, ii[col], out=bi)
        np.add(b, jj[col], out=bj)
        np.multiply(P[bi], nq, out=key[at:end], dtype=np.int64)  # P may be int32: the product is not
        key[at:end] += Q[bj]
        del row, col, b, bi, bj
    return key, bis, bjs, total


def _bucket_pairs(mstart: np.ndarray, sz: np.ndarray, params: DustParams) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(first member, second member, counts toward T_low) of every pair of every usable bucket."""
    m1s, m2s, lows = [], [], []
    for k in range(2, params.t_high + 1):
        sel = mstart[sz == k]
        if not len(sel):
            continue
        combos = np.asarray(list(combinations(range(k), 2)), dtype=np.int64)
        m1s.append((sel[:, None] + combos[None, :, 0]).ravel())
        m2s.append((sel[:, None] + combos[None, :, 1]).ravel())
        lows.append(np.full(len(sel) * len(combos), k <= params.t_low))
    if not m1s:
        return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64), np.zeros(0, dtype=bool)
    return np.concatenate(m1s), np.concatenate(m2s), np.concatenate(lows)


def _member_ids(tok: Tokens, start: np.ndarray, length: np.ndarray, used: np.ndarray, nmem: int) -> tuple[np.ndarray, list[str]]:
    """Dense substring ids of the members ``used`` (flat token ``start``, ``length`` per member; -1
    for the others) and the text of each id, sliced once per distinct substring."""
    mask = np.zeros(nmem, dtype=bool)
    mask[used] = True
    sel = np.flatnonzero(mask)
    ids = dense(seq_keys(tok.levels, start[sel], length[sel]))
    aid = np.full(nmem, -1, dtype=np.int64)
    aid[sel] = ids
    first = np.empty(int(ids.max()) + 1 if len(ids) else 0, dtype=np.int64)
    first[ids] = sel  # any member of an id will do: they have the same text
    return aid, tok.text(start[first], length[first])


def _likely_similar_mask(
    urllist: URLList, urls: list[str], u1: np.ndarray, u2: np.ndarray, params: DustParams
) -> np.ndarray:
    """Vectorised LikelySimilar (see :func:`dustbuster.core.urls.urllist.likely_similar`, which it equals).

    A URL without a size interval gets [-inf, +inf]: with a slack >= 0 no test against it finds the
    intervals disjoint (inf or NaN compare false), as in likely_similar; the others compare as the
    floats likely_similar computes."""
    if not params.similarity or not len(u1):
        return np.ones(len(u1), dtype=bool)
    infos = [urllist.infos[u] for u in urls]
    if not params.size_slack >= 0:  # not a valid DustParams: the literal test
        return np.fromiter((likely_similar(infos[a], infos[b], params) for a, b in zip(u1.tolist(), u2.tolist())),
                           dtype=bool, count=len(u1))
    inf = float("inf")
    lo = np.fromiter((-inf if i.lo is None else i.lo for i in infos), dtype=np.float64, count=len(infos))
    hi = np.fromiter((inf if i.lo is None else i.hi for i in infos), dtype=np.float64, count=len(infos))
    h1, h2 = hi[u1], hi[u2]
    with np.errstate(invalid="ignore"):  # 0 * inf
        slack = params.size_slack * np.maximum(h1, h2)  # the same float arithmetic as likely_similar
        sim = ~((h1 + slack < lo[u2]) | (h2 + slack < lo[u1]))
    sig = np.fromiter((bool(i.digests or i.sketches) for i in infos), dtype=bool, count=len(infos))
    if sig.any():
        both_sig = np.flatnonzero(sig[u1] & sig[u2])
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
