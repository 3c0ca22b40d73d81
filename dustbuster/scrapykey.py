"""Scrapy's two other ways to use the rules: the canonical URL as the request's key, or as the URL
requested.  Both are imported from :mod:`dustbuster.scrapy`.

**Key-only** (:class:`DustRequestFingerprinter`): the URL fetched is the one linked; the request's
fingerprint is the fingerprint of its canonical URL, so Scrapy's duplicate filter, its HTTP cache
and ``JOBDIR`` all agree that two aliases are one page::

    REQUEST_FINGERPRINTER_CLASS = "dustbuster.scrapy.DustRequestFingerprinter"
    DUSTBUSTER_RULES = "rules.json"   # or a worker's API, or kafka://host:9092/dust-rules

A wrong rule costs a page not downloaded (its alias's fingerprint was seen); the URLs requested are
always ones the site linked.

**Rewrite** (:class:`DustLinks`): the URL requested is the canonical URL itself, for link
extractors (``LinkExtractor(process_value=links.process_value)``, or a CrawlSpider ``Rule``'s
``process_links=links.process_links``).  A wrong rule costs a wrong URL requested (and the page
it should have been); right rules save the redirects and aliases in the crawl's own URLs too.

A redirect that continues a fetch to its own canonical URL (``/old/story_5`` → 301 →
``/story_5``) gets a fingerprint of its own, so the duplicate filter does not drop the page.
Fingerprints are computed once per request object (Scrapy's contract) and kept in a
``WeakKeyDictionary``, as Scrapy's own fingerprinter does; the rules are read on the first
fingerprint and followed until the engine stops.
"""

from __future__ import annotations

import hashlib
import logging
from urllib.parse import urljoin
from weakref import WeakKeyDictionary

from scrapy import signals
from scrapy.utils.request import fingerprint

from .rulesource import LazyRules, LiveRules
from .scrapysettings import live_rules

log = logging.getLogger(__name__)


class _Lazy(LazyRules):
    """The rule source of a Scrapy component: (canonical URL, whether a rule changed it)."""

    def canonical(self, url: str) -> tuple[str, bool]:
        res = self.canonize(url)
        return res.canonical, bool(res.rules)


class DustRequestFingerprinter:
    """``REQUEST_FINGERPRINTER_CLASS``: Scrapy's fingerprint of the request's canonical URL."""

    def __init__(self, rules: LiveRules, stats=None) -> None:
        self._rules = _Lazy(rules)
        self.stats = stats
        self._cache: WeakKeyDictionary = WeakKeyDictionary()

    @classmethod
    def from_crawler(cls, crawler):
        fp = cls(live_rules(crawler.settings), crawler.stats)
        crawler.signals.connect(fp.engine_stopped, signal=signals.engine_stopped)
        return fp

    def engine_stopped(self) -> None:
        self._rules.stop()

    def _inc(self, key: str) -> None:
        if self.stats is not None:
            self.stats.inc_value(f"dustbuster/{key}")

    def fingerprint(self, request) -> bytes:
        cached = self._cache.get(request)
        if cached is None:
            cached = self._cache[request] = self._compute(request)
        return cached

    def _compute(self, request) -> bytes:
        canonical, rewritten = self._rules.canonical(request.url)
        self._inc("fingerprints")
        if rewritten:
            self._inc("rewritten")
        fp = fingerprint(request if canonical == request.url else request.replace(url=canonical))
        for earlier in request.meta.get("redirect_urls") or ():
            if self._rules.canonical(earlier)[0] == canonical:
                # the same fetch going on: a key of its own, or the filter would drop the page
                self._inc("redirects_continued")
                return hashlib.sha1(b"dustbuster-redirect\0" + fingerprint(request)).digest()
        return fp


class DustLinks:
    """Rewrite mode: the canonical URL of each extracted link is the URL requested.

    ``process_value(value)`` for a ``LinkExtractor``: an absolute URL is rewritten, and a
    root-relative one (``/x``) when ``base`` (the site's root URL) is given; a path-relative one is
    returned as it is (its page is not known there: give ``process_links`` to a CrawlSpider
    ``Rule`` instead, whose links are absolute).
    ``canonical(url)`` is the canonical URL of one absolute URL."""

    def __init__(self, rules: LiveRules | str, base: str = "") -> None:
        self._rules = _Lazy(rules if isinstance(rules, LiveRules) else LiveRules(rules))
        self.base = base
        self.rewritten = 0

    @classmethod
    def from_crawler(cls, crawler, base: str = "") -> "DustLinks":
        links = cls(live_rules(crawler.settings), base)
        crawler.signals.connect(links._rules.stop, signal=signals.engine_stopped)
        return links

    def canonical(self, url: str) -> str:
        canonical, rewritten = self._rules.canonical(url)
        self.rewritten += rewritten
        return canonical

    def process_value(self, value):
        if not isinstance(value, str) or not value.strip():
            return value
        url = value.strip()
        if url.startswith("/") and self.base:
            url = urljoin(self.base, url)  # "/x" and "//host/x" mean the same on every page of the site
        if not url.lower().startswith(("http://", "https://")):
            return value  # a path-relative link: its page's URL is not known here
        return self.canonical(url)

    def process_links(self, links):
        for link in links:
            link.url = self.canonical(link.url)
        return links

    def stop(self) -> None:
        self._rules.stop()
