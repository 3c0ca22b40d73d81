"""Worker state: one RocksDB per input partition, holding the incremental supports of the sites
whose lines land on that partition, plus per-partition metadata in the same atomic writes:

* ``meta:applied:<topic>`` → the last input offset applied (replays at or below it are skipped, so
  at-least-once delivery and a restarted worker change nothing: exactly-once state);
* ``meta:dirty:<site>`` → the site changed since its last window;
* ``meta:count:<site>`` → lines, records, rejects, drops seen for the site, and ``over_cap``:
  records of new URLs not tracked because the site holds ``max_urls_per_site`` URLs;
* ``meta:inflight:<topic>`` → the offset of a message whose envelope buckets were written in
  parts (more than :data:`FLUSH_ENTRIES` writes) and that is not committed yet.  Found on a later
  message, it means a crash cut that message short: the buckets may name uncommitted URLs, so
  the partition must be rebuilt from the changelog (:meth:`PartitionState.interrupted`).

The work on a partition's state is synchronous and can take seconds (a large message, a window,
a rebuild); :meth:`Stores.run` runs it on one worker thread, off the event loop, one call at a
time, so the API, heartbeats and timers go on meanwhile.  docs/state.md describes the design;
docs/cost.md the cost bounds.
"""

from __future__ import annotations

import asyncio
import functools
import logging
import marshal
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Callable, Iterable, TypeVar

from dataclasses import dataclass

from dustbuster.core.errors import StateError
from dustbuster.core.incremental import SiteSupports
from dustbuster.core.mine import MineResult, mine_table
from dustbuster.core.params import DustParams
from dustbuster.core.urlrecord import info_from_json, info_to_json

from .registry import PartitionStores, partition_dir
from .rocks import RocksKV, wipe

log = logging.getLogger(__name__)

COUNTERS = ("lines", "records", "dropped_status", "skipped", "rejected", "over_cap")
TEST_URLS = 3000  #: most recently seen URLs sent with each candidate set, for validation
REBUILD_LOG_EVERY = 10_000  #: a rebuild logs its progress every this many URLs
#: pending writes after which a message's (or a rebuild's) envelope buckets are written out: one
#: RocksDB write holds the GIL throughout (~0.03 s per 20,000 entries), and the pending dict is memory
FLUSH_ENTRIES = 20_000
T = TypeVar("T")


@dataclass
class Staged:
    site: str
    offset: int
    sup: SiteSupports
    meta: dict[bytes, bytes]
    changelog: dict[str, dict]  #: url -> record JSON, for the URL changelog topic
    counters: dict[str, int]
    new_urls: int = 0  #: URLs this message added to the site
    over_cap: int = 0  #: records of new URLs this message could not add (the site is at its cap)
    topic: str = ""
    flushed: bool = False  #: buckets were written in parts (meta:inflight set until the commit)


