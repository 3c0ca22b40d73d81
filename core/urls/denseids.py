"""Exact integer names of integer tuples: :func:`pack` (bit packing) and :func:`dense` (dense ids
in key order by one value sort), what Figure 1's sequence names are made of
(core/urls/substrings.py, core/urls/keptwindows.py).  Ours: the paper sorts a text file."""

from __future__ import annotations

import numpy as np


def pack(cols: list[np.ndarray]) -> np.ndarray:
    """One non-negative int64 per row naming the tuple of non-negative columns exactly (bit
    packing; densified with :func:`dense` first where the bits would not fit in 62)."""
    acc = cols[0].astype(np.int64, copy=False)
    for c in cols[1:]:
        width = max(1, int(c.max()).bit_length()) if len(c) else 1
        if len(acc) and int(acc.max()).bit_length() + width > 62:
            acc = dense(acc)
        acc = (acc << width) | c
    return acc


def dense(key: np.ndarray, narrow: bool = False) -> np.ndarray:
    """Dense ids 0..m-1 of non-negative int64 keys in sorted key order: equal ids ⇔ equal keys.
    ``narrow``: int32 ids where they fit (half the bytes), else int64.

    One value sort of key and index packed in an int64; a key too wide for that is first narrowed
    (its high bits replaced by their own dense ids, which keeps order and equality)."""
    n = len(key)
    dtype = np.int32 if narrow and n < 2**31 else np.int64
    if not n:
        return np.zeros(0, dtype=dtype)
    kbits = max(1, int(key.max()).bit_length())
    tbits = max(1, int(n - 1).bit_length())
    if kbits + tbits > 63:
        low = 63 - 2 * tbits
        if low < 1:
            return np.unique(key, return_inverse=True)[1].reshape(-1).astype(dtype)
        key = (dense(key >> low) << low) | (key & ((1 << low) - 1))
    packed = (key << tbits) | np.arange(n, dtype=np.int64)
    packed.sort()
    ks = packed >> tbits
    firsts = np.flatnonzero(np.r_[True, ks[1:] != ks[:-1]])
    out = np.empty(n, dtype=dtype)
    out[packed & ((1 << tbits) - 1)] = np.repeat(np.arange(len(firsts), dtype=dtype), np.diff(np.r_[firsts, n]))
    return out
