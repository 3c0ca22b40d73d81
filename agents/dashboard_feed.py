"""Feeding the dashboard: the candidates topic (all of it, every worker) and the rule book's updates.

The validator agent reads the candidates topic in the consumer group, so each worker sees only
its partitions' sites.  The dashboard of every worker shows every site, so it reads the topic
again with a group-less consumer: all partitions, starting ``backlog`` records before the end of
each (a small history; the topic is not compacted and can be long), then live, with the rules follower's
:class:`dustbuster.stream.rulesview.TopicFollower`.  A record that is not a candidate set
(``dustbuster.stream.records.decode_candidates`` raises only ParseError) is counted and skipped;
nothing read here can stop the worker.
"""

from __future__ import annotations

import asyncio
import logging
import time

from dustbuster.core.canon.rulebook import RuleBook
from dustbuster.core.model.rules import rule_dicts
from dustbuster.stream.records import CandidateSet, decode_candidates
from dustbuster.stream.rulesview import TopicFollower, Update

from .dashboard_state import DashboardState, VersionLog

log = logging.getLogger(__name__)

BACKLOG = 30  #: candidate sets read back per partition at start (each holds up to 3,000 test URLs)


def _decode_candidates(key: bytes | None, value: bytes | None) -> tuple[str, CandidateSet]:
    cs = decode_candidates(value)
    return cs.site, cs


class CandidatesFollower:
    """The candidates topic into the dashboard state: a :class:`TopicFollower` from ``backlog``
    records before each partition's end, decoding candidate sets."""

    def __init__(self, bootstrap: str, topic: str, state: DashboardState, backlog: int = BACKLOG,
                 poll_ms: int = 500) -> None:
        self.topic, self.state = topic, state
        self.follower = TopicFollower(bootstrap, topic, self._add, poll_ms, on_reject=self._skipped,
                                      decode=_decode_candidates, backlog=backlog, skip_level=logging.INFO)

    def _skipped(self, reason: str, site: str) -> None:
        self.state.candidate_sets_skipped += 1

    def _add(self, site: str, cs: CandidateSet) -> None:
        ts = self.follower.timestamp_ms
        t = ts / 1000.0 if ts and ts > 0 else time.time()
        self.state.add_candidates(cs.site, t, {"site": cs.site, "window": cs.window, "rules": list(cs.rules),
                                               "stats": cs.stats,
                                               "test_urls": list(cs.test_urls)})

    def apply(self, key: bytes | None, value: bytes | None, timestamp_ms: int | None) -> bool:
        """One candidates record into the state; False (counted) when it is not a candidate set."""
        return self.follower.apply(key, value, timestamp_ms=timestamp_ms)

    async def run(self) -> None:
        """Start (retrying until the broker answers), then follow the topic until cancelled."""
        while True:
            try:
                await self.follower.start()
                break
            except Exception as exc:  # noqa: BLE001 - the broker not there yet, the topic not created: the dashboard waits
                log.warning("dashboard: cannot read %s yet (%s); retrying", self.topic, exc)
                await asyncio.sleep(5.0)
        try:
            await self.follower.run()
        finally:
            await self.follower.stop()


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
            raw = rule_dicts(sr.doc)
            versions.remember_samples(key, sr.version, {str(r.get("display")): r for r in raw})

    on_update.versions = versions  # type: ignore[attr-defined]
    return on_update
