"""``dustbuster worker``: one streaming worker, a Faust app with every agent
(:func:`dustbuster.agents.register_all`) over per-partition RocksDB state."""

from __future__ import annotations

import argparse
import logging
from pathlib import Path

from .common import settings as kafka_settings

log = logging.getLogger(__name__)


def add_parser(sub, common) -> argparse.ArgumentParser:
    w = sub.add_parser("worker", parents=[common], help="run a streaming worker (Faust)",
                       description="Consume the raw topic, keep per-site incremental DUST state in RocksDB "
                       "(DUST_DATA_DIR), and emit candidate rules every DUST_WINDOW_S seconds; validate them "
                       "against the sites configured in DUST_VALIDATOR_SITES and publish rule sets; follow the "
                       "rules topic and canonicalize the frontier topic (seen flags); serve the HTTP API on "
                       "DUST_API_PORT (default 8870; docs/api.md).  All settings come from DUST_* environment "
                       "variables (stream/settings.py); flags override them.")
    w.add_argument("--data-dir", help="state directory (DUST_DATA_DIR)")
    w.add_argument("--window", type=float, help="window seconds (DUST_WINDOW_S)")
    w.add_argument("--bootstrap", help="Kafka bootstrap servers (DUST_KAFKA_BOOTSTRAP)")
    return w


def run(a: argparse.Namespace) -> int:
    import asyncio

    import faust

    from dustbuster.agents import register_all
    from dustbuster.stream.admin import ensure_topics
    from dustbuster.stream.app import create_app

    from dustbuster.agents import lograte

    class Worker(faust.Worker):
        def on_setup_root_logger(self, logger, level) -> None:
            super().on_setup_root_logger(logger, level)
            lograte.install(logger)  # repeated errors: one line per cause per interval, with a count

    settings = kafka_settings(a, data_dir=Path(a.data_dir) if a.data_dir else None, window_s=a.window)
    raise_fd_limit()
    asyncio.run(ensure_topics(settings))
    app = create_app(settings)
    ctx = None
    try:
        ctx = register_all(app, settings)  # closes what it opened itself when a part cannot be registered
        Worker(app, loglevel="info", logging_config=worker_logging(a.verbose), quiet=True).execute_from_commandline()
    finally:
        if ctx is not None:
            ctx.close()
    return 0


def raise_fd_limit() -> int:
    """The process's soft file-descriptor limit raised to its hard limit (many systems start at 1,024
    while allowing far more): the API's connections, RocksDB and Kafka share it.  Returns it."""
    import resource

    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft != hard:
        try:
            resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
            soft = hard
        except (ValueError, OSError) as exc:
            log.warning("could not raise the file-descriptor limit from %s to %s: %s", soft, hard, exc)
    return soft


def worker_logging(verbose: int) -> dict:
    """The worker logs what it does at INFO in plain words (windows, validation rounds, rule sets);
    the libraries under it only what means trouble.  ``mode.timers`` warns "Timer ... is
    overlapping" whenever the loop is busy at a commit tick; the worker measures real stalls itself
    (dust_event_loop_lag_max_seconds, dust_event_loop_stalls_total), so that one is at ERROR.
    -v shows the libraries' INFO, -vv their DEBUG."""
    third = "WARNING" if not verbose else "INFO" if verbose == 1 else "DEBUG"
    loggers = {name: {"level": third} for name in ("faust", "mode", "aiokafka", "kafka", "aiohttp", "rocksdict")}
    if not verbose:
        loggers["mode.timers"] = {"level": "ERROR"}
    return {"merge": True, "version": 1, "disable_existing_loggers": False, "loggers": loggers}
