"""Worker state: one RocksDB per input partition, holding the incremental supports of the sites
whose lines land on that partition, plus per-partition metadata in the same atomic writes:

* ``meta:applied:<topic>`` → the last input offset applied (replays at or below it are skipped, so
  at-least-once delivery and a restarted worker change nothing: exactly-once state);
* ``meta:dirty:<site>`` → the site changed since its last window;
* ``meta:count:<site>`` → lines, records, rejects, drops seen for the site.

docs/state.md describes the design and what is left for rebalancing across machines.
"""

from __future__ import annotations

import logging
import marshal
import time
from pathlib import Path
from typing import Iterable

from dataclasses import dataclass

from dust.incremental import SiteSupports, info_from_json, info_to_json
from dust.mine import MineResult, mine_table
from dust.params import DustParams

from .rocks import RocksKV

log = logging.getLogger(__name__)

COUNTERS = ("lines", "records", "dropped_status", "skipped", "rejected")
TEST_URLS = 3000  #: most recently seen URLs sent with each candidate set, for validation


@dataclass
class Staged:
    site: str
    offset: int
    sup: SiteSupports
    meta: dict[bytes, bytes]
    changelog: dict[str, dict]  #: url -> record JSON, for the URL changelog topic
    counters: dict[str, int]


class PartitionState:
    def __init__(self, root: Path, partition: int, params: DustParams) -> None:
        self.partition = partition
        self.params = params
        self.kv = RocksKV(Path(root) / f"p{partition:04d}")
        self._sites: dict[str, SiteSupports] = {}

    def site(self, name: str) -> SiteSupports:
        s = self._sites.get(name)
        if s is None:
            s = self._sites[name] = SiteSupports(self.kv, name, self.params)
        return s

    def applied(self, topic: str) -> int:
        raw = self.kv.get(b"meta:applied:" + topic.encode())
        return int(raw) if raw else -1

    def counters(self, site: str) -> dict[str, int]:
        raw = self.kv.get(b"meta:count:" + site.encode())
        return dict(marshal.loads(raw)) if raw else {k: 0 for k in COUNTERS}

    def stage(self, topic: str, offset: int, site: str, records: Iterable[tuple], counts: dict[str, int]) -> "Staged | None":
        """Compute one input message's effect without committing it: the caller first makes the
        changelog durable, then calls :meth:`commit` (one atomic write with the offset).  None for
        a replay (offset at or below the applied one)."""
        if offset <= self.applied(topic):
            return None
        sup = self.site(site)
        t_start = time.time()
        now = int(t_start)
        for rec in records:
            sup.observe(*rec, when=now)
        total = self.counters(site)
        for k, v in counts.items():
            total[k] = total.get(k, 0) + v
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
        return Staged(site, offset, sup, meta, changelog, total)

    def commit(self, staged: "Staged") -> None:
        staged.sup.commit(staged.meta)
        staged.sup.changed = False

    def rebuild(self, topic: str, applied: int, sites: dict[str, dict[str, dict]], counters: dict[str, dict]) -> int:
        """Replace this partition's state by the one the URL changelog describes (another worker
        went on from where this copy stopped, or there is no local copy).  Returns URLs loaded."""
        path = self.kv.path
        self.kv.close()
        import shutil

        shutil.rmtree(path, ignore_errors=True)
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
            sup.commit({b"meta:dirty:" + site.encode(): f"rebuild:{applied}".encode()})
            sup.changed = False
        meta = {b"meta:applied:" + topic.encode(): str(applied).encode()}
        for site, c in counters.items():
            meta[b"meta:count:" + site.encode()] = marshal.dumps(c)
        self.kv.write({}, meta)
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


class Stores:
    """The open partition states of one worker process (opened on first use)."""

    def __init__(self, root: Path, params: DustParams) -> None:
        self.root = Path(root)
        self.params = params
        self.parts: dict[int, PartitionState] = {}

    def get(self, partition: int) -> PartitionState:
        st = self.parts.get(partition)
        if st is None:
            st = self.parts[partition] = PartitionState(self.root, partition, self.params)
            log.info("opened state of partition %s at %s", partition, st.kv.path)
        return st

    def close(self) -> None:
        for st in self.parts.values():
            st.close()
        self.parts.clear()
