"""A site's URL list kept incrementally for a stream of log records; its Figure 1 supports counted
by the batch engine at each window.

What a stream changes is the URL list of WWW 2007 §3: new URLs, and new observations (sizes,
digests, sketches) of known ones.  That list is the state kept here, durably, one record per URL
(:mod:`dustbuster.core.urls.urlrecord`) in any :class:`dustbuster.core.mining.kv.KV` (an in-memory dict for
tests, core/mining/kv.py; RocksDB in state/).  The envelope buckets and pair supports of Figure 1 are a
function of that list: the window (state/partitions.py) computes them with
:func:`dustbuster.core.mining.detect.count_supports`, the very code of ``dustbuster mine``, so a window's
result equals the batch engine's on the same records by construction (tests/test_incremental.py).

Why not keep the buckets and supports up to date per record (this project's earlier design,
and the natural reading of "per-envelope buckets in RocksDB tables"): with S = 35 a URL has
~240 envelopes, each a bucket read and write; even with RocksDB's bloom filters and caches that
was ~1,100 new URLs/s per worker, and RocksDB held ~5 KB per URL.  The batch engine forms all
buckets of 20,000 URLs with one numpy sort in about half a second, so recounting the supports of a
site at each window (tens of seconds apart) costs less than keeping them, and a record costs a
dictionary update.  The cost moved to the window: O(URLs of the site) per window, bounded by the
per-site cap (``max_urls``, docs/cost.md), and a site's window runs only when it changed.  This
is ours, not the papers': they mine a URL list offline.

A record of a new URL beyond ``max_urls`` is counted in ``over_cap`` and otherwise ignored; a
record never changes an earlier URL's id.  Writes are buffered and applied atomically by
``commit()``, together with caller metadata (input offsets), so a crash never leaves half a batch.
Keys (bytes), per site ``S``: ``U S \\0 url`` → (id, record);  ``N S`` → next URL id;
``M S`` / ``E S`` → how many listed / error URLs the site holds.

**URLs beside the log** (beyond the papers).  A URL of a URL list (a
crawler's frontier, a link on a page the validator fetched: :meth:`SiteSupports.list_only`) and a URL
the log holds only with status >= 400 (:meth:`SiteSupports.note_error`) are records too, with no
observation and a negative id (:data:`LISTED_ID`, :data:`ERROR_ID`): the same record bytes in the
store and the changelog, so a rebuild brings them back.  They are not in the URL list's ``infos`` (no
Figure 1 envelope, no LikelySimilar comparison) but in its ``listed`` and ``errors``, exactly as
``dustbuster mine --urls`` reads a URL list (core/urls/urllist.py).  A log line of such a URL (status <
400) makes it a log URL with the next id; a log URL never becomes listed, an error URL never listed
again.  Each kind has its own cap (listed: ``max_urls``, errors: :data:`MAX_ERROR_URLS`), so neither
crowds out the log's URLs; what a cap refuses is counted in ``side_over_cap``.
"""

from __future__ import annotations

from dustbuster.core.mining.kv import KV
from dustbuster.core.params import DustParams
from dustbuster.core.urls.urllist import MAX_ERROR_URLS, URLInfo, URLList
from dustbuster.core.urls.urlrecord import dec_info, enc_info


#: the id of a URL known only from a URL list (URLList.listed)
LISTED_ID = -1
#: the id of a URL the log holds only with status >= 400 (URLList.errors)
ERROR_ID = -2
#: the count key's letter of each kind beside the log
SIDE_KEYS = {LISTED_ID: b"M", ERROR_ID: b"E"}


def _evidence(info: URLInfo) -> tuple:
    """What LikelySimilar reads of a record; it only grows (an interval widens, sets gain members),
    so comparing sizes tells whether it changed."""
    return info.lo, info.hi, len(info.digests or ()), len(info.sketches or ())


