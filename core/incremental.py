"""Figure 1's supports maintained incrementally, for a stream of log records.

The invariant, at every commit: for every pair (α, β), the stored T_low / T_high supports equal
what :func:`dustbuster.core.detect.count_supports` computes on the current URL list, i.e. the number of
envelopes (p, s) in buckets of size 2..T whose two URLs are LikelySimilar *with their current
observations*.  It is kept by three moves:

* a new URL joins the bucket of each of its envelopes.  A bucket of k members that grows to k+1
  adds the new URL's likely-similar pairs (to T_low when k+1 <= T_low, to T_high when
  k+1 <= T_high); when it passes T_low its existing pairs leave the T_low counts; when it passes
  T_high they leave the T_high counts and the bucket becomes an overflow mark forever (a bucket
  only grows).  Members are kept up to T_high, so the work per record is bounded;
* a URL's evidence changes (its size interval widens, a digest or sketch arrives): each pair it
  has in a usable bucket is re-judged and counted in or out;
* anything else (a repeated line, a hit) changes no support: re-delivered lines are harmless.

Bounded cost (docs/cost.md): a URL has at most ``params.max_envelopes`` envelopes (its S
is lowered when it would have more: :func:`dustbuster.core.detect.max_span`, applied by the batch engine
too, so the two stay equal), and a site tracks at most ``max_urls`` URLs: a new URL beyond that
is counted in ``over_cap`` and otherwise ignored.

Storage is any :class:`dustbuster.core.kv.KV` (an in-memory dict for tests, core/kv.py; RocksDB in
state/); a URL's stored record is :mod:`dustbuster.core.urlrecord`'s.  Writes are
buffered and applied atomically by ``commit()``, together with caller metadata (input offsets),
so a crash never leaves half a batch.  Keys (bytes), per site ``S``:

* ``U S \\0 url`` → URL record (id, hits, interval, digests, sketches);  ``I S \\0 id`` → url;
* ``B xxh3_128(S \\0 p \\0 s)`` → bucket members ``(id, α start, α end)`` packed, or ``b""`` (overflow);
* ``P S \\0 α \\0 β`` (α < β) → (T_low, T_high) supports;   ``N S`` → next URL id.

Envelope keys are 128-bit xxh3 digests of the envelope's text: with RocksDB's hash-skiplist
memtable they cost 2.0 µs per read+write against 3.4 µs for the text itself (measured on 2.8 M
envelopes; the text is smaller on disk but slower).  Two envelopes with one digest would share a
bucket: probability about n²/2¹²⁹, below 10⁻¹⁹ for a billion envelopes.
"""

from __future__ import annotations

import struct
from bisect import bisect_left, insort
from functools import lru_cache

from xxhash import xxh3_128_digest
from itertools import accumulate

from .detect import _TOKEN_RE, Pair, SupportTable, _common_prefix_len, _positions, likely_pairs
from .kv import KV
from .params import DustParams
from .tokens import wrap
from .urllist import URLInfo, URLList, likely_similar
from .urlrecord import dec_info, enc_info

_MEMBER = struct.Struct("<IHH")
OVERFLOW_CACHE = 1_000_000
_SUP = struct.Struct("<ii")


def _evidence(info: URLInfo) -> tuple:
    return (info.lo, info.hi, frozenset(info.digests or ()), frozenset(info.sketches or ()))


@lru_cache(maxsize=512)
def _spans(n: int, S: int, max_envelopes: int) -> tuple[tuple[int, int], ...]:
    ii, jj = _positions(n, S, max_envelopes)
    return tuple(zip(ii.tolist(), jj.tolist()))


