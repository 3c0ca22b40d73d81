"""Worker state: one RocksDB per input partition, holding the URL lists of the sites whose lines
land on that partition (core/mining/incremental.py), plus per-partition metadata in the same atomic writes:

* ``meta:applied:<topic>`` → the last input offset applied (replays at or below it are skipped, so
  at-least-once delivery and a restarted worker change nothing: exactly-once state; the store
  contract of state/store.py, which the seen sets keep too);
* ``meta:dirty:<site>`` → the site changed since its last window;
* ``meta:sent:<site>`` → the key of the last candidate set sent (a window whose set has the same
  key sends nothing: agents/windows.py);
* ``meta:count:<site>`` → lines, records, rejects, drops seen for the site, and ``over_cap``:
  records of new URLs not tracked because the site holds ``max_urls_per_site`` URLs;
* ``meta:format`` → :data:`STATE_FORMAT`.  A store written by an older version (envelope buckets
  and pair supports on disk) is wiped when opened; the worker then rebuilds it from the URL
  changelog, whose records are unchanged.

A group of messages' writes (one record per URL it touched) go in one atomic write with its last
offset (:meth:`OffsetStore.commit`).  The work on a partition's state is synchronous and can take seconds (a window on a large site, a
rebuild); :meth:`Stores.run` runs it on one worker thread, off the event loop, one call at a time,
so the API, heartbeats and timers go on meanwhile.  docs/state.md describes the design;
docs/cost.md the cost bounds.
"""

from __future__ import annotations

import asyncio
import dataclasses
import heapq
import itertools
import logging
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Iterable, TypeVar, cast

import orjson

from dustbuster.core.mining.collector import quiet_collector
from dustbuster.core.mining.incremental import SiteSupports
from dustbuster.core.mining.mine import MineResult, mine, unsafe_flags
from dustbuster.core.mining.parallel import mine_two_or_alone
from dustbuster.core.mining.processes import two_processes
from dustbuster.core.params import DustParams
from dustbuster.core.urls.urlindex import URLIndex
from dustbuster.core.urls.urllist import URLInfo, URLList
from dustbuster.core.urls.urlrecord import info_from_json

from .registry import PartitionStores, partition_dir
from .rocks import RocksKV, wipe
from .store import OffsetBatch, OffsetStore, Progress

log = logging.getLogger(__name__)

COUNTERS = ("lines", "records", "dropped_status", "skipped", "rejected", "over_cap")
TEST_URLS = 3000  #: most recently seen URLs sent with each candidate set, for validation
#: of them, at most this many are listed URLs (a crawler's frontier, fetched pages' links), the
#: most recently listed; the log's URLs take the rest
LISTED_TEST_URLS = TEST_URLS // 3
#: URLs logged only with status >= 400 sent with each candidate set (core/validation/narrow.py)
ERROR_URLS = 1000
REBUILD_LOG_EVERY = 10_000  #: a rebuild logs its progress every this many URLs
#: records a rebuild writes at once (one RocksDB write holds the GIL throughout)
REBUILD_COMMIT_EVERY = 20_000
#: decoded URL records kept in memory per partition (a known URL's line then needs no read)
CACHED_RECORDS = 100_000
#: URLs of the sites' URL lists kept in memory between windows (SiteSupports.current_urllist), all
#: sites of the partition together: beyond it the lists of the sites windowed longest ago are dropped
#: (read from the store again at their next window), so memory does not grow with the sites; with
#: each list its parse and Figure 1's kept names (~1.4 KB a forum URL for the names: docs/state.md)
KEPT_URLS = 250_000
#: the layout of a partition's store: 2 = URL records only; a store without it is older
STATE_FORMAT = b"2"
FORMAT_KEY = b"meta:format"
T = TypeVar("T")


@dataclass
class Message:
    """One input message, parsed: its offset, site (None for a rejected message, which only
    advances the offset), records and line counts."""

    offset: int
    site: str | None
    records: list[tuple]
    counts: dict[str, int]
    listed: list[str] = field(default_factory=list)  #: URLs of a URL list (SiteSupports.list_only)
    errors: list[str] = field(default_factory=list)  #: URLs logged with status >= 400 (SiteSupports.note_error)


