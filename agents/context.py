"""The worker context: everything a worker's agents, timers and views share, built once at
start-up from the settings (:func:`build_context`) and passed to every ``register(ctx)``."""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from typing import Any

import faust

from dustbuster.core.canon.rulebook import RuleBook
from dustbuster.fetch.pacer import SitePacer
from dustbuster.state.partitions import Stores
from dustbuster.state.registry import PartitionStores
from dustbuster.state.seen import SeenStore, seen_stores
from dustbuster.state.verdicts import VerdictStore
from dustbuster.stream.app import Topics, topics as make_topics
from dustbuster.stream.brokerprobe import BrokerProbe
from dustbuster.stream.rulesview import TopicFollower
from dustbuster.stream.settings import Settings

from .assignment import RawAssignment
from .dashboard_feed import recording_versions
from .dashboard_state import DashboardState, VersionLog
from .health import Health, consumer_problem
from .metrics import Metrics

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class WorkerContext:
    """One worker's shared objects.  The optional ones exist when their part runs in this worker."""

    app: faust.App
    settings: Settings
    topics: Topics
    stores: Stores  #: the miner's partition states (RocksDB per raw partition)
    metrics: Metrics
    health: Health
    book: RuleBook  #: the rule sets this worker applies, from the rules topic
    follower: TopicFollower | None = None  #: reads the rules topic into ``book`` (DUST_CANONIZE)
    seen: PartitionStores[SeenStore] | None = None  #: the canonizer's seen sets (DUST_CANONIZE)
    verdicts: VerdictStore | None = None  #: the validator's memory (DUST_VALIDATE)
    dashboard: DashboardState | None = None  #: what the dashboard shows (the API on: DUST_API_PORT)
    probe: BrokerProbe | None = None  #: is the broker reachable (health)
    #: each validated site's fetch pace and budget, kept across rounds (fetch/pacer.py)
    pacers: dict[str, SitePacer] = field(default_factory=dict, compare=False)
    #: the raw partitions this worker owns, and those whose stores are still to be opened
    raw_partitions: RawAssignment = field(default_factory=RawAssignment, compare=False)
    #: the sites whose candidates were said to wait unvalidated (not configured; said once per site)
    told_unconfigured: set[str] = field(default_factory=set, compare=False)

    def close(self) -> None:
        """Close the stores this context opened (after the worker stopped)."""
        self.stores.close()
        if self.seen is not None:
            self.seen.close()
        if self.verdicts is not None:
            self.verdicts.close()


def build_context(app: faust.App, settings: Settings, topics: Topics | None = None,
                  stores: Stores | None = None) -> WorkerContext:
    """The context of a worker running ``app``: topics, stores, metrics, health and rule book made
    from ``settings`` (``topics`` and ``stores`` may be given)."""
    if stores is None:
        stores = Stores(settings.data_dir / "state", settings.params, settings.max_urls_per_site,
                        settings.window_processes)
    metrics = Metrics()
    health = Health(on_crash=lambda name: metrics.agent_crashes.labels(name).inc())
    health.membership = lambda: consumer_problem(app)
    probe = BrokerProbe(settings.kafka_bootstrap, settings.broker_grace_s)
    health.broker = probe.problem
    metrics.healthy.set_function(lambda: 1.0 if health.ok() else 0.0)
    book = RuleBook(settings.params.ma, settings.normalize, keys=settings.public_keys,
                    max_skew_s=settings.max_version_skew_s)
    dashboard = DashboardState() if settings.api_port else None
    return WorkerContext(
        app=app, settings=settings, topics=topics if topics is not None else make_topics(app, settings),
        stores=stores, metrics=metrics, health=health, book=book,
        follower=rules_follower(settings, book, metrics, dashboard.versions if dashboard else None)
        if settings.canonize else None,
        seen=seen_stores(settings.data_dir / "seen") if settings.canonize else None,
        verdicts=VerdictStore(settings.data_dir / "verdicts") if settings.validate else None,
        dashboard=dashboard, probe=probe)


def rules_follower(settings: Settings, book: RuleBook, metrics: Metrics,
                   versions: VersionLog | None = None) -> TopicFollower:
    """Follows the whole rules topic into ``book``; counts the sets applied and the records skipped.
    With ``versions`` (the dashboard's), every set applied, refused or deleted is written there too."""
    def on_rules(site: str, doc: dict | None) -> None:
        book.update(site, doc)
        metrics.rule_set_updates.inc()
        metrics.rule_sets.set(len(book.sites))

    update = recording_versions(on_rules, book, versions) if versions is not None else on_rules
    return TopicFollower(settings.kafka_bootstrap, settings.rules_topic, update,
                         on_reject=lambda reason, site: metrics.rule_sets_rejected.labels(reason).inc(),
                         max_record_bytes=settings.max_record_bytes)


def stop_at_shutdown(app: faust.App, service) -> None:
    """``await service.stop()`` when the app shuts down (a producer a ``register`` started lazily)."""
    async def stop(sender: Any, /, *_args: Any, **_: Any) -> None:  # a mode signal receiver: (sender, *args, signal=, **kw)
        try:
            await service.stop()
        except Exception:  # shutting down: log it, let the others stop
            log.exception("stopping %r failed", service)

    app.on_before_shutdown.connect(stop)
