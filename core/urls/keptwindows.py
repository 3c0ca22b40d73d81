"""The names of Figure 1's token sequences kept for a URL list that only grows (a streaming
window's list under its cap): the ids of the windows of 2^k tokens and of every prefix and
suffix (the envelopes' halves, WWW 2007 §5.1), given once per sequence and kept from one window
to the next, so that a window names only the sequences of the URLs appended since.

:class:`~dustbuster.core.urls.substrings.Tokens` names them afresh on each call (dense ids, one
sort per level over all tokens); here each kind of sequence has a :class:`KeptIds` map from an
exact key to an id given in arrival order.  Equal ids ⇔ equal sequences, exactly as the dense ids
tell (no fingerprints); the ids themselves differ, which no caller reads (tests/test_detect_fast.py
compares the partitions).  Ours, not the paper's: Figure 1 recounts from the texts.

Keys: a window of 2^k tokens is its two halves' ids (level k - 1) packed; a sequence of L >= 1
tokens is, as :func:`~dustbuster.core.urls.substrings.seq_keys` names it, its first and last
2^k-token windows (2^k <= L < 2^(k+1)), named by one map per k, then (L, that id) by one map for
all lengths (prefixes and suffixes share it: a prefix may be another URL's suffix); the empty
sequence is key 0.  Ids stay below 2^31 for any list that fits in memory (fewer distinct windows
than tokens per level, fewer distinct prefixes and suffixes than twice the boundaries).

Memory at the forum site's cap (100,000 URLs, 2 M tokens, 2.1 M boundaries): the windows' ids
(4 bytes a token a level), the prefix and suffix ids (4 bytes a boundary each) and the maps
(12 bytes a distinct key): docs/cost.md.
"""

from __future__ import annotations

import numpy as np

from dustbuster.core.urls.denseids import dense

#: ids are packed two to a key: each below 2^31
_HALF = 31


class KeptIds:
    """Ids of non-negative int64 keys, each new key the next id: equal ids ⇔ equal keys, and a
    key keeps its id from one call to the next.  Ids are held in 32 bits: below 2^31 keys (the
    module docstring says why they stay so).

    >>> ids = KeptIds()
    >>> ids.of(np.array([7, 3, 7])).tolist(), ids.of(np.array([3, 9])).tolist()
    ([1, 0, 1], [0, 2])
    """

    def __init__(self) -> None:
        self.keys = np.zeros(0, dtype=np.int64)  #: the keys seen, sorted
        self.ids = np.zeros(0, dtype=np.int32)  #: their ids
        self.next = 0

    def of(self, key: np.ndarray) -> np.ndarray:
        """The ids of ``key`` (int64 >= 0), giving the next ids to keys not seen before (in
        their sorted order)."""
        key = np.asarray(key, dtype=np.int64)
        out = np.empty(len(key), dtype=np.int64)
        if len(self.keys):
            pos = np.minimum(np.searchsorted(self.keys, key), len(self.keys) - 1)
            known = self.keys[pos] == key
            out[known] = self.ids[pos[known]]
        else:
            known = np.zeros(len(key), dtype=bool)
        fresh = key[~known]
        inverse = dense(_compact(fresh))  # one value sort (np.unique's inverse is an argsort: slower)
        new = np.empty(int(inverse.max()) + 1 if len(fresh) else 0, dtype=np.int64)
        new[inverse] = fresh  # the new keys, sorted
        out[~known] = self.next + inverse
        if len(new):
            at = np.searchsorted(self.keys, new)
            self.keys = np.insert(self.keys, at, new)
            self.ids = np.insert(self.ids, at, (self.next + np.arange(len(new))).astype(np.int32))
            self.next += len(new)
        return out


def _compact(key: np.ndarray) -> np.ndarray:
    """``key`` (two ids packed, :data:`_HALF` bits each) in fewer bits where they fit, the same order
    and equalities: ``hi * (max lo + 1) + lo``, which :func:`dense` sorts in one pass where the
    packed key would take two."""
    if not len(key):
        return key
    hi, lo = key >> _HALF, key & ((1 << _HALF) - 1)
    width = int(lo.max()) + 1
    if (int(hi.max()) + 1).bit_length() + width.bit_length() > 62:
        return key
    return hi * width + lo