@dataclass
class Staged(OffsetBatch):
    """The effect of a group of messages of one partition, computed and not committed yet:
    ``puts`` (the URL records, next ids) and ``meta`` (counters, dirty marks) are committed with
    ``offset`` in one write."""

    sites: list[SiteSupports] = field(default_factory=list)
    changelog: list[tuple[bytes, bytes]] = field(default_factory=list)  #: (site \0 url, record), then (site \0\0count, counters)
    counters: dict[str, dict] = field(default_factory=dict)  #: site -> its counters after the group
    new_urls: int = 0  #: URLs the group added
    over_cap: int = 0  #: records of new URLs the group could not add (their site is at its cap)


class PartitionState(OffsetStore[dict[str, dict[str, dict]], dict[str, dict]]):
    """One raw partition's state: the URL records of its sites and their metadata, under the
    store contract of state/store.py (applied offset, commit with offset, rebuild)."""

    def __init__(self, root: Path, partition: int, params: DustParams, max_urls_per_site: int = 0,
                 window_processes: int = 1) -> None:
        self.partition = partition
        self.params = params
        self.max_urls_per_site = max_urls_per_site
        #: processes a window may mine in: with 2, a list of MIN_URLS URLs or more has Figure 1
        #: counted in a forked process beside phase 3 (core/mining/parallel.py; the same result)
        self.window_processes = window_processes
        self._one_process: set[str] = set()  #: sites whose second process was lost once (:meth:`_mine`)
        self.kv = _open_current(Path(root) / partition_dir(partition), partition)
        self._sites: dict[str, SiteSupports] = {}
        self._kept: dict[str, None] = {}  #: sites whose URL list is kept, windowed longest ago first
        self._capped: set[str] = set()  # sites whose cap was logged (once per site and process)
        #: the last window's result per site, with the generation it was mined from (the site
        #: objects are replaced only by a rebuild, which empties this too)
        self._mined: dict[str, tuple[int, MineResult]] = {}
        #: the parse of each kept URL list (core/urls/urlindex.py), refreshed at each window: a
        #: window parses only the URLs new since the last (dropped with the list)
        self._index: dict[str, URLIndex] = {}
        self._records: dict = {}  #: decoded URL records, shared by the sites (SiteSupports)
        self._staged: Staged | None = None  #: the group staged and not committed yet

    def site(self, name: str) -> SiteSupports:
        s = self._sites.get(name)
        if s is None:
            s = self._sites[name] = SiteSupports(self.kv, name, self.params, self.max_urls_per_site,
                                                 records=self._records, max_records=CACHED_RECORDS)
        return s

    def counters(self, site: str) -> dict[str, int | float]:  # counts, and the ingest's first and last times
        raw = self.kv.get(b"meta:count:" + site.encode())
        return orjson.loads(raw) if raw else {k: 0 for k in COUNTERS}

    def stage(self, topic: str, offset: int, site: str, records: Iterable[tuple], counts: dict[str, int]) -> "Staged | None":
        """:meth:`stage_group` of one message."""
        return self.stage_group(topic, [Message(offset, site, list(records), counts)])

    def stage_group(self, topic: str, messages: list[Message]) -> "Staged | None":
        """Compute the effect of consecutive input messages without committing it: the caller
        first makes the changelog durable, then calls :meth:`commit` (one atomic write with the
        last offset).  Messages at or below the applied offset are replays and left out; None when
        all are.  Memory: one record per URL of the group."""
        applied = self.applied(topic)
        todo = [m for m in messages if m.offset > applied]
        if not todo:
            return None
        if self._staged is not None:
            # a group staged and never committed (its changelog write failed, or it raised):
            # its changes are dropped, and this one starts from the committed state
            log.warning("partition %s: dropping the uncommitted changes of messages up to %s",
                        self.partition, self._staged.offset)
            for sup in self._staged.sites:
                sup.discard()
            self._staged = None
        st = Staged(topic, todo[-1].offset)
        self._staged = st  # from here on: should this raise midway, the next group discards it
        t_start = time.time()
        for m in todo:
            if m.site is not None:
                self._apply(st, m, t_start)
        self._finish(st)
        return st

    def _apply(self, st: Staged, m: Message, t_start: float) -> None:
        """One message's records and counts into the staged group."""
        assert m.site is not None  # stage_group applies only the messages of a site
        sup = self.site(m.site)
        if sup not in st.sites:
            st.sites.append(sup)
        added, over, side_over = sup.added, sup.over_cap, sum(sup.side_over_cap.values())
        observe, now = sup.observe, int(t_start)
        for rec in m.records:
            observe(*rec, when=now)  # type: ignore[misc]  # a record, (url, status, size[, digest, sketch]), never reaches when
        for url in m.errors:
            sup.note_error(url, when=now)
        for url in m.listed:
            sup.list_only(url, when=now)
        added, over, side_over = sup.added - added, sup.over_cap - over, sum(sup.side_over_cap.values()) - side_over
        st.new_urls += added
        st.over_cap += over
        if over and m.site not in self._capped:
            self._capped.add(m.site)
            log.warning("site %s holds %s URLs (DUST_MAX_URLS_PER_SITE): its new URLs are not tracked, only "
                        "counted (over_cap in its counters, dust_urls_over_cap_total); logged once per site",
                        m.site, sup.url_count())
        total = st.counters.get(m.site) or self.counters(m.site)
        for k, v in m.counts.items():
            total[k] = total.get(k, 0) + v
        if over:
            total["over_cap"] = total.get("over_cap", 0) + over
        if side_over:  # listed or error URLs refused by their caps (core/mining/incremental.py)
            total["side_over_cap"] = total.get("side_over_cap", 0) + side_over
        # wall-clock span of this site's ingest (for throughput figures)
        total["ingest_first"] = total.get("ingest_first") or round(t_start, 3)
        total["ingest_last"] = round(time.time(), 3)
        st.counters[m.site] = total
        if sup.changed or m.counts.get("lines"):
            st.meta[b"meta:dirty:" + m.site.encode()] = f"{st.topic}:{m.offset}".encode()  # a change token

    def _finish(self, st: Staged) -> None:
        """The group's writes, changelog records and metadata."""
        for sup in st.sites:
            puts = sup.pending_writes()
            prefix = sup.record_prefix
            st.changelog += [(k[1:], v) for k, v in puts.items() if v is not None and k.startswith(prefix)]
            st.puts.update(puts)
        for site, total in st.counters.items():
            blob = orjson.dumps(total)  # the same bytes in the store and in the changelog
            st.meta[b"meta:count:" + site.encode()] = blob
            st.changelog.append((f"{site}\0\0count".encode(), blob))

    def _get(self, key: bytes) -> bytes | None:
        return self.kv.get(key)

    def _write(self, puts: dict[bytes, bytes | None], meta: dict[bytes, bytes]) -> None:
        self.kv.write(puts, meta)

    def _committed(self, batch: OffsetBatch) -> None:
        """The sites' in-memory state catches up with the committed group."""
        for sup in cast(Staged, batch).sites:  # this store commits the groups stage_group made
            sup.committed()
        self._staged = None

    def rebuild(self, topic: str, applied: int, sites: dict[str, dict[str, dict]], counters: dict[str, dict],
                progress: Progress | None = None) -> int:
        """Replace this partition's state by the one the URL changelog describes (``sites``: site →
        URL → record; ``counters``: site → counters), up to offset ``applied`` (another worker went
        on from where this copy stopped, or there is no local copy).  Returns URLs loaded.

        Logs its progress every :data:`REBUILD_LOG_EVERY` URLs and calls ``progress(loaded, total)``
        as often (and at the end)."""
        return super().rebuild(topic, applied, sites, counters, progress=progress)

    def _reopen_empty(self) -> None:
        path = self.kv.path
        self.kv.close()
        wipe(path)
        self.kv = _open_current(path, self.partition)
        self._sites.clear()
        self._kept.clear()
        self._mined.clear()
        self._index.clear()
        self._records.clear()
        self._staged = None

    def _load(self, sites: dict[str, dict[str, dict]], counters: dict[str, dict], *, applied: int,
              progress: Progress | None = None) -> int:
        """The URL records of a changelog image, in first-seen order per site, and the counters."""
        total = sum(len(urls) for urls in sites.values())
        t0 = time.perf_counter()
        log.warning("partition %s: rebuilding %s URLs of %s sites from the changelog", self.partition, total, len(sites))
        if progress:
            progress(0, total)
        n = 0
        for site, urls in sites.items():
            sup = self.site(site)
            # in first-seen order (the records' ids), so the URL list is the original one
            for k, (url, obj) in enumerate(sorted(urls.items(), key=_first_seen), 1):
                sup.load(url, info_from_json(obj), _record_id(obj))
                n += 1
                if k % REBUILD_COMMIT_EVERY == 0:
                    sup.commit()  # (a rebuild is not atomic anyway: it starts from nothing)
                if n % REBUILD_LOG_EVERY == 0:
                    dt = time.perf_counter() - t0
                    log.warning("partition %s: rebuild %s/%s URLs (%.0f%%), %.0f URLs/s", self.partition, n, total,
                                100.0 * n / max(1, total), n / max(dt, 1e-9))
                    if progress:
                        progress(n, total)
            sup.commit({b"meta:dirty:" + site.encode(): f"rebuild:{applied}".encode()})
        self.kv.write({}, {b"meta:count:" + site.encode(): orjson.dumps(c) for site, c in counters.items()})
        if progress:
            progress(n, total)
        return n

    def dirty_sites(self) -> list[tuple[str, bytes]]:
        """(site, change token) of the sites changed since their last window."""
        n = len(b"meta:dirty:")
        return [(k[n:].decode(), v) for k, v in self.kv.scan(b"meta:dirty:")]

    def _keep_within_budget(self, site: str) -> None:
        """The kept URL lists within :data:`KEPT_URLS`: ``site`` just windowed goes last in the
        order, the lists of the sites windowed longest ago are dropped first (never ``site``'s)."""
        self._kept.pop(site, None)
        self._kept[site] = None
        total = sum(self._sites[s].kept_urls for s in self._kept)
        for old in list(self._kept):
            if total <= KEPT_URLS or old == site:
                break
            total -= self._sites[old].kept_urls
            self._sites[old].forget_list()
            self._index.pop(old, None)
            del self._kept[old]

    def window(self, site: str) -> MineResult:
        """Phases 1 to 3 on the site's current URL list and the candidates' unsafe flags: the code
        of ``dustbuster mine`` (in two processes as ``mine --jobs 2`` does, where
        ``window_processes`` allows and the list is long enough: core/mining/processes.py).  When
        no URL was added and no evidence changed since the last window (only hits), the last
        result is reused (``stats["reused"]``): mining would give it again."""
        sup = self.site(site)
        t0 = time.perf_counter()
        ul = sup.current_urllist()
        self._keep_within_budget(site)
        t_list = time.perf_counter() - t0
        last = self._mined.get(site)
        if last is not None and last[0] == sup.generation:
            result = dataclasses.replace(last[1], stats=dict(last[1].stats))
            result.stats["reused"] = True
        else:
            t1 = time.perf_counter()
            index = self._site_index(site, sup, ul)
            t_index = time.perf_counter() - t1
            want_two = two_processes(self.window_processes, len(ul))
            with quiet_collector():  # the list and the state live on: never walked (core/mining/collector.py)
                result, two = self._mine(site, ul, index, want_two)  # with the unsafe flags `mine` sets
                result.stats["index_seconds"] = round(t_index, 3)
                result.stats["window_processes"] = 2 if two else 1
            self._mined[site] = (sup.generation, result)
            result = dataclasses.replace(result, stats=dict(result.stats))
            result.stats["reused"] = False
        result.stats.update(self.counters(site))
        result.stats["unsafe_flagged"] = len(result.unsafe)  # the set carries mine's flags (cli/candidates.py)
        result.stats["urllist_seconds"] = round(t_list, 3)
        result.test_urls, result.error_urls = window_test_urls(ul)
        result.stats["listed_urls"], result.stats["error_urls"] = len(ul.listed), len(ul.errors)  # as `mine --urls`
        return result

    def _mine(self, site: str, ul: URLList, index: URLIndex, want_two: bool) -> tuple[MineResult, bool]:
        """``mine`` of the list, in two processes when ``want_two`` and the site never lost its
        second process; when it is lost (killed or out of memory), the same list is mined again in
        this one (the same result) and the site's windows stay in one process from then on (a
        limit that killed it once would again, and each loss costs a second mining), said in a
        warning.  The result carries the candidates' unsafe flags, as ``dustbuster mine`` sets
        them (each process judging its own candidates where two mine).  Returns the result and
        whether two processes mined it."""
        test_urls = ul.test_urls()
        if want_two and site not in self._one_process:
            result, lost = mine_two_or_alone(ul, self.params, index=index, unsafe_urls=test_urls)
            if lost is None:
                return result, True
            self._one_process.add(site)
            log.warning("%s: the window's second process was lost; this window and the site's next ones "
                        "mine in one process (until the worker restarts): %s", site, lost)
            return result, False
        result = mine(ul, self.params, index=index)
        t1 = time.perf_counter()
        result.unsafe = unsafe_flags(result, test_urls)
        result.stats["unsafe_seconds"] = round(time.perf_counter() - t1, 3)
        return result, False

    def _site_index(self, site: str, sup: SiteSupports, ul: URLList) -> URLIndex:
        """The parse of the site's URL list: the last window's, refreshed with the URLs appended
        and the records changed since (URLIndex.refresh), or, for a list read anew, a new one."""
        ix = self._index.get(site)
        if ix is None or ix.urllist is not ul or ix.params != self.params:
            ix = self._index[site] = URLIndex(ul, self.params)
        else:
            ix.refresh(sup.replaced)
        sup.replaced = set()
        return ix

    def clear_dirty(self, site: str, token: bytes, sent: bytes | None = None) -> None:
        """Clear the mark unless the site changed again meanwhile (a newer token); ``sent``: the
        key of the candidate set the window sent (:meth:`sent_key`), kept in the same write."""
        key = b"meta:dirty:" + site.encode()
        puts: dict[bytes, bytes | None] = {} if sent is None else {b"meta:sent:" + site.encode(): sent}
        if self.kv.get(key) == token:
            puts[key] = None
        if puts:
            self.kv.write(puts, {})

    def sent_key(self, site: str) -> bytes | None:
        """The key of the last candidate set sent for the site (agents/windows.py), None before one."""
        return self.kv.get(b"meta:sent:" + site.encode())

    def close(self) -> None:
        self.kv.close()


