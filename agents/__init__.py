"""Thin Faust agents: decode, call core/ and state/, send.  :func:`register_all` builds the
worker context (agents/context.py) and wires every agent, timer and view of a worker to it."""

from __future__ import annotations

from dustbuster.agents.context import WorkerContext, build_context
from dustbuster.agents.health import watch_loop

from .api import register as register_api
from .canonizer import register as register_canonizer
from .ingest import register as register_ingest
from .keyreload import register as register_key_reload
from .validator import register as register_validator
from .windows import register as register_windows


def register_all(app, settings, topics=None, stores=None) -> WorkerContext:
    """Build the worker context of ``app`` and register every part ``settings`` turns on; the
    caller closes the context (:meth:`WorkerContext.close`) once the worker stopped; when a part
    cannot be registered (a bad sites file: ConfigError), the context is closed here and the error
    raised.  ``topics`` and ``stores`` are made from the settings unless given."""
    ctx = build_context(app, settings, topics, stores)
    try:
        @app.task
        async def watch_event_loop() -> None:
            await watch_loop(ctx.metrics)

        @app.task
        async def probe_broker() -> None:
            assert ctx.probe is not None  # build_context makes one
            await ctx.probe.run()

        register_ingest(ctx)
        register_windows(ctx)
        if settings.validate:
            register_validator(ctx)
        if settings.canonize:
            register_canonizer(ctx)
        register_key_reload(ctx)
        register_api(ctx)
    except BaseException:
        ctx.close()
        raise
    return ctx


__all__ = ["WorkerContext", "build_context", "register_all"]
