"""Feeding the dashboard: the candidates topic (all of it, every worker) and the rule book's updates.

The validator agent reads the candidates topic in the consumer group, so each worker sees only
its partitions' sites.  The dashboard of every worker shows every site, so it reads the topic
again with a group-less consumer: all partitions, starting ``backlog`` records before the end of
each (a small history; the topic is not compacted and can be long), then live.  A record that is
not a candidate set is counted and skipped (``dustbuster.stream.records.decode_candidates`` raises only
ParseError); nothing read here can stop the worker.
"""

from __future__ import annotations

import asyncio
import logging
import time

from aiokafka import AIOKafkaConsumer, TopicPartition
from aiokafka.errors import KafkaError

from dustbuster.core.errors import ParseError, StreamError
from dustbuster.core.rulebook import RuleBook
from dustbuster.stream.records import decode_candidates
from dustbuster.stream.rulesview import TopicFollower, Update, topic_partitions

from .dashboard_state import DashboardState, VersionLog

log = logging.getLogger(__name__)

BACKLOG = 30  #: candidate sets read back per partition at start (each holds up to 3,000 test URLs)


class CandidatesFollower:
    def __init__(self, bootstrap: str, topic: str, state: DashboardState, backlog: int = BACKLOG,
                 poll_ms: int = 500) -> None:
        self.bootstrap, self.topic, self.state = bootstrap, topic, state
        self.backlog, self.poll_ms = backlog, poll_ms
        self._consumer: AIOKafkaConsumer | None = None

    async def start(self, wait_s: float = 30.0) -> None:
        c = AIOKafkaConsumer(bootstrap_servers=self.bootstrap, group_id=None, enable_auto_commit=False,
                             auto_offset_reset="earliest")
        await c.start()
        try:
            parts = await topic_partitions(self.bootstrap, self.topic, wait_s)
            if not parts:
                raise StreamError(f"topic {self.topic} does not exist at {self.bootstrap}")
            tps = [TopicPartition(self.topic, p) for p in parts]
            c.assign(tps)
            begin, end = await c.beginning_offsets(tps), await c.end_offsets(tps)
            for tp in tps:
                c.seek(tp, max(begin[tp], end[tp] - self.backlog))
        except BaseException:
            await c.stop()
            raise
        self._consumer = c

    def apply(self, key: bytes | None, value: bytes | None, timestamp_ms: int | None) -> bool:
        """One candidates record into the state; False (counted) when it is not a candidate set."""
        try:
            cs = decode_candidates(value)
        except ParseError as exc:
            self.state.candidate_sets_skipped += 1
            log.info("dashboard: skipping a candidates record: %s", exc)
            return False
        t = timestamp_ms / 1000.0 if timestamp_ms and timestamp_ms > 0 else time.time()
        self.state.add_candidates(cs.site, t, {"site": cs.site, "window": cs.window, "rules": list(cs.rules),
                                               "param_rules": list(cs.param_rules), "stats": cs.stats,
                                               "test_urls": list(cs.test_urls)})
        return True

    async def poll(self) -> int:
        assert self._consumer is not None, "start() first"
        got = await self._consumer.getmany(timeout_ms=self.poll_ms)
        n = 0
        for msgs in got.values():
            for m in msgs:
                n += 1
                self.apply(m.key, m.value, m.timestamp)
        return n

    async def run(self) -> None:
        """Start (retrying until the broker answers), then follow the topic until cancelled."""
        while self._consumer is None:
            try:
                await self.start()
            except Exception as exc:  # the broker not there yet, the topic not created: the dashboard waits
                log.warning("dashboard: cannot read %s yet (%s); retrying", self.topic, exc)
                await asyncio.sleep(5.0)
        try:
            while True:
                try:
                    await self.poll()
                except KafkaError as exc:
                    log.warning("dashboard: candidates topic %s: %s; retrying", self.topic, exc)
                    await asyncio.sleep(1.0)
        finally:
            await self._consumer.stop()
            self._consumer = None


def recording_versions(inner: Update, book: RuleBook, versions: VersionLog) -> Update:
    """The rules follower's update callback ``inner`` that also writes every set the rule book
    applies (or refuses, or a tombstone) to ``versions``; ``inner``'s own behaviour is unchanged.
    The worker builds its follower with it (agents/context.py ``rules_follower``)."""
    def on_update(site: str, doc: dict | None) -> None:
        key = site.strip().lower()
        try:
            inner(site, doc)
        except Exception as exc:
            versions.refused(key, doc, getattr(exc, "reason", "") or type(exc).__name__)
            raise
        sr = book.sites.get(key)
        if sr is None:
            versions.record(key, None, (), None)
        else:
            created = sr.doc.get("created")
            versions.record(key, sr.version, sr.texts, created if isinstance(created, (int, float)) else None)
            raw = [r for r in list(sr.doc.get("param_rules") or []) + list(sr.doc.get("rules") or []) if isinstance(r, dict)]
            versions.remember_samples(key, sr.version, {str(r.get("display")): r for r in raw})

    on_update.versions = versions  # type: ignore[attr-defined]
    return on_update


def record_versions(follower: TopicFollower, book: RuleBook, versions: VersionLog) -> None:
    """Make ``follower`` (built without the hook) write its updates to ``versions`` too
    (:func:`recording_versions`); nothing when its callback writes to ``versions`` already."""
    if getattr(follower.on_update, "versions", None) is versions:
        return
    follower.on_update = recording_versions(follower.on_update, book, versions)