def _last_seen(item: tuple[str, URLInfo]) -> int:
    return item[1].last_seen or 0


def window_test_urls(ul) -> tuple[list[str], list[str]]:
    """The test URLs a window sends (the log's most recently seen first, ties in first-seen order,
    then up to :data:`LISTED_TEST_URLS` listed URLs, from the end of the list: the newest when the
    list was kept between windows, else the last in key order) and its error URLs."""
    listed = list(itertools.islice(reversed(ul.listed), LISTED_TEST_URLS)) if ul.listed else []
    recent = heapq.nlargest(TEST_URLS - len(listed), ul.infos.items(), key=_last_seen)
    return [u for u, _ in recent] + listed, list(itertools.islice(ul.errors, ERROR_URLS))


def _record_id(obj: dict) -> int:
    """A changelog record's id (0 for a record written before ids: a log URL's)."""
    uid = obj.get("i")
    return uid if isinstance(uid, int) else 0


def _first_seen(item: tuple[str, dict]) -> int:
    uid = item[1].get("i")
    return uid if isinstance(uid, int) else -1


def _open_current(path: Path, partition: int) -> RocksKV:
    """The partition's store, wiped first when an older version wrote it (see the module doc)."""
    kv = RocksKV(path)
    fmt = kv.get(FORMAT_KEY)
    if fmt == STATE_FORMAT:
        return kv
    if fmt is not None or next(iter(kv.scan(b"")), None) is not None:
        log.warning("partition %s: the store at %s has an older layout (format %s); wiped, to be rebuilt "
                    "from the URL changelog", partition, path, (fmt or b"1").decode(errors="replace"))
        kv.close()
        wipe(path)
        kv = RocksKV(path)
    kv.write({}, {FORMAT_KEY: STATE_FORMAT})
    return kv


