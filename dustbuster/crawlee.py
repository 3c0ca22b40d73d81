"""Crawlee for Python crawls each page once: a request's ``unique_key`` is its canonical URL.

``pip install 'dustbuster[crawlee]'``, then::

    from crawlee.crawlers import BeautifulSoupCrawler
    from dustbuster.crawlee import DustKeys

    keys = DustKeys("rules.json")          # or "http://127.0.0.1:8870" (token=...), or "kafka://127.0.0.1:9092/dust-rules"
    crawler = BeautifulSoupCrawler()

    @crawler.router.default_handler
    async def handler(context):
        await context.enqueue_links(transform_request_function=keys.transform)

    await crawler.run([keys.request(u) for u in seeds])
    keys.stop()

Crawlee's request queue drops a request whose ``unique_key`` it holds already, so two aliases of a
page are downloaded once; the URL fetched is the one linked (key-only mode, as
:class:`dustbuster.scrapy.DustRequestFingerprinter`: a wrong rule costs a page not downloaded).
The rules come from a file, a worker's API or the rules topic, through the rule book's admission
(:class:`dustbuster.rulesource.LiveRules`), read on first use.  Only GET requests without a key of
their own are keyed; others keep Crawlee's.

>>> import json, os, tempfile
>>> rules = os.path.join(tempfile.mkdtemp(), "rules.json")
>>> _ = open(rules, "w").write(json.dumps({"site": "forum.test", "version": 1, "rules": [
...     {"type": "parameter", "name": "sid", "action": "remove", "status": "valid"}]}))
>>> keys = DustKeys(rules, keys="")
>>> keys.request("http://forum.test/story?id=5&sid=9").unique_key
'http://forum.test/story?id=5'
>>> keys.stop()
"""

from __future__ import annotations

import logging
import os
from collections import Counter

from crawlee import Request

from .rulesource import LazyRules, LiveRules

log = logging.getLogger(__name__)


class DustKeys:
    """Canonical ``unique_key``s for Crawlee requests; ``counts``: ``requests``, ``rewritten``."""

    def __init__(self, rules: LiveRules | str, token: str = "", refresh_s: float = 30.0, wait_s: float = 30.0,
                 keys: str | list[str] | None = None, keys_file: str | None = None) -> None:
        """``keys``: the validator's trusted public keys (default: ``$DUST_TRUSTED_KEYS``); when set,
        only signed rule sets are applied (docs/canonizer.md "Signed rule sets")."""
        keys = os.environ.get("DUST_TRUSTED_KEYS", "") if keys is None else keys
        keys_file = os.environ.get("DUST_TRUSTED_KEYS_FILE") if keys_file is None else keys_file
        self.rules = rules if isinstance(rules, LiveRules) else LiveRules(rules, token=token, refresh_s=refresh_s,
                                                                           wait_s=wait_s, keys=keys, keys_file=keys_file)
        self.counts: Counter[str] = Counter()
        self._lazy = LazyRules(self.rules)

    def unique_key(self, url: str) -> str:
        """The canonical URL of ``url`` (absolute)."""
        res = self._lazy.canonize(url)
        self.counts["requests"] += 1
        if res.rules:
            self.counts["rewritten"] += 1
        return res.canonical

    def transform(self, options):
        """``transform_request_function`` of ``enqueue_links``: the options with ``unique_key`` set."""
        if options.get("unique_key") or str(options.get("method") or "GET").upper() != "GET":
            return options
        options["unique_key"] = self.unique_key(options["url"])
        return options

    def request(self, url: str, **kw) -> Request:
        """``Request.from_url`` with the canonical URL as its ``unique_key``."""
        if "unique_key" not in kw and str(kw.get("method", "GET")).upper() == "GET":
            kw["unique_key"] = self.unique_key(url)
        return Request.from_url(url, **kw)

    def stop(self) -> None:
        if self._lazy.started:
            self._lazy.stop()
            log.info("dustbuster: %s Crawlee requests keyed, %s by a site's rules", self.counts["requests"],
                     self.counts["rewritten"])
