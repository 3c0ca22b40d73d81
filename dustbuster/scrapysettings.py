"""The rule source a Scrapy project's settings name (``DUSTBUSTER_RULES`` and the settings beside it,
docs/crawls.md), shared by the dupefilter of :mod:`dustbuster.scrapy` and the fingerprinter and
link rewriter of :mod:`dustbuster.scrapykey`.  Beyond the papers."""

from __future__ import annotations

import os

from dustbuster.core.errors import ConfigError

from .rulesource import LiveRules


def live_rules(settings) -> LiveRules:
    """The rule source a crawler's settings name (not started)."""
    source = settings.get("DUSTBUSTER_RULES")
    if not source:
        raise ConfigError("DUSTBUSTER_RULES is not set: a rules file, a worker's API (http://127.0.0.1:8870) "
                          "or the rules topic (kafka://127.0.0.1:9092/dust-rules)")
    return LiveRules(str(source), token=settings.get("DUSTBUSTER_TOKEN") or os.environ.get("DUST_API_TOKEN", ""),
                     refresh_s=settings.getfloat("DUSTBUSTER_REFRESH_S", 30.0),
                     normalize=settings.getbool("DUSTBUSTER_NORMALIZE", True),
                     wait_s=settings.getfloat("DUSTBUSTER_WAIT_S", 30.0),
                     keys=settings.getlist("DUSTBUSTER_TRUSTED_KEYS") or os.environ.get("DUST_TRUSTED_KEYS", ""),
                     keys_file=settings.get("DUSTBUSTER_TRUSTED_KEYS_FILE") or os.environ.get("DUST_TRUSTED_KEYS_FILE"))