class Stores(PartitionStores[PartitionState]):
    """The open partition states of one worker process (opened on first use), and the one thread
    that works on them (:meth:`run`)."""

    def __init__(self, root: Path, params: DustParams, max_urls_per_site: int = 0, window_processes: int = 1) -> None:
        super().__init__(self._open_state)
        self.root = Path(root)
        self.params = params
        self.max_urls_per_site = max_urls_per_site  #: 0 = no cap (set before the first get)
        self.window_processes = window_processes  #: PartitionState.window_processes
        self._executor: ThreadPoolExecutor | None = None
        self.busy_s = 0.0  #: seconds the state thread has spent running calls (the window pacer reads it)

    def _open_state(self, partition: int) -> PartitionState:
        st = PartitionState(self.root, partition, self.params, self.max_urls_per_site, self.window_processes)
        log.info("opened state of partition %s at %s", partition, st.kv.path)
        return st

    async def run(self, fn: Callable[..., T], *args, **kwargs) -> T:
        """``fn(*args, **kwargs)`` on the state thread, awaited: the event loop stays free while it
        works.  One thread, so the calls never overlap (the state objects are not thread-safe)."""
        if self._executor is None:
            self._executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="dust-state")
        return await asyncio.get_running_loop().run_in_executor(self._executor, self._timed, fn, args, kwargs)

    def _timed(self, fn: Callable[..., T], args: tuple, kwargs: dict) -> T:
        t0 = time.perf_counter()
        try:
            return fn(*args, **kwargs)
        finally:
            self.busy_s += time.perf_counter() - t0  # only the state thread writes it

    def close(self) -> None:
        if self._executor is not None:
            self._executor.shutdown(wait=True)
            self._executor = None
        super().close()
