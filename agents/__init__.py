"""Thin Faust agents: decode, call dust/ and state/, send.  ``register_all`` wires them to an app."""

from __future__ import annotations

from .ingest import register as register_ingest
from .validator import register as register_validator
from .windows import register as register_windows


def register_all(app, settings, topics, stores) -> None:
    register_ingest(app, settings, topics, stores)
    register_windows(app, settings, topics, stores)
    if settings.validate:
        register_validator(app, settings, topics, stores)
