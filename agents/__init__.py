"""Thin Faust agents: decode, call core/ and state/, send.  ``register_all`` wires them to an app."""

from __future__ import annotations

from dustbuster.core.rulebook import RuleBook
from dustbuster.agents.health import Health, consumer_problem, watch_loop
from dustbuster.agents.metrics import Metrics
from dustbuster.stream.rulesview import TopicFollower

from .api import register as register_api
from .canonizer import register as register_canonizer
from .ingest import register as register_ingest
from .validator import register as register_validator
from .windows import register as register_windows


def register_all(app, settings, topics, stores) -> None:
    metrics = app.dust_metrics = Metrics()
    health = app.dust_health = Health(on_crash=lambda name: metrics.agent_crashes.labels(name).inc())
    health.membership = lambda: consumer_problem(app)
    metrics.healthy.set_function(lambda: 1.0 if health.ok() else 0.0)

    @app.task
    async def watch_event_loop() -> None:
        await watch_loop(metrics)

    register_ingest(app, settings, topics, stores)
    register_windows(app, settings, topics, stores)
    if settings.validate:
        register_validator(app, settings, topics, stores)
    book = app.dust_rulebook = RuleBook(settings.params.ma, settings.normalize)
    follower = None
    if settings.canonize:
        def on_rules(site: str, doc: dict | None) -> None:
            book.update(site, doc)
            metrics.rule_set_updates.inc()
            metrics.rule_sets.set(len(book.sites))

        follower = TopicFollower(settings.kafka_bootstrap, settings.rules_topic, on_rules)
        register_canonizer(app, settings, topics, book, follower, metrics)
    register_api(app, settings, book, follower, metrics)
