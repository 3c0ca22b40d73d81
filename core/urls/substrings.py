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

from typing import Iterator

import numpy as np

from dustbuster.core.urls.denseids import dense, pack
from dustbuster.core.urls.keptwindows import KeptIds, KeptWindows
from dustbuster.core.urls.tokens import START


_ALNUM_CHARS = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"
_ALNUM = np.zeros(128, dtype=bool)
_ALNUM[[ord(c) for c in _ALNUM_CHARS]] = True
_CODE = np.zeros(128, dtype=np.int64)  #: ASCII alphanumerics → 1..62
_CODE[[ord(c) for c in _ALNUM_CHARS]] = np.arange(1, 63)
_SHORT = 7  #: alphanumeric tokens of up to 7 characters are named by their 6-bit codes, packed
CHUNK_CHARS = 1 << 22  #: characters of whole URLs tokenised at once (Tokens)


class Tokens:
    """The token sequences of ``^url$`` for a list of wrapped URLs, flat: ``tid[base[u] + i]`` is
    the id of token i of URL u (``n[u]`` tokens), ``cum[p]`` the character offset of flat token p
    in ``joined``, the wrapped URLs concatenated.  Tokens as :data:`dustbuster.core.urls.tokens._TOKEN_RE`
    finds them: maximal runs of ASCII alphanumerics, every other character alone (the sentinels
    are non-alphanumeric, so no token spans two URLs)."""

    def __init__(self, wrapped: list[str], chunk_chars: int = CHUNK_CHARS) -> None:
        self.joined = "".join(wrapped)
        starts, key, head = _scan(self.joined, 0, [len(w) for w in wrapped], chunk_chars)
        self.cum = np.r_[starts, len(self.joined)].astype(np.int64)
        tid = _token_ids(self.joined, starts, np.diff(self.cum), key)
        del key
        self.base = np.flatnonzero(head == ord(START))  # ^ occurs only at a URL's start
        del head
        self.n = np.diff(np.r_[self.base, len(starts)]).astype(np.int64)
        del starts
        self.levels = _levels(tid, self.base, self.n)
        self.prefix: np.ndarray | None = None  #: kept prefix ids per boundary (:meth:`named`), else None
        self.suffix: np.ndarray | None = None  #: kept suffix ids per boundary

    @classmethod
    def named(cls, names: "TokenNames") -> "Tokens":
        """The tokens of the wrapped URLs ``names`` holds (:meth:`TokenNames.update`), their ids
        kept there, and the ids of their windows, prefixes and suffixes kept with them
        (core/urls/keptwindows.py): nothing named again."""
        tok = cls.__new__(cls)
        tok.joined = names.joined
        tok.cum = np.r_[names.starts, len(names.joined)].astype(np.int64)
        tok.base = names.base.astype(np.int64)
        tok.n = np.diff(np.r_[tok.base, len(names.tid)]).astype(np.int64)
        names.windows.extend(names.tid, names.base)  # where the update left them behind
        tok.levels = names.windows.levels
        tok.prefix, tok.suffix = names.windows.prefix, names.windows.suffix
        return tok

    @property
    def tid(self) -> np.ndarray:
        """The token ids (the windows of one token: not kept twice)."""
        return self.levels[0]

    def text(self, start: np.ndarray, length: np.ndarray) -> list[str]:
        """The texts of the flat token ranges [start, start + length)."""
        j, cum = self.joined, self.cum
        return [j[a:b] for a, b in zip(cum[start].tolist(), cum[start + length].tolist())]


def _slices(lengths: list[int], chunk_chars: int) -> list[tuple[int, int]]:
    """(start, end) character offsets of runs of whole strings of ``lengths``, each of about
    ``chunk_chars`` characters (a longer string alone), covering them all in order."""
    out, lo, at = [], 0, 0
    for n in lengths:
        at += n
        if at - lo >= chunk_chars:
            out.append((lo, at))
            lo = at
    if at > lo:
        out.append((lo, at))
    return out