class SiteSupports:
    """The URL list of one site over a KV store, and its Figure 1 supports.  Not thread-safe: one
    writer."""

    def __init__(self, kv: KV, site: str, params: DustParams | None = None, max_urls: int = 0,
                 records: dict | None = None, max_records: int = 100_000) -> None:
        self.kv = kv
        self.site = site
        self.params = params or DustParams()
        #: most URLs tracked for the site (0 = no cap): a record of a new URL beyond it changes
        #: nothing and is counted in ``over_cap`` (URLs already tracked go on being observed)
        self.max_urls = max_urls
        self.over_cap = 0  #: records of new URLs not tracked because of ``max_urls`` (a counter)
        s = site.encode()
        self._u, self._n = b"U" + s + b"\0", b"N" + s + b"\0"
        self.record_prefix = self._u  #: the keys of the site's URL records start with it
        self._side_keys = {kind: letter + s + b"\0" for kind, letter in SIDE_KEYS.items()}
        self._side: dict[int, int] = {}  #: listed / error URLs held, by kind (read when first needed)
        #: URLs of each kind beside the log refused by its cap (a counter)
        self.side_over_cap = {kind: 0 for kind in SIDE_KEYS}
        #: decoded records: this message's (read or made) and, up to ``max_records``, earlier ones
        #: (a line of a known URL then costs no read and no decoding); may be shared by the sites of
        #: one store (keys carry the site); holds uncommitted changes until the commit
        self._records: dict[bytes, tuple[int, URLInfo]] = {} if records is None else records
        self.max_records = max_records
        self._next: int | None = None  #: next URL id (None: not read yet)
        self.changed = False  #: a URL was added or its evidence changed since the last commit
        #: commits that changed what mining reads (URLs, their order, their evidence); hits and
        #: first/last seen times do not count: no phase reads them
        self.generation = 0
        self._handed_change = False  #: the writes handed over hold such a change (not committed yet)
        self.touched: dict[str, URLInfo] = {}  #: URLs whose record changed since the last commit
        self.added = 0  #: URLs observed for the first time by this object (a counter for metrics)
        #: the committed URL list kept for the windows (None: read from the store at the next one),
        #: with the records committed since it was brought up to date (key -> encoded record)
        self._list: URLList | None = None
        self._backlog: dict[bytes, bytes] = {}
        self._handed: dict[bytes, bytes] = {}  #: the URL records handed over, not committed yet
        #: URLs of the kept list whose evidence :meth:`current_urllist` changed (their record
        #: replaced by one LikelySimilar reads differently) since the caller last emptied it: what a
        #: window's kept parse of the list must forget (core/urls/urlindex.py URLIndex.refresh)
        self.replaced: set[str] = set()

    # ------------------------------------------------------------------ records
    def _record(self, key: bytes) -> tuple[int, URLInfo] | None:
        got = self._records.get(key)
        if got is None:
            raw = self.kv.get(key)
            if raw is None:
                return None
            got = self._records[key] = dec_info(raw)
        return got

    def url_count(self) -> int:
        """URLs tracked for the site (ids are never reused nor removed: the next id)."""
        if self._next is None:
            raw = self.kv.get(self._n)
            self._next = int.from_bytes(raw, "big") if raw else 0
        return self._next

    def observe(self, url: str, status: int | None, size: int | None, digest: str | None = None,
                sketch: tuple[int, ...] | None = None, when: int | None = None) -> None:
        """One record (status >= 400 must be dropped by the caller, as in the batch reader)."""
        key = self._u + url.encode("utf-8", "surrogatepass")
        got = self._record(key)
        if got is None or got[0] < 0:  # new to the log (perhaps listed, or logged with an error)
            if self.max_urls and self.url_count() >= self.max_urls:
                self.over_cap += 1
                return
            if got is not None:
                self._side[got[0]] = self.side_count(got[0]) - 1
            info = URLInfo()
            info.observe(status, size, digest, sketch, when)
            self._add_new(key, info)
        else:
            info = got[1]
            before = _evidence(info)
            info.observe(status, size, digest, sketch, when)
            if _evidence(info) != before:
                self.changed = True
        self.touched[url] = info

    def side_count(self, kind: int) -> int:
        """Listed (:data:`LISTED_ID`) or error (:data:`ERROR_ID`) URLs the site holds."""
        n = self._side.get(kind)
        if n is None:
            raw = self.kv.get(self._side_keys[kind])
            n = self._side[kind] = int.from_bytes(raw, "big") if raw else 0
        return n

    def list_only(self, url: str, when: int | None = None) -> None:
        """A URL of a URL list, unless the site holds it already (module docstring)."""
        self._beside(url, LISTED_ID, self.max_urls, when)

    def note_error(self, url: str, when: int | None = None) -> None:
        """A URL logged with status >= 400, unless the log holds it (module docstring)."""
        self._beside(url, ERROR_ID, MAX_ERROR_URLS, when)

    def _beside(self, url: str, kind: int, cap: int, when: int | None) -> None:
        key = self._u + url.encode("utf-8", "surrogatepass")
        got = self._record(key)
        if got is not None and not (kind == ERROR_ID and got[0] == LISTED_ID):
            return  # a log URL stays one; an error URL is not listed again
        if cap and self.side_count(kind) >= cap:
            self.side_over_cap[kind] += 1
            return
        if got is not None:
            self._side[got[0]] = self.side_count(got[0]) - 1
        info = URLInfo(first_seen=when, last_seen=when)
        self._records[key] = (kind, info)
        self._side[kind] = self.side_count(kind) + 1
        self.touched[url] = info
        self.changed = True

    def load(self, url: str, info: URLInfo, uid: int = 0) -> None:
        """Put a URL with a known record (rebuilding from the changelog; ``uid``: its id there,
        negative for a URL beside the log).  Not subject to the caps: the changelog holds only URLs
        that were admitted."""
        key = self._u + url.encode("utf-8", "surrogatepass")
        got = self._record(key)
        if got is not None and got[0] < 0 <= uid:  # (a changelog image holds one record per URL)
            self._side[got[0]] = self.side_count(got[0]) - 1
            got = None
        if uid < 0 and got is None:
            self._records[key] = (uid, info)
            self._side[uid] = self.side_count(uid) + 1
        elif got is None:
            self._add_new(key, info)
        else:
            self._records[key] = (got[0], info)
        self.touched[url] = info
        self.changed = True

    def _add_new(self, key: bytes, info: URLInfo) -> None:
        uid = self.url_count()
        self._next = uid + 1
        self._records[key] = (uid, info)
        self.added += 1
        self.changed = True

    # ------------------------------------------------------------------ commit and read
    def pending_writes(self) -> dict[bytes, bytes | None]:
        """The changed records (and the next id) as writes; hands them over (then resets)."""
        out: dict[bytes, bytes | None] = {}
        if self.touched:
            prefix, records = self._u, self._records
            for url, info in self.touched.items():
                key = prefix + url.encode("utf-8", "surrogatepass")
                out[key] = self._handed[key] = enc_info(records[key][0], info)
        if self._next is not None:
            out[self._n] = self._next.to_bytes(8, "big")
        for kind, n in self._side.items():
            out[self._side_keys[kind]] = n.to_bytes(8, "big")
        self._handed_change = self._handed_change or self.changed
        self.changed = False
        self.touched = {}
        return out

    def committed(self) -> None:
        """The writes handed over are in the store: a change among them counts in ``generation``
        now (a window that runs in between reads the store without them)."""
        if self._handed_change:
            self.generation += 1
            self._handed_change = False
        if self._list is not None and self._handed:
            self._backlog.update(self._handed)
            if len(self._backlog) > max(self.max_records, len(self._list) // 2):
                self._list, self._backlog = None, {}  # cheaper to read the store again (bounded memory)
        self._handed = {}
        if len(self._records) > self.max_records:  # only once written: it may hold what is handed over
            self._records.clear()

    def discard(self) -> None:
        """Forget the uncommitted changes (a message staged and never committed): the decoded
        records (all of a shared cache) are read again from the store."""
        self._records.clear()
        self.touched, self._next, self.changed, self._handed_change = {}, None, False, False
        self._side = {}
        self._handed = {}

    def commit(self, meta: dict[bytes, bytes] | None = None) -> None:
        self.kv.write(self.pending_writes(), meta or {})
        self.committed()

    def urllist(self) -> URLList:
        """The committed URL list, in the order the URLs were first seen (their ids)."""
        ul = URLList()
        n = len(self._u)
        rows = []
        for k, v in self.kv.scan(self._u):
            uid, info = dec_info(v)
            rows.append((uid, k[n:].decode("utf-8", "surrogatepass"), info))
        rows.sort(key=lambda r: r[0])
        for uid, url, info in rows:
            _place(ul, uid, url, info)
        return ul

    def current_urllist(self) -> URLList:
        """The committed URL list, as :meth:`urllist` reads it, kept between calls: brought up to
        date with the records committed since the last call (decoded from the bytes written, so
        the same objects a read of the store gives), new URLs appended in id order.  A window then
        costs the records that changed, not a read of every record (ours, beyond the papers).  The
        list is the caller's to read, not to change."""
        if self._list is None:
            self._list, self._backlog = self.urllist(), {}
            self.replaced = set()
            return self._list
        if self._backlog:
            infos, n = self._list.infos, len(self._u)
            fresh = []
            for k, v in self._backlog.items():
                uid, info = dec_info(v)
                url = k[n:].decode("utf-8", "surrogatepass")
                old = infos.get(url)
                if old is not None:
                    if _similarity_evidence(old) != _similarity_evidence(info):
                        self.replaced.add(url)
                    infos[url] = info
                else:
                    fresh.append((uid, url, info))
            for uid, url, info in sorted(fresh, key=lambda r: r[0]):
                _place(self._list, uid, url, info)
            self._backlog = {}
        return self._list

    @property
    def kept_urls(self) -> int:
        """URLs of the list :meth:`current_urllist` keeps in memory (0 when none is kept)."""
        return len(self._list) if self._list is not None else 0

    def forget_list(self) -> None:
        """Drop the kept list (the partition's memory budget, state/partitions.py): the next
        :meth:`current_urllist` reads the store again."""
        self._list, self._backlog = None, {}
        self.replaced = set()


def _similarity_evidence(info: URLInfo) -> tuple:
    """All that LikelySimilar (WWW 2007 §4, core/urls/urllist.py) reads of a record."""
    return info.lo, info.hi, info.digests, info.sketches


def _place(ul: URLList, uid: int, url: str, info: URLInfo) -> None:
    """A stored record into a URL list: a log URL (appended: callers go in id order), or one beside
    the log (listed, or an error URL; no longer listed once it is either of the others)."""
    if uid == LISTED_ID:
        ul.listed[url] = None
        return
    ul.listed.pop(url, None)
    if uid == ERROR_ID:
        ul.errors[url] = None
    else:
        ul.errors.pop(url, None)
        ul.infos[url] = info