class SiteSupports:
    """The incremental Figure 1 of one site, over a KV store.  Not thread-safe: one writer."""

    def __init__(self, kv: KV, site: str, params: DustParams | None = None, max_urls: int = 0) -> None:
        self.kv = kv
        self.site = site
        self.params = params or DustParams()
        #: most URLs tracked for the site (0 = no cap): a record of a new URL beyond it changes
        #: nothing and is counted in ``over_cap`` (URLs already tracked go on being observed)
        self.max_urls = max_urls
        self.over_cap = 0  #: records of new URLs not tracked because of ``max_urls`` (a counter)
        s = site.encode()
        self._u, self._i, self._b, self._p, self._n, self._r = (
            c + s + b"\0" for c in (b"U", b"I", b"B", b"P", b"N", b"R"))
        # URLs added since the last commit, forwards and reversed, sorted (see _reach)
        self._site_bytes = s + b"\0"
        self._new_fwd: list[str] = []
        self._new_rev: list[str] = []
        self._pending: dict[bytes, bytes | None] = {}
        self._urls: dict[int, tuple[str, URLInfo]] = {}  # id -> (url, info), this batch's view
        self._deltas: dict[tuple[str, str], list[int]] = {}
        self.changed = False
        self.touched: dict[str, URLInfo] = {}  #: URLs whose record changed since the last commit
        self.added = 0  #: URLs observed for the first time by this object (a counter for metrics)
        #: bucket keys known to be overflow marks (a mark is permanent): not read again
        self._overflow: set[bytes] = set()

    # ------------------------------------------------------------------ storage helpers
    def _get(self, key: bytes) -> bytes | None:
        if key in self._pending:
            return self._pending[key]
        return self.kv.get(key)

    def _put(self, key: bytes, value: bytes | None) -> None:
        self._pending[key] = value

    def _member(self, uid: int) -> tuple[str, URLInfo]:
        got = self._urls.get(uid)
        if got is None:
            url = self._get(self._i + uid.to_bytes(8, "big"))
            assert url is not None, f"dangling URL id {uid}"
            u = url.decode()
            raw = self._get(self._u + url)
            assert raw is not None
            got = self._urls[uid] = (u, dec_info(raw)[1])
        return got

    def _count(self, a: str, b: str, low: int, high: int) -> None:
        key = (a, b) if a < b else (b, a)
        d = self._deltas.get(key)
        if d is None:
            self._deltas[key] = [low, high]
        else:
            d[0] += low
            d[1] += high

    def _similar(self, a: URLInfo, b: URLInfo) -> bool:
        return likely_similar(a, b, self.params)

    # ------------------------------------------------------------------ the three moves
    def observe(self, url: str, status: int | None, size: int | None, digest: str | None = None,
                sketch: tuple[int, ...] | None = None, when: int | None = None) -> None:
        """One record (status >= 400 must be dropped by the caller, as in the batch reader)."""
        key = self._u + url.encode()
        raw = self._get(key)
        if raw is None:
            if self.max_urls and self.url_count() >= self.max_urls:
                self.over_cap += 1
                return
            info = URLInfo()
            info.observe(status, size, digest, sketch, when)
            self._add_new(key, url, info)
            self.touched[url] = info
            self.added += 1
            return
        uid, info = dec_info(raw)
        if uid in self._urls:
            info = self._urls[uid][1]
        before = _evidence(info)
        old = URLInfo(info.hits, info.lo, info.hi, set(info.digests) if info.digests else None,
                      set(info.sketches) if info.sketches else None)
        info.observe(status, size, digest, sketch, when)
        self._urls[uid] = (url, info)
        self._put(key, enc_info(uid, info))
        self.touched[url] = info
        if _evidence(info) != before:
            self._rejudge(uid, url, old, info)
            self.changed = True

    def url_count(self) -> int:
        """URLs tracked for the site (ids are never reused nor removed: the next id)."""
        raw = self._get(self._n)
        return int.from_bytes(raw, "big") if raw else 0

    def load(self, url: str, info: URLInfo) -> None:
        """Put a URL with a known record (rebuilding from the changelog): the supports come out as
        if its records had been observed one by one.  Not subject to ``max_urls``: the changelog
        holds only URLs that were admitted."""
        key = self._u + url.encode()
        raw = self._get(key)
        if raw is not None:
            uid, old = dec_info(raw)
            if uid in self._urls:
                old = self._urls[uid][1]
            self._urls[uid] = (url, info)
            self._put(key, enc_info(uid, info))
            if _evidence(info) != _evidence(old):
                self._rejudge(uid, url, old, info)
            self.changed = True
            return
        self._add_new(key, url, info)

    def _add_new(self, key: bytes, url: str, info: URLInfo) -> None:
        """A URL the site did not have: a new id, its records, and its envelopes' buckets."""
        nraw = self._get(self._n)
        uid = int.from_bytes(nraw, "big") if nraw else 0
        self._put(self._n, (uid + 1).to_bytes(8, "big"))
        self._put(key, enc_info(uid, info))
        self._put(self._i + uid.to_bytes(8, "big"), url.encode())
        self._urls[uid] = (url, info)
        self._insert(uid, url, info)
        self._remember(url)
        self.changed = True

    def _envelopes(self, url: str) -> tuple[list[bytes], list[tuple[int, int]]]:
        """Bucket keys of all envelopes of ``url`` and the (char) span of α in ``^url$`` for each."""
        w = wrap(url)
        offs = list(accumulate(map(len, _TOKEN_RE.findall(w)), initial=0))
        spans = _spans(len(offs) - 1, self.params.S, self.params.max_envelopes)
        wb = w.encode("utf-8", "surrogatepass")
        boffs = offs if len(wb) == len(w) else [len(w[:o].encode("utf-8", "surrogatepass")) for o in offs]
        site = self._site_bytes
        h = xxh3_128_digest
        keys = [b"B" + h(site + wb[:boffs[i]] + b"\0" + wb[boffs[j]:]) for i, j in spans]
        return keys, [(offs[i], offs[j]) for i, j in spans]

    def _remember(self, url: str) -> None:
        self._put(self._r + url[::-1].encode(), b"")
        insort(self._new_fwd, url)
        insort(self._new_rev, url[::-1])

    def _reach(self, url: str) -> tuple[int, int]:
        """Longest prefix and longest suffix (in characters of ``url``) that ``url`` shares with any
        other URL of the site.  An envelope (p, s) of ``^url$`` can have a bucket only if p is a
        prefix and s a suffix of some other URL, so envelopes beyond these lengths are new for
        sure and need no read.  The longest shared prefix is with a neighbour in sorted order."""
        best = [0, 0]
        for n, (text, prefix, batch) in enumerate(((url, self._u, self._new_fwd), (url[::-1], self._r, self._new_rev))):
            cands = []
            for k in self.kv.neighbors(prefix, prefix + text.encode()):
                if k is not None:
                    cands.append(k[len(prefix):].decode("utf-8", "surrogatepass"))
            at = bisect_left(batch, text)
            cands.extend(batch[max(0, at - 1):at + 1])
            best[n] = max((_common_prefix_len(text, c) for c in cands if c != text), default=-1)
        return best[0], best[1]

    def _insert(self, uid: int, url: str, info: URLInfo) -> None:
        p = self.params
        w = wrap(url)
        keys, spans = self._envelopes(url)
        # envelopes whose p or s no other URL has: certainly new buckets, written without a read
        lcp, lcs = self._reach(url)
        pmax, smax = lcp + 1, lcs + 1  # in ^url$: the sentinel is shared too
        lw = len(w)
        pending = self._pending
        pack = _MEMBER.pack
        over = self._overflow
        live = []
        for n, (a, b) in enumerate(spans):
            if a > pmax or lw - b > smax:
                pending[keys[n]] = pack(uid, a, b)
            elif keys[n] not in over:
                live.append(n)
        keys, spans = [keys[n] for n in live], [spans[n] for n in live]
        stored = self.kv.multi_get(keys)
        for key, (a, b), got in zip(keys, spans, stored):
            if key in pending:
                got = pending[key]
            if got is None:
                pending[key] = pack(uid, a, b)
                continue
            if got == b"":  # overflow mark
                if len(over) < OVERFLOW_CACHE:
                    over.add(key)
                continue
            members = [_MEMBER.unpack_from(got, o) for o in range(0, len(got), _MEMBER.size)]
            k = len(members)
            alpha = w[a:b]
            if k + 1 > p.t_high:
                self._drop_pairs(members, low=k <= p.t_low, high=True)
                pending[key] = b""
                if len(over) < OVERFLOW_CACHE:
                    over.add(key)
                continue
            if k == p.t_low:
                self._drop_pairs(members, low=True, high=False)
            in_low = k + 1 <= p.t_low
            for mid, ma, mb in members:
                murl, minfo = self._member(mid)
                if self._similar(info, minfo):
                    self._count(alpha, wrap(murl)[ma:mb], 1 if in_low else 0, 1)
            pending[key] = got + pack(uid, a, b)

    def _drop_pairs(self, members: list[tuple[int, int, int]], low: bool, high: bool) -> None:
        for x in range(len(members)):
            ux, ax, bx = members[x]
            urlx, infox = self._member(ux)
            for y in range(x + 1, len(members)):
                uy, ay, by = members[y]
                urly, infoy = self._member(uy)
                if self._similar(infox, infoy):
                    self._count(wrap(urlx)[ax:bx], wrap(urly)[ay:by], -int(low), -int(high))

    def _rejudge(self, uid: int, url: str, old: URLInfo, new: URLInfo) -> None:
        p = self.params
        w = wrap(url)
        keys, spans = self._envelopes(url)
        over = self._overflow
        if over:
            live = [n for n, k in enumerate(keys) if k not in over]
            keys, spans = [keys[n] for n in live], [spans[n] for n in live]
        stored = self.kv.multi_get(keys)
        for key, (a, b), got in zip(keys, spans, stored):
            if key in self._pending:
                got = self._pending[key]
            if not got:
                continue
            members = [_MEMBER.unpack_from(got, o) for o in range(0, len(got), _MEMBER.size)]
            k = len(members)
            if k < 2:
                continue
            alpha = w[a:b]
            for mid, ma, mb in members:
                if mid == uid:
                    continue
                murl, minfo = self._member(mid)
                before, after = self._similar(old, minfo), self._similar(new, minfo)
                if before != after:
                    d = 1 if after else -1
                    self._count(alpha, wrap(murl)[ma:mb], d if k <= p.t_low else 0, d)

    # ------------------------------------------------------------------ commit and read
    def pending_count(self) -> int:
        """Writes waiting for the next commit (envelope buckets, mostly)."""
        return len(self._pending)

    def flush_buckets(self, meta: dict[bytes, bytes]) -> int:
        """Write the pending bucket entries now, with ``meta``, before the commit that completes the
        batch (which writes the URL records and the supports): keeps a large batch's memory, and the
        length of each write, bounded.  Until that commit the buckets on disk may name URL ids that
        are not committed: the caller marks the store (``meta``) so that a crash in between is seen
        and the derived index rebuilt (state/partitions.py).  Returns entries written."""
        buckets = {k: v for k, v in self._pending.items() if k[:1] == b"B"}
        for k in buckets:
            del self._pending[k]
        self.kv.write(buckets, meta)
        return len(buckets)

    def pending_writes(self) -> dict[bytes, bytes | None]:
        """Fold the support deltas into the pending writes and hand them over (then reset)."""
        keys = [self._p + a.encode() + b"\0" + b.encode() for a, b in self._deltas]
        current = self.kv.multi_get(keys) if keys else []
        for key, (dl, dh), cur in zip(keys, self._deltas.values(), current):
            if key in self._pending:
                cur = self._pending[key]
            lo, hi = _SUP.unpack(cur) if cur else (0, 0)
            lo, hi = lo + dl, hi + dh
            self._pending[key] = None if lo == 0 and hi == 0 else _SUP.pack(lo, hi)
        out = self._pending
        self._pending, self._deltas, self._urls, self.touched = {}, {}, {}, {}
        self._new_fwd, self._new_rev = [], []
        return out

    def commit(self, meta: dict[bytes, bytes] | None = None) -> None:
        self.kv.write(self.pending_writes(), meta or {})

    def supports(self) -> dict[tuple[str, str], tuple[int, int]]:
        """All non-zero (T_low, T_high) supports, keyed (a, b) with a < b (committed state)."""
        out = {}
        n = len(self._p)
        for k, v in self.kv.scan(self._p):
            a, b = k[n:].decode().split("\0", 1)
            out[(a, b)] = _SUP.unpack(v)
        return out

    def table(self) -> SupportTable:
        import numpy as np

        sup = self.supports()
        texts: list[str] = []
        ids: dict[str, int] = {}
        for a, b in sup:
            for x in (a, b):
                if x not in ids:
                    ids[x] = len(texts)
                    texts.append(x)
        na = max(1, len(texts))
        rows = sorted((min(ids[a], ids[b]) * na + max(ids[a], ids[b]), lo, hi) for (a, b), (lo, hi) in sup.items())
        return SupportTable(texts, np.asarray([r[0] for r in rows], dtype=np.int64),
                            np.asarray([r[2] for r in rows], dtype=np.int64),
                            np.asarray([r[1] for r in rows], dtype=np.int64))

    def likely_pairs(self) -> list[Pair]:
        return likely_pairs(self.table(), self.params)

    def urllist(self) -> URLList:
        ul = URLList()
        n = len(self._u)
        rows = []
        for k, v in self.kv.scan(self._u):
            uid, info = dec_info(v)
            rows.append((uid, k[n:].decode(), info))
        for uid, url, info in sorted(rows):
            ul.infos[url] = info
        return ul

