"""Exact names for the token substrings of a URL list (WWW 2007 §5.1, Figure 1 lines 5–10).

Figure 1 records, for every substring α of every URL ``u = pαs``, the envelope (p, s), and then
compares substrings by text.  The batch engine (:mod:`dustbuster.core.mining.detect`) needs integer names
instead: equal names exactly when the token sequences, hence the texts, are equal.  This module
gives them without slicing a string per substring and without fingerprints:

* each distinct token gets a dense id (a dict keyed by the token's text: equality-checked);
* by doubling, each window of 2^k tokens gets a dense id from the ids of its two halves (a sort
  of packed integer pairs, :func:`dense`), for every k up to the longest URL;
* a sequence of L tokens, 2^k <= L < 2^(k+1), is then named by (L, id of its first 2^k tokens,
  id of its last 2^k tokens): the two windows cover it, so equal names ⇔ equal sequences.

A substring of ``^url$`` starts and ends on token boundaries, so its tokens are those of its own
text: equal token sequences ⇔ equal texts.  Prefixes (p), suffixes (s) and substrings (α) are all
named this way (:func:`seq_keys`), and :func:`dense` turns the packed names into dense ids.
"""

from __future__ import annotations

import numpy as np

from dustbuster.core.urls.tokens import START


_ALNUM_CHARS = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"
_ALNUM = np.zeros(128, dtype=bool)
_ALNUM[[ord(c) for c in _ALNUM_CHARS]] = True
_CODE = np.zeros(128, dtype=np.int64)  #: ASCII alphanumerics → 1..62
_CODE[[ord(c) for c in _ALNUM_CHARS]] = np.arange(1, 63)
_SHORT = 7  #: alphanumeric tokens of up to 7 characters are named by their 6-bit codes, packed


class Tokens:
    """The token sequences of ``^url$`` for a list of wrapped URLs, flat: ``tid[base[u] + i]`` is
    the id of token i of URL u (``n[u]`` tokens), ``cum[p]`` the character offset of flat token p
    in ``joined``, the wrapped URLs concatenated.  Tokens as :data:`dustbuster.core.urls.tokens._TOKEN_RE`
    finds them: maximal runs of ASCII alphanumerics, every other character alone (the sentinels
    are non-alphanumeric, so no token spans two URLs)."""

    def __init__(self, wrapped: list[str]) -> None:
        self.joined = "".join(wrapped)
        cp = np.frombuffer(self.joined.encode("utf-32-le", "surrogatepass"), dtype=np.uint32).astype(np.int64)
        alnum = (cp < 128) & _ALNUM[np.minimum(cp, 127)]
        first = np.ones(len(cp), dtype=bool)
        first[1:] = ~(alnum[1:] & alnum[:-1])
        starts = np.flatnonzero(first)
        self.cum = np.r_[starts, len(cp)].astype(np.int64)
        self.tid = _token_ids(self.joined, cp, starts, np.diff(self.cum))
        self.base = np.flatnonzero(cp[starts] == ord(START))  # ^ occurs only at a URL's start
        self.n = np.diff(np.r_[self.base, len(starts)]).astype(np.int64)
        T = len(starts)
        self.levels = _windows(self.tid, np.repeat(self.base + self.n, self.n), int(self.n.max()) if T else 0)

    def text(self, start: np.ndarray, length: np.ndarray) -> list[str]:
        """The texts of the flat token ranges [start, start + length)."""
        j, cum = self.joined, self.cum
        return [j[a:b] for a, b in zip(cum[start].tolist(), cum[start + length].tolist())]


