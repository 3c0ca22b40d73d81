"""The worker context: everything a worker's agents, timers and views share, built once at
start-up from the settings (:func:`build_context`) and passed to every ``register(ctx)``."""

from __future__ import annotations

from dataclasses import dataclass

import faust

from dustbuster.core.rulebook import RuleBook
from dustbuster.state.partitions import Stores
from dustbuster.state.registry import PartitionStores
from dustbuster.state.seen import SeenStore, seen_stores
from dustbuster.state.verdicts import VerdictStore
from dustbuster.stream.app import Topics, topics as make_topics
from dustbuster.stream.rulesview import TopicFollower
from dustbuster.stream.settings import Settings

from .dashboard_state import DashboardState
from .health import Health, consumer_problem
from .metrics import Metrics


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
    stores = stores if stores is not None else Stores(settings.data_dir / "state", settings.params)
    stores.max_urls_per_site = settings.max_urls_per_site
    metrics = Metrics()
    health = Health(on_crash=lambda name: metrics.agent_crashes.labels(name).inc())
    health.membership = lambda: consumer_problem(app)
    metrics.healthy.set_function(lambda: 1.0 if health.ok() else 0.0)
    book = RuleBook(settings.params.ma, settings.normalize)
    return WorkerContext(
        app=app, settings=settings, topics=topics if topics is not None else make_topics(app, settings),
        stores=stores, metrics=metrics, health=health, book=book,
        follower=rules_follower(settings, book, metrics) if settings.canonize else None,
        seen=seen_stores(settings.data_dir / "seen") if settings.canonize else None,
        verdicts=VerdictStore(settings.data_dir / "verdicts") if settings.validate else None,
        dashboard=DashboardState() if settings.api_port else None)


def rules_follower(settings: Settings, book: RuleBook, metrics: Metrics) -> TopicFollower:
    """Follows the whole rules topic into ``book``; counts the sets applied and the records skipped."""
    def on_rules(site: str, doc: dict | None) -> None:
        book.update(site, doc)
        metrics.rule_set_updates.inc()
        metrics.rule_sets.set(len(book.sites))

    return TopicFollower(settings.kafka_bootstrap, settings.rules_topic, on_rules,
                         on_reject=lambda reason, site: metrics.rule_sets_rejected.labels(reason).inc())
