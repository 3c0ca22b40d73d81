"""Scrapy crawls each page once: requests whose canonical URL was already seen are dropped.

``pip install 'dustbuster[scrapy]'``, then in the project's ``settings.py``::

    DUPEFILTER_CLASS = "dustbuster.scrapy.DustDupeFilter"
    DUSTBUSTER_RULES = "http://127.0.0.1:8870"   # a worker's API; or "rules.jsonl"; or "kafka://127.0.0.1:9092/dust-rules"
    DUSTBUSTER_TOKEN = "..."                      # when the workers have DUST_API_TOKEN (default: $DUST_API_TOKEN)
    DUSTBUSTER_TRUSTED_KEYS = ["<base64 public key>"]  # only sets the validator signed (default: $DUST_TRUSTED_KEYS)

:class:`DustDupeFilter` is Scrapy's own duplicate filter (``RFPDupeFilter``: fingerprints,
``JOBDIR`` persistence, ``dont_filter``) applied to each request's *canonical* URL: RFC 3986
normalization, then the site's validated rules (the same canonical URL as the workers give;
dustbuster.rulesource keeps every site's current set, admitted by the rule book).  A project that
keeps its own duplicate filter uses :class:`DustDownloaderMiddleware` instead, which drops a
request before download when a request with the same canonical URL was downloaded::

    DOWNLOADER_MIDDLEWARES = {"dustbuster.scrapy.DustDownloaderMiddleware": 650}

(650: nearer the downloader than Scrapy's RedirectMiddleware, 600, so that it sees a redirect response before that one follows it.)

Scrapy stats (``dustbuster/...``): ``requests`` checked, ``rewritten`` (changed by the site's
rules), ``duplicates_dropped`` (canonical URL seen before), ``downloads_saved`` (of those, the
ones Scrapy's own filter would have downloaded: its fingerprint of the URL itself was new),
``rule_sets`` (sites with rules at the end), ``rule_sets_refused`` (sets the admission refused).

Settings: ``DUSTBUSTER_RULES`` (required), ``DUSTBUSTER_TOKEN``, ``DUSTBUSTER_REFRESH_S`` (API
polling, 30), ``DUSTBUSTER_NORMALIZE`` (True), ``DUSTBUSTER_WAIT_S`` (how long the spider's start
waits for the rules, 30), ``DUSTBUSTER_TRUSTED_KEYS`` (the validator's public keys, a list or a
comma-separated string; refused sets count under ``rule_sets_refused``; docs/canonizer.md "Signed
rule sets").

The filter on its own, with a rules file (what ``dustbuster rules --json`` or ``validate -o``
writes):

>>> import json, os, tempfile
>>> from scrapy import Request
>>> from scrapy.utils.test import get_crawler
>>> rules = os.path.join(tempfile.mkdtemp(), "rules.json")
>>> _ = open(rules, "w").write(json.dumps({"site": "forum.test", "version": 1, "rules": [
...     {"type": "parameter", "name": "sid", "action": "remove", "status": "valid"}]}))
>>> df = DustDupeFilter.from_crawler(get_crawler(settings_dict={"DUSTBUSTER_RULES": rules}))
>>> df.open()
>>> df.request_seen(Request("http://forum.test/story?id=5&sid=1"))
False
>>> df.request_seen(Request("http://forum.test/story?id=5&sid=2"))   # the same page: dropped
True
>>> df.close("finished")
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING
from urllib.parse import urljoin

from scrapy import signals
from scrapy.dupefilters import RFPDupeFilter
from scrapy.exceptions import IgnoreRequest
from scrapy.utils.job import job_dir


from .rulesource import LiveRules
from .scrapykey import DustLinks, DustRequestFingerprinter  # key-only and rewrite modes, importable from here
from .scrapysettings import live_rules

if TYPE_CHECKING:
    from scrapy.utils.request import RequestFingerprinterProtocol

log = logging.getLogger(__name__)


class _Counting:
    """What both classes count in Scrapy's stats."""

    stats = None
    rules: LiveRules
    fingerprinter: RequestFingerprinterProtocol  #: Scrapy's (the crawler's ``request_fingerprinter``)

    def _inc(self, key: str, n: int = 1) -> None:
        if self.stats is not None:
            self.stats.inc_value(f"dustbuster/{key}", n)

    def _canonical(self, request):
        """``(request with the canonical URL, rules applied?)``"""
        res = self.rules.canonize(request.url)
        self._inc("requests")
        if res.rules:
            self._inc("rewritten")
        return (request if res.canonical == request.url else request.replace(url=res.canonical)), bool(res.rules)

    def _continues_a_fetch(self, request, fp: bytes) -> bool:
        """A redirect whose target has the canonical URL of a URL earlier in its own redirect chain
        (``/old/story_5`` → 301 → ``/story_5``, both canonically ``/story_5``) is the same fetch going
        on, not a duplicate: dropping it would lose the page."""
        for url in request.meta.get("redirect_urls") or ():
            earlier = request.replace(url=self.rules.canonize(url).canonical)
            if self.fingerprinter.fingerprint(earlier) == fp:
                return True
        return False

    def _summary(self) -> None:
        versions = self.rules.versions()
        if self.stats is not None:
            self.stats.set_value("dustbuster/rule_sets", len(versions))
            self.stats.set_value("dustbuster/rule_sets_refused", sum(self.rules.refused.values()))
            get = self.stats.get_value
            log.info("dustbuster: %s duplicate requests dropped (%s downloads saved), rules of %s sites (%s)",
                     get("dustbuster/duplicates_dropped", 0), get("dustbuster/downloads_saved", 0), len(versions),
                     ", ".join(f"{s} v{v}" for s, v in sorted(versions.items())))