def _token_ids(joined: str, cp: np.ndarray, starts: np.ndarray, tlen: np.ndarray) -> np.ndarray:
    """Ids (below twice the number of tokens) of the tokens (``starts``, ``tlen``: their character
    offsets and lengths): equal ids ⇔ equal texts.  A one-character token is named by its code
    point, a run of 2..7 ASCII alphanumerics by its 6-bit codes packed (nonzero digits: the
    packing is injective), tagged apart; a longer run (all of them share the key 1 here) by a dict
    keyed by its text, after the others."""
    if not len(starts):
        return np.zeros(0, dtype=np.int64)
    owner = np.repeat(np.arange(len(starts), dtype=np.int64), tlen)
    short = tlen[owner] <= _SHORT
    from_end = (starts + tlen - 1)[owner] - np.arange(len(cp), dtype=np.int64)
    contrib = np.where(short, _CODE[np.minimum(cp, 127)] << np.minimum(6 * from_end, 62), 0)
    packed = np.add.reduceat(contrib, starts)
    key = np.where(tlen == 1, cp[starts] << 1, (packed << 1) | 1)
    long_at = np.flatnonzero(tlen > _SHORT)
    ids = dense(key)
    if len(long_at):
        names: dict[str, int] = {}
        isd = names.setdefault
        texts = [joined[a:b] for a, b in zip(starts[long_at].tolist(), (starts + tlen)[long_at].tolist())]
        ids[long_at] = int(ids.max()) + 1 + np.asarray([isd(t, len(names)) for t in texts], dtype=np.int64)
    return ids  # small non-negative ids (some unused): all the windows need


def _windows(tid: np.ndarray, end: np.ndarray, longest: int) -> np.ndarray:
    """``levels[k, p]``: dense id of the tokens p .. p + 2^k - 1 (-1 where the window leaves p's URL,
    ``end[p]`` being the flat end of that URL), for 2^k <= ``longest``."""
    depth = max(1, longest.bit_length())
    T = len(tid)
    levels = np.full((depth, T), -1, dtype=np.int64)
    levels[0] = tid
    room = end - np.arange(T, dtype=np.int64)  # tokens from p to the end of its URL
    for k in range(1, depth):
        h = 1 << (k - 1)
        fits = room[:T - h] >= 2 * h
        prev = levels[k - 1]
        levels[k, :T - h][fits] = dense(pack([prev[:T - h][fits], prev[h:][fits]]))
    return levels


def seq_keys(levels: np.ndarray, start: np.ndarray, length: np.ndarray) -> np.ndarray:
    """Exact names (non-negative int64, not dense) of the token sequences [start, start + length):
    (L, first 2^k window, last 2^k window) packed, with 2^k <= L < 2^(k+1); 0 tokens → (0, 0, 0)."""
    length = np.asarray(length, dtype=np.int64)
    T = levels.shape[1]
    some = length > 0
    k = np.frexp(np.maximum(length, 1).astype(np.float64))[1] - 1  # floor(log2 L), exact
    row = k * T
    flat = levels.ravel()
    a = flat[row + np.minimum(start, T - 1)]
    b = flat[row + np.where(some, start + length - (1 << k), 0)]
    a[~some] = 0
    b[~some] = 0
    return pack([length, a, b])


def pack(cols: list[np.ndarray]) -> np.ndarray:
    """One non-negative int64 per row naming the tuple of non-negative columns exactly (bit
    packing; densified with :func:`dense` first where the bits would not fit in 62)."""
    acc = cols[0]
    for c in cols[1:]:
        width = max(1, int(c.max()).bit_length()) if len(c) else 1
        if len(acc) and int(acc.max()).bit_length() + width > 62:
            acc = dense(acc)
        acc = (acc << width) | c
    return acc


def dense(key: np.ndarray) -> np.ndarray:
    """Dense ids 0..m-1 of non-negative int64 keys in sorted key order: equal ids ⇔ equal keys.

    One value sort of key and index packed in an int64; a key too wide for that is first narrowed
    (its high bits replaced by their own dense ids, which keeps order and equality)."""
    n = len(key)
    if not n:
        return np.zeros(0, dtype=np.int64)
    kbits = max(1, int(key.max()).bit_length())
    tbits = max(1, int(n - 1).bit_length())
    if kbits + tbits > 63:
        low = 63 - 2 * tbits
        if low < 1:
            return np.unique(key, return_inverse=True)[1].reshape(-1).astype(np.int64)
        key = (dense(key >> low) << low) | (key & ((1 << low) - 1))
    packed = (key << tbits) | np.arange(n, dtype=np.int64)
    packed.sort()
    ks = packed >> tbits
    firsts = np.flatnonzero(np.r_[True, ks[1:] != ks[:-1]])
    out = np.empty(n, dtype=np.int64)
    out[packed & ((1 << tbits) - 1)] = np.repeat(np.arange(len(firsts), dtype=np.int64), np.diff(np.r_[firsts, n]))
    return out


def sort_keys(key: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
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