def _scan(joined: str, offset: int, lengths: list[int], chunk_chars: int
          ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(starts, keys, first code points) of the tokens of ``joined[offset:]``, made of wrapped URLs
    of ``lengths``: the character offsets in ``joined``, :func:`_token_keys`' keys.  The
    per-character work a slice of whole URLs at a time (a token never spans two URLs): its arrays
    are a slice's, not the whole list's (8 bytes a character each)."""
    starts_l, key_l, head_l = [], [], []
    for lo, hi in _slices(lengths, chunk_chars):
        lo, hi = lo + offset, hi + offset
        cp = np.frombuffer(joined[lo:hi].encode("utf-32-le", "surrogatepass"), dtype=np.uint32).astype(np.int64)
        alnum = (cp < 128) & _ALNUM[np.minimum(cp, 127)]
        first = np.ones(len(cp), dtype=bool)
        first[1:] = ~(alnum[1:] & alnum[:-1])
        del alnum
        starts = np.flatnonzero(first)
        del first
        key_l.append(_token_keys(cp, starts, np.diff(np.r_[starts, len(cp)])))
        head_l.append(cp[starts])
        starts_l.append(starts + lo)
    empty = np.zeros(0, dtype=np.int64)
    return tuple(np.concatenate(x) if x else empty for x in (starts_l, key_l, head_l))  # type: ignore[return-value]


def _levels(tid: np.ndarray, base: np.ndarray, n: np.ndarray) -> np.ndarray:
    """:func:`_windows` of the tokens ``tid`` of URLs starting at flat ``base`` with ``n`` tokens."""
    return _windows(tid, np.repeat(base + n, n), int(n.max()) if len(tid) else 0)


class TokenNames:
    """The token ids of a URL list that only grows (a streaming window's list under its cap), kept
    from one call to the next: :meth:`update` scans only the characters of the URLs appended since
    and names their tokens with the ids already given (a token's text keeps its id), and
    :meth:`Tokens.named` makes the :class:`Tokens` of the whole list without scanning the others
    again.  A list that is not the kept one with URLs appended (the kept text is not a prefix of
    the new one) is named anew.  Equal ids ⇔ equal texts, as :class:`Tokens` gives them; the ids
    themselves differ (they follow arrival, not sorted order), which no caller reads.  Ours, not
    the paper's: Figure 1 recounts from the texts each time.

    Memory: the wrapped URLs' text (one byte a character where ASCII), 4 bytes a token twice (its
    offset and id) and 8 a URL: ~22 MB for the forum site at the cap of 100,000 URLs (2 M tokens).

    >>> from dustbuster.core.urls.tokens import wrap
    >>> names = TokenNames()
    >>> names.update([wrap("http://a/x")])
    >>> names.update([wrap("http://a/x"), wrap("http://a/xy")])  # one URL appended
    >>> tok = Tokens.named(names)
    >>> tok.n.tolist(), [t[1:-1] for t in tok.text(tok.base, tok.n)]  # less the sentinels
    ([9, 9], ['http://a/x', 'http://a/xy'])
    >>> names.scanned  # characters scanned: each URL once
    25
    >>> bool(tok.tid[tok.base[0] + 7] == tok.tid[tok.base[1] + 7])  # "x" and "xy" differ
    False
    """

    def __init__(self) -> None:
        self._reset()

    def _reset(self) -> None:
        self.joined = ""
        self.starts = np.zeros(0, dtype=np.int32)  #: each token's character offset in ``joined``
        self.tid = np.zeros(0, dtype=np.int32)  #: each token's id
        self.base = np.zeros(0, dtype=np.int64)  #: each URL's first token
        self._short = KeptIds()  #: the short tokens' ids, by their keys (_token_keys)
        self._long: dict[str, int] = {}  #: the longer runs' ids, by text
        self._next = 0  #: the next id to give
        self.scanned = 0  #: characters scanned, all calls together
        self.windows = KeptWindows()  #: the ids of the list's windows, prefixes and suffixes

    def update(self, wrapped: list[str], chunk_chars: int = CHUNK_CHARS, windows: bool = True) -> None:
        """Hold the tokens of ``wrapped``: the kept ones where ``wrapped`` is the kept list with
        URLs appended, only the appended characters scanned.  ``windows``: name the appended URLs'
        windows, prefixes and suffixes too (else :meth:`Tokens.named` does, where it is called)."""
        joined = "".join(wrapped)
        if joined == self.joined:
            return
        if not joined.startswith(self.joined):
            scanned = self.scanned
            self._reset()  # not the kept list grown: named anew
            self.scanned = scanned
        offset, at, skip = len(self.joined), 0, 0
        lengths = [len(w) for w in wrapped]
        while at < offset:  # the URLs already held (a wrapped URL is whole: ^ only starts one)
            at += lengths[skip]
            skip += 1
        starts, key, head = _scan(joined, offset, lengths[skip:], chunk_chars)
        self.scanned += len(joined) - offset
        ids = self._ids(joined, starts, np.diff(np.r_[starts, len(joined)]), key)
        dtype = np.int32 if self._next < 2**31 else np.int64
        base = np.r_[self.base, len(self.tid) + np.flatnonzero(head == ord(START))]
        tid = np.r_[self.tid, ids].astype(dtype)
        if windows:
            self.windows.extend(tid, base)  # first: a failure there leaves the names as they were
        self.starts = np.r_[self.starts, starts].astype(np.int32 if len(joined) < 2**31 else np.int64)  # half the bytes
        self.base, self.tid, self.joined = base, tid, joined

    def _ids(self, joined: str, starts: np.ndarray, tlen: np.ndarray, key: np.ndarray) -> np.ndarray:
        """The ids of new tokens: a short one's by its key, a longer run's by its text; a key or
        text not seen before gets the next id."""
        ids = np.empty(len(starts), dtype=np.int64)
        short = np.flatnonzero(tlen <= _SHORT)
        self._short.next = self._next  # one id counter for the short tokens and the longer runs
        ids[short] = self._short.of(key[short])
        self._next = self._short.next
        long_at = np.flatnonzero(tlen > _SHORT)
        if len(long_at):
            names, out = self._long, []
            for a, b in zip(starts[long_at].tolist(), (starts + tlen)[long_at].tolist()):
                i = names.get(joined[a:b])
                if i is None:
                    i = names[joined[a:b]] = self._next
                    self._next += 1
                out.append(i)
            ids[long_at] = out
        return ids


def _token_keys(cp: np.ndarray, starts: np.ndarray, tlen: np.ndarray) -> np.ndarray:
    """A key per token (its code points ``cp``, offsets ``starts`` into them, lengths ``tlen``):
    a one-character token's code point, a run of 2..7 ASCII alphanumerics its 6-bit codes packed
    (nonzero digits: the packing is injective), tagged apart; a longer run 1 (:func:`_token_ids`
    names those by their text)."""
    if not len(starts):
        return np.zeros(0, dtype=np.int64)
    owner = np.repeat(np.arange(len(starts), dtype=np.int64), tlen)
    short = tlen[owner] <= _SHORT
    from_end = (starts + tlen - 1)[owner] - np.arange(len(cp), dtype=np.int64)
    del owner
    contrib = np.where(short, _CODE[np.minimum(cp, 127)] << np.minimum(6 * from_end, 62), 0)
    del short, from_end
    packed = np.add.reduceat(contrib, starts)
    return np.where(tlen == 1, cp[starts] << 1, (packed << 1) | 1)


def _token_ids(joined: str, starts: np.ndarray, tlen: np.ndarray, key: np.ndarray) -> np.ndarray:
    """Ids (below twice the number of tokens) of the tokens (``starts``, ``tlen``: their character
    offsets in ``joined`` and lengths; ``key``: :func:`_token_keys`'): equal ids ⇔ equal texts.  A
    token of up to 7 characters is named by its key; a longer run (all of them share the key 1)
    by a dict keyed by its text, after the others."""
    if not len(starts):
        return np.zeros(0, dtype=np.int64)
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
    # ids are below twice the tokens: 32 bits hold them for any list that fits in memory (half the bytes)
    levels = np.full((depth, T), -1, dtype=np.int32 if 2 * T < 2**31 else np.int64)
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


def sort_keys(key: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(order, sorted keys) of non-negative int64 keys: :func:`sorted_parts` joined."""
    parts = list(sorted_parts(key))
    if len(parts) == 1:
        return parts[0]
    if not parts:
        return np.zeros(0, dtype=np.int64), key
    return np.concatenate([o for o, _ in parts]), np.concatenate([k for _, k in parts])


def sorted_parts(key: np.ndarray) -> Iterator[tuple[np.ndarray, np.ndarray]]:
    """(order, sorted keys) of non-negative int64 keys, in parts: joined, they are a stable
    argsort and the keys in that order; a part holds all elements of its keys (parts are ranges
    of key values, in order), so the caller can use each and drop it.

    ``argsort`` is slow on millions of keys; sorting values is fast.  So the key's low bits and the
    element's index are packed into one int64 and sorted by value.  When key and index do not fit
    in 63 bits together, the elements are first partitioned by the key's high bits (each
    partition's indices found by a comparison, in index order), and each partition is sorted the
    same way with local indices: no array of all elements beyond the keys is made.
    """
    n = len(key)
    if not n:
        return
    kbits = max(1, int(key.max()).bit_length())
    tbits = max(1, int(n - 1).bit_length())
    if kbits + tbits <= 63:
        packed = (key << tbits) | np.arange(n, dtype=np.int64)
        packed.sort()
        yield packed & ((1 << tbits) - 1), packed >> tbits
        return
    lowbits = 63 - tbits
    part = key >> lowbits
    counts = np.bincount(part)
    # a small unsigned type: the comparisons below read a quarter or an eighth of the bytes
    small = np.uint8 if len(counts) <= 1 << 8 else np.uint16 if len(counts) <= 1 << 16 else np.int64
    part = part.astype(small)
    lowmask, imask = (1 << lowbits) - 1, (1 << tbits) - 1
    for p, c in enumerate(counts.tolist()):
        if not c:
            continue
        idx = np.flatnonzero(part == p)
        packed = key[idx]
        packed &= lowmask
        packed <<= tbits
        packed |= np.arange(c, dtype=np.int64)
        packed.sort()
        order = idx[packed & imask]
        del idx
        packed >>= tbits  # the low bits again, sorted: the key is the partition's high bits and these
        packed |= p << lowbits
        yield order, packed


def hashed_parts(key: np.ndarray, part_size: int = 1 << 21) -> Iterator[tuple[np.ndarray, np.ndarray]]:
    """The elements of non-negative int64 keys grouped by key, a part at a time: (indices, keys)
    per part, the indices sorted by key (equal keys in index order) and the keys in that order,
    shifted right by the part's bits (equal ⇔ equal within a part).  The parts are the keys' low
    bits (about ``part_size`` elements each, whatever the high bits hold), so every element of a
    key is in one part, but the parts are not in key order (:func:`sorted_parts` is).  For
    grouping in bounded memory: beyond the keys, arrays of a part's size only."""
    n = len(key)
    if not n:
        return
    kbits = max(1, int(key.max()).bit_length())
    r = max(0, (n - 1) // part_size).bit_length()
    while True:
        low = key & ((1 << r) - 1) if r else None
        counts = np.bincount(low, minlength=1 << r) if low is not None else np.array([n])
        if max(1, kbits - r) + max(1, int(counts.max() - 1).bit_length()) <= 63:
            break
        if r >= 16:
            yield from sorted_parts(key)
            return
        r += 1
    if low is None:
        yield from sorted_parts(key)
        return
    low = low.astype(np.uint8 if r <= 8 else np.uint16)  # the comparisons read fewer bytes
    for p, c in enumerate(counts.tolist()):
        if not c:
            continue
        idx = np.flatnonzero(low == p)
        tbits = max(1, int(c - 1).bit_length())
        packed = key[idx]
        packed >>= r
        packed <<= tbits
        packed |= np.arange(c, dtype=np.int64)
        packed.sort()
        order = idx[packed & ((1 << tbits) - 1)]
        del idx
        packed >>= tbits
        yield order, packed