class DustDupeFilter(_Counting, RFPDupeFilter):
    """``DUPEFILTER_CLASS``: Scrapy's duplicate filter on the requests' canonical URLs."""

    _plain: set[bytes]  #: the fingerprints of the requests' own URLs (set in from_crawler)

    @classmethod
    def from_crawler(cls, crawler):
        df = cls(job_dir(crawler.settings), crawler.settings.getbool("DUPEFILTER_DEBUG"),
                 fingerprinter=crawler.request_fingerprinter)
        df.rules = live_rules(crawler.settings)
        df.stats = crawler.stats
        df._plain = set()
        return df

    def open(self):
        self.rules.start()
        return super().open()

    def request_seen(self, request) -> bool:
        plain = self.fingerprinter.fingerprint(request)
        canonical, _ = self._canonical(request)
        if self._continues_a_fetch(request, self.fingerprinter.fingerprint(canonical)):
            return False
        seen = super().request_seen(canonical)
        if seen:
            self._inc("duplicates_dropped")
            if plain not in self._plain:
                self._inc("downloads_saved")
        self._plain.add(plain)
        return seen

    def close(self, reason):
        self._summary()
        self.rules.stop()
        return super().close(reason)


class DustDownloaderMiddleware(_Counting):
    """``DOWNLOADER_MIDDLEWARES``: a request whose canonical URL was already downloaded is dropped
    (``IgnoreRequest``) before download; ``dont_filter`` requests and the redirects of a fetch to
    its own canonical URL pass.  Its priority must be above RedirectMiddleware's (600)."""

    PATH = "dustbuster.scrapy.DustDownloaderMiddleware"

    def __init__(self, rules: LiveRules, stats, fingerprinter) -> None:
        self.rules, self.stats, self.fingerprinter = rules, stats, fingerprinter
        self.seen: set[bytes] = set()

    @classmethod
    def from_crawler(cls, crawler):
        mw = cls(live_rules(crawler.settings), crawler.stats, crawler.request_fingerprinter)
        crawler.signals.connect(mw.spider_opened, signal=signals.spider_opened)
        crawler.signals.connect(mw.spider_closed, signal=signals.spider_closed)
        priority = crawler.settings.getwithbase("DOWNLOADER_MIDDLEWARES").get(cls.PATH)
        if isinstance(priority, (int, float)) and priority <= 600:
            log.warning("%s has priority %s: give it more than RedirectMiddleware's 600 (e.g. 650), or a page "
                        "reached through a redirect to its canonical URL can be lost", cls.PATH, priority)
        return mw

    def spider_opened(self, spider=None) -> None:
        self.rules.start()

    def spider_closed(self, spider=None, reason=None) -> None:
        self._summary()
        self.rules.stop()

    def process_request(self, request, spider=None):
        if request.dont_filter:
            return None
        canonical, _ = self._canonical(request)
        fp = self.fingerprinter.fingerprint(canonical)
        if fp in self.seen and not self._continues_a_fetch(request, fp):
            self._inc("duplicates_dropped")
            self._inc("downloads_saved")  # Scrapy's own filter let it through: it would have been downloaded
            raise IgnoreRequest(f"dustbuster: same canonical URL as an earlier request: {canonical.url}")
        self.seen.add(fp)
        return None

    def process_response(self, request, response, spider=None):
        """Before RedirectMiddleware: a redirect to this request's own canonical URL is the same
        fetch going on.  Scrapy's duplicate filter already saw that URL (as a request this
        middleware then dropped), so the redirect must pass it: ``dont_filter``, which the
        redirected request inherits."""
        location = response.headers.get(b"Location") if 300 <= response.status < 400 else None
        if location and not request.dont_filter:
            target = request.replace(url=self.rules.canonize(urljoin(request.url, location.decode("latin-1"))).canonical)
            here = request.replace(url=self.rules.canonize(request.url).canonical)
            if self.fingerprinter.fingerprint(target) == self.fingerprinter.fingerprint(here):
                request.dont_filter = True
        return response


__all__ = ["DustDownloaderMiddleware", "DustDupeFilter", "DustLinks", "DustRequestFingerprinter", "live_rules"]