class KeptWindows:
    """The window ids (``levels[k, p]``: tokens p .. p + 2^k - 1, -1 where the window leaves p's
    URL, as :class:`~dustbuster.core.urls.substrings.Tokens` has them) and each boundary's prefix
    and suffix ids (``prefix[b]``, ``suffix[b]``, boundaries flat: URL u's n + 1 from ``base[u] +
    u``) of the token list of :class:`~dustbuster.core.urls.substrings.TokenNames`, brought up to
    date by :meth:`extend` with the URLs appended since."""

    def __init__(self) -> None:
        self.levels = np.full((1, 0), -1, dtype=np.int32)
        self.prefix = np.zeros(0, dtype=np.int32)
        self.suffix = np.zeros(0, dtype=np.int32)
        self._windows: list[KeptIds] = [KeptIds()]  #: level k >= 1's map (index 0 unused)
        self._firstlast: list[KeptIds] = []  #: a sequence's (first, last window) per k
        self._lengths = KeptIds()  #: (length, that id): a sequence's id
        self._urls = 0  #: URLs named

    def behind(self, urls: int) -> int:
        """How many of a list of ``urls`` URLs are not named yet."""
        return urls - self._urls

    def extend(self, tid: np.ndarray, base: np.ndarray) -> None:
        """Name the sequences of the URLs appended since the last call: token ids ``tid`` (flat,
        the kept ones first), URL starts ``base`` (the kept URLs' first)."""
        nurl, ntok = len(base), len(tid)
        if nurl == self._urls:
            return
        n = np.diff(np.r_[base, ntok]).astype(np.int64)
        t0 = int(base[self._urls])  # the first new token
        self._extend_levels(tid, np.repeat(base + n, n), int(n.max()), t0)
        new = np.arange(self._urls, nurl)
        counts = n[new] + 1
        url_of = np.repeat(new, counts)
        at = np.arange(int(counts.sum()), dtype=np.int64) - np.repeat(np.cumsum(counts) - counts, counts)
        start = base[url_of].astype(np.int64)
        prefix = self._seq_ids(start, at)
        suffix = self._seq_ids(start + at, n[url_of] - at)
        # together, last: a failure before leaves them as they were (the maps' new ids are harmless)
        self.prefix = np.r_[self.prefix, prefix].astype(np.int32)
        self.suffix = np.r_[self.suffix, suffix].astype(np.int32)
        self._urls = nurl

    def _extend_levels(self, tid: np.ndarray, end: np.ndarray, longest: int, t0: int) -> None:
        """Window ids of the tokens from ``t0`` on (all tokens for a level the list did not have:
        a longer URL came); ``end[p]``: the flat end of token p's URL."""
        depth = max(1, longest.bit_length())
        T = len(tid)
        old = self.levels
        levels = np.full((max(depth, old.shape[0]), T), -1, dtype=np.int32)
        levels[:old.shape[0], :old.shape[1]] = old
        levels[0] = tid
        room = end - np.arange(T, dtype=np.int64)
        for k in range(1, levels.shape[0]):
            if k >= len(self._windows):
                self._windows.append(KeptIds())
            lo = t0 if k < old.shape[0] else 0  # a new level: every window
            h = 1 << (k - 1)
            p = lo + np.flatnonzero(room[lo:T - h] >= 2 * h) if T - h > lo else np.zeros(0, dtype=np.int64)
            prev = levels[k - 1]
            levels[k, p] = self._windows[k].of((prev[p].astype(np.int64) << _HALF) | prev[p + h])
        self.levels = levels

    def _seq_ids(self, start: np.ndarray, length: np.ndarray) -> np.ndarray:
        """Ids of the token sequences [start, start + length) (flat token offsets): equal ids ⇔
        equal sequences, the empty one included."""
        key = np.zeros(len(start), dtype=np.int64)
        some = np.flatnonzero(length > 0)
        L = length[some]
        k = np.frexp(L.astype(np.float64))[1] - 1  # floor(log2 L), exact
        first_last = np.empty(len(some), dtype=np.int64)
        for kk in np.unique(k).tolist():
            while kk >= len(self._firstlast):
                self._firstlast.append(KeptIds())
            sel = np.flatnonzero(k == kk)
            s = start[some[sel]]
            a = self.levels[kk, s].astype(np.int64)
            b = self.levels[kk, s + L[sel] - (1 << kk)]
            first_last[sel] = self._firstlast[kk].of((a << _HALF) | b)
        key[some] = (L << _HALF) | first_last
        return self._lengths.of(key)