class PartitionState:
    def __init__(self, root: Path, partition: int, params: DustParams, max_urls_per_site: int = 0) -> None:
        self.partition = partition
        self.params = params
        self.max_urls_per_site = max_urls_per_site
        self.kv = RocksKV(Path(root) / partition_dir(partition))
        self._sites: dict[str, SiteSupports] = {}
        self._capped: set[str] = set()  # sites whose cap was logged (once per site and process)

    def site(self, name: str) -> SiteSupports:
        s = self._sites.get(name)
        if s is None:
            s = self._sites[name] = SiteSupports(self.kv, name, self.params, self.max_urls_per_site)
        return s

    def applied(self, topic: str) -> int:
        raw = self.kv.get(b"meta:applied:" + topic.encode())
        return int(raw) if raw else -1

    def interrupted(self, topic: str) -> int | None:
        """The offset of a message cut short by a crash after part of its buckets were written, or
        None.  Such a partition state must be rebuilt (from the changelog) before going on."""
        raw = self.kv.get(b"meta:inflight:" + topic.encode())
        return int(raw) if raw else None

    def counters(self, site: str) -> dict[str, int]:
        raw = self.kv.get(b"meta:count:" + site.encode())
        return dict(marshal.loads(raw)) if raw else {k: 0 for k in COUNTERS}

    def stage(self, topic: str, offset: int, site: str, records: Iterable[tuple], counts: dict[str, int]) -> "Staged | None":
        """Compute one input message's effect without committing it: the caller first makes the
        changelog durable, then calls :meth:`commit` (one atomic write with the offset).  None for
        a replay (offset at or below the applied one).

        Bounded: past :data:`FLUSH_ENTRIES` pending writes the envelope buckets are written out
        (with ``meta:inflight``), so neither memory nor any single write grows with the message."""
        if offset <= self.applied(topic):
            return None
        cut = self.interrupted(topic)
        if cut is not None:
            raise StateError(f"partition {self.partition}: message {topic}@{cut} was cut short by a crash; "
                             "the state must be rebuilt from the changelog first")
        old = self._sites.get(site)
        if old is not None and old.pending_count():
            # a message staged and never committed (its changelog write failed, or it raised):
            # its writes are dropped with the object, and this message starts from the committed state
            log.warning("partition %s: dropping the uncommitted changes of an earlier message of %s",
                        self.partition, site)
            del self._sites[site]
        sup = self.site(site)
        added, over = sup.added, sup.over_cap
        t_start = time.time()
        now = int(t_start)
        flushed = False
        inflight = {b"meta:inflight:" + topic.encode(): str(offset).encode()}
        for rec in records:
            sup.observe(*rec, when=now)
            if sup.pending_count() > FLUSH_ENTRIES:
                sup.flush_buckets(inflight)
                flushed = True
        added, over = sup.added - added, sup.over_cap - over
        if over and site not in self._capped:
            self._capped.add(site)
            log.warning("site %s holds %s URLs (DUST_MAX_URLS_PER_SITE): its new URLs are not tracked, only "
                        "counted (over_cap in its counters, dust_urls_over_cap_total); logged once per site",
                        site, sup.url_count())
        total = self.counters(site)
        for k, v in counts.items():
            total[k] = total.get(k, 0) + v
        if over:
            total["over_cap"] = total.get("over_cap", 0) + over
        # wall-clock span of this site's ingest (for throughput figures)
        total["ingest_first"] = total.get("ingest_first") or round(t_start, 3)
        total["ingest_last"] = round(time.time(), 3)
        meta = {
            b"meta:applied:" + topic.encode(): str(offset).encode(),
            b"meta:count:" + site.encode(): marshal.dumps(total),
        }
        if sup.changed or counts.get("lines"):
            meta[b"meta:dirty:" + site.encode()] = f"{topic}:{offset}".encode()  # a change token
        changelog = {u: info_to_json(i) for u, i in sup.touched.items()}
        return Staged(site, offset, sup, meta, changelog, total, added, over, topic, flushed)

    def commit(self, staged: "Staged") -> None:
        """One atomic write: the message's URL records, supports, remaining buckets and offset."""
        puts = staged.sup.pending_writes()
        if staged.flushed:
            puts[b"meta:inflight:" + staged.topic.encode()] = None
        self.kv.write(puts, staged.meta)
        staged.sup.changed = False

    def rebuild(self, topic: str, applied: int, sites: dict[str, dict[str, dict]], counters: dict[str, dict],
                progress: Callable[[int, int], None] | None = None) -> int:
        """Replace this partition's state by the one the URL changelog describes (another worker
        went on from where this copy stopped, or there is no local copy).  Returns URLs loaded.

        Logs its progress every :data:`REBUILD_LOG_EVERY` URLs and calls ``progress(loaded, total)``
        as often (and at the end)."""
        total = sum(len(urls) for urls in sites.values())
        t0 = time.perf_counter()
        log.warning("partition %s: rebuilding %s URLs of %s sites from the changelog", self.partition, total, len(sites))
        if progress:
            progress(0, total)
        path = self.kv.path
        self.kv.close()
        wipe(path)
        self.kv = RocksKV(path)
        self._sites.clear()
        n = 0
        for site, urls in sites.items():
            sup = self.site(site)
            for k, (url, obj) in enumerate(urls.items(), 1):
                sup.load(url, info_from_json(obj))
                n += 1
                if k % 2000 == 0:
                    sup.commit()
                elif sup.pending_count() > FLUSH_ENTRIES:
                    sup.flush_buckets({})  # (a rebuild is not atomic anyway: it starts from nothing)
                if n % REBUILD_LOG_EVERY == 0:
                    dt = time.perf_counter() - t0
                    log.warning("partition %s: rebuild %s/%s URLs (%.0f%%), %.0f URLs/s", self.partition, n, total,
                                100.0 * n / max(1, total), n / max(dt, 1e-9))
                    if progress:
                        progress(n, total)
            sup.commit({b"meta:dirty:" + site.encode(): f"rebuild:{applied}".encode()})
            sup.changed = False
        meta = {b"meta:applied:" + topic.encode(): str(applied).encode()}
        for site, c in counters.items():
            meta[b"meta:count:" + site.encode()] = marshal.dumps(c)
        self.kv.write({}, meta)
        if progress:
            progress(n, total)
        return n

    def skip(self, topic: str, offset: int) -> None:
        """Advance the applied offset over a message that carried nothing (a rejected one)."""
        if offset > self.applied(topic):
            self.kv.write({}, {b"meta:applied:" + topic.encode(): str(offset).encode()})

    def dirty_sites(self) -> list[tuple[str, bytes]]:
        """(site, change token) of the sites changed since their last window."""
        n = len(b"meta:dirty:")
        return [(k[n:].decode(), v) for k, v in self.kv.scan(b"meta:dirty:")]

    def window(self, site: str) -> MineResult:
        """Phases 1 (ranking), 2 and 3 on the site's current state (same code as dustbuster mine)."""
        sup = self.site(site)
        ul = sup.urllist()
        table = sup.table()
        table.stats = {"urls": len(ul)}
        result = mine_table(table, ul, self.params)
        result.stats.update(self.counters(site))
        recent = sorted(ul.infos.items(), key=lambda kv: -(kv[1].last_seen or 0))
        result.test_urls = [u for u, _ in recent[:TEST_URLS]]
        return result

    def clear_dirty(self, site: str, token: bytes) -> None:
        """Clear the mark unless the site changed again meanwhile (a newer token)."""
        key = b"meta:dirty:" + site.encode()
        if self.kv.get(key) == token:
            self.kv.write({key: None}, {})

    def close(self) -> None:
        self.kv.close()


class Stores(PartitionStores[PartitionState]):
    """The open partition states of one worker process (opened on first use), and the one thread
    that works on them (:meth:`run`)."""

    def __init__(self, root: Path, params: DustParams, max_urls_per_site: int = 0) -> None:
        super().__init__(self._open_state)
        self.root = Path(root)
        self.params = params
        self.max_urls_per_site = max_urls_per_site  #: 0 = no cap (set before the first get)
        self._executor: ThreadPoolExecutor | None = None

    def _open_state(self, partition: int) -> PartitionState:
        st = PartitionState(self.root, partition, self.params, self.max_urls_per_site)
        log.info("opened state of partition %s at %s", partition, st.kv.path)
        return st

    async def run(self, fn: Callable[..., T], *args, **kwargs) -> T:
        """``fn(*args, **kwargs)`` on the state thread, awaited: the event loop stays free while it
        works.  One thread, so the calls never overlap (the state objects are not thread-safe)."""
        if self._executor is None:
            self._executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="dust-state")
        return await asyncio.get_running_loop().run_in_executor(self._executor, functools.partial(fn, *args, **kwargs))

    def close(self) -> None:
        if self._executor is not None:
            self._executor.shutdown(wait=True)
            self._executor = None
        super().close()
