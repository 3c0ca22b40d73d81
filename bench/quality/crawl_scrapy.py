"""One real Scrapy crawl of a quality-harness site (run by bench/quality/crawls.py, one process each:
Twisted's reactor runs once per process).

    python bench/quality/crawl_scrapy.py SEEDS OUT --mode plain|key|rewrite|hand|truth [--rules FILE]
                                         [--app APP] [--truth-map FILE] [--max N] [--bfs]

From the seeds, every link of the site's hosts (*.quality.test, any port: the seeds name every
origin of the site, resolved to 127.0.0.1 here) is followed.  plain: Scrapy as it is; key: DustRequestFingerprinter (the URL linked fetched, the
canonical URL's fingerprint); rewrite: DustLinks.process_links (the canonical URL requested);
hand: HandFingerprinter, the hand-written canonicalizer of --app (bench/quality/handcanon.py, the
ceiling; bench only); truth: TruthFingerprinter, the content truth as the key (--truth-map: a
URL's content cluster, bench/quality/crawleff.py; completed by --app's hand-written canonicalizer
where the truth does not know a URL; the best any canonicalizer could do).  --bfs: breadth-first (Scrapy's documented FIFO settings: DEPTH_PRIORITY 1,
the FIFO queues; Scrapy's default order is depth-first).
OUT: JSON with every page (first URL, response URL, status, content signature) and Scrapy's stats.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from urllib.parse import urlsplit

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

import scrapy  # noqa: E402
from scrapy.crawler import CrawlerProcess  # noqa: E402
from scrapy.http import TextResponse  # noqa: E402
from scrapy.linkextractors import LinkExtractor  # noqa: E402
from scrapy.resolver import CachingThreadedResolver  # noqa: E402
from twisted.internet import defer  # noqa: E402

from dustbuster.core.report.truth import signature  # noqa: E402

DOMAIN = "quality.test"


class LoopbackResolver(CachingThreadedResolver):
    """The harness's host names are on 127.0.0.1; nothing else is resolved."""

    def getHostByName(self, name, timeout=()):  # noqa: N802 (Twisted's name)
        if name == DOMAIN or name.endswith("." + DOMAIN):
            return defer.succeed("127.0.0.1")
        return defer.fail(OSError(f"{name} is not a harness host"))


def on_site(url: str) -> bool:
    host = urlsplit(url).hostname or ""
    return host == DOMAIN or host.endswith("." + DOMAIN)


class HandFingerprinter:
    """``REQUEST_FINGERPRINTER_CLASS`` keyed by the app's hand-written canonical URL (setting HAND_APP);
    a redirect continuing to the same canonical URL gets a key of its own, as DustRequestFingerprinter
    does, or the filter would drop the page."""

    def __init__(self, app: str) -> None:
        import handcanon  # bench/quality/handcanon.py

        self.canon = handcanon.CANONICALIZERS[app]

    @classmethod
    def from_crawler(cls, crawler):
        return cls(crawler.settings.get("HAND_APP"))

    def fingerprint(self, request) -> bytes:
        import hashlib

        from scrapy.utils.request import fingerprint

        canonical = self.canon(request.url)
        if any(self.canon(u) == canonical for u in request.meta.get("redirect_urls") or ()):
            return hashlib.sha1(b"hand-redirect\0" + fingerprint(request)).digest()
        return fingerprint(request.replace(url=canonical))


class TruthFingerprinter:
    """``REQUEST_FINGERPRINTER_CLASS`` keyed by the content truth (setting TRUTH_MAP: a JSON object,
    URL -> content cluster, written by bench/quality/crawleff.py from the other crawls of the run;
    HAND_APP: the app).  A URL's key is its content when the map knows the URL, else the content of
    its hand-written canonical form (handcanon.py, which merges only URLs of one page) when the map
    knows a URL of that form, else that canonical form itself; a redirect continuing to a URL of
    the same key gets a key of its own, as HandFingerprinter's does."""

    def __init__(self, path: str, app: str) -> None:
        import handcanon  # bench/quality/handcanon.py

        self.canon = handcanon.CANONICALIZERS[app]
        self.content: dict[str, int] = json.loads(Path(path).read_text())
        by_form: dict[str, set[int]] = {}
        for u, c in self.content.items():
            by_form.setdefault(self.canon(u), set()).add(c)
        self.form_content = {f: next(iter(cs)) for f, cs in by_form.items() if len(cs) == 1}

    @classmethod
    def from_crawler(cls, crawler):
        return cls(crawler.settings.get("TRUTH_MAP"), crawler.settings.get("HAND_APP"))

    def key(self, url: str) -> str:
        c = self.content.get(url)
        if c is not None:
            return f"content {c}"
        form = self.canon(url)
        c = self.form_content.get(form)
        return f"content {c}" if c is not None else f"url {form}"

    def fingerprint(self, request) -> bytes:
        import hashlib

        from scrapy.utils.request import fingerprint

        k = self.key(request.url)
        if any(self.key(u) == k for u in request.meta.get("redirect_urls") or ()):
            return hashlib.sha1(b"truth-redirect\0" + fingerprint(request)).digest()
        return hashlib.sha1(k.encode()).digest()


class SiteSpider(scrapy.Spider):
    name = "site"

    def __init__(self, seeds: list[str], out: list, rewrite: str = "", **kw) -> None:
        super().__init__(**kw)
        self.seeds, self.out = seeds, out
        self.extractor = LinkExtractor()  # every link; the site's hosts kept in parse (allow_domains compares host:port)
        self.links = None
        if rewrite:
            from dustbuster.scrapy import DustLinks

            self.links = DustLinks(rewrite)
            self.seeds = [self.links.canonical(u) for u in seeds]

    async def start(self):
        for u in self.seeds:
            yield scrapy.Request(u, callback=self.parse)

    def parse(self, response):
        first = (response.request.meta.get("redirect_urls") or [response.request.url])[0]
        ctype = response.headers.get(b"Content-Type", b"").decode("latin-1")
        self.out.append({"url": first, "response_url": response.url, "status": response.status,
                         "sig": signature(response.body, ctype or "text/html").to_json()})
        if not isinstance(response, TextResponse):
            return
        links = [x for x in self.extractor.extract_links(response) if on_site(x.url)]
        if self.links is not None:
            links = self.links.process_links(links)
        for link in links:
            yield scrapy.Request(link.url, callback=self.parse)


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("seeds")
    ap.add_argument("out")
    ap.add_argument("--mode", choices=("plain", "key", "rewrite", "hand", "truth"), default="plain")
    ap.add_argument("--truth-map", default="", help="--mode truth: JSON, URL -> content cluster")
    ap.add_argument("--app", default="", help="the app whose hand-written canonicalizer --mode hand uses")
    ap.add_argument("--bfs", action="store_true", help="breadth-first order (default: Scrapy's, depth-first)")
    ap.add_argument("--rules", default="")
    ap.add_argument("--max", type=int, default=3000)
    a = ap.parse_args()
    settings = {
        "DNS_RESOLVER": "crawl_scrapy.LoopbackResolver", "ROBOTSTXT_OBEY": False, "TELNETCONSOLE_ENABLED": False,
        "LOG_LEVEL": "INFO", "RETRY_ENABLED": False, "CONCURRENT_REQUESTS": 8, "CONCURRENT_REQUESTS_PER_DOMAIN": 8,
        "DOWNLOAD_DELAY": 0, "DOWNLOAD_TIMEOUT": 60, "HTTPERROR_ALLOW_ALL": True, "COOKIES_ENABLED": False,
        "CLOSESPIDER_PAGECOUNT": a.max, "DUSTBUSTER_RULES": a.rules,
    }
    if a.mode == "key":
        settings["REQUEST_FINGERPRINTER_CLASS"] = "dustbuster.scrapy.DustRequestFingerprinter"
    elif a.mode == "hand":
        settings["REQUEST_FINGERPRINTER_CLASS"] = "crawl_scrapy.HandFingerprinter"
        settings["HAND_APP"] = a.app
    elif a.mode == "truth":
        settings["REQUEST_FINGERPRINTER_CLASS"] = "crawl_scrapy.TruthFingerprinter"
        settings["TRUTH_MAP"] = a.truth_map
        settings["HAND_APP"] = a.app
    if a.bfs:  # https://docs.scrapy.org/en/latest/faq.html "Does Scrapy crawl in breadth-first or depth-first order?"
        settings |= {"DEPTH_PRIORITY": 1, "SCHEDULER_DISK_QUEUE": "scrapy.squeues.PickleFifoDiskQueue",
                     "SCHEDULER_MEMORY_QUEUE": "scrapy.squeues.FifoMemoryQueue"}
    seeds = [u for u in Path(a.seeds).read_text().splitlines() if u]
    out: list = []
    process = CrawlerProcess(settings)
    crawler = process.create_crawler(SiteSpider)
    process.crawl(crawler, seeds=seeds, out=out, rewrite=a.rules if a.mode == "rewrite" else "")
    process.start()
    stats = {k: (v if isinstance(v, (int, float, str)) else str(v)) for k, v in crawler.stats.get_stats().items()}
    Path(a.out).write_text(json.dumps({"responses": out, "stats": stats}))
    return 0


if __name__ == "__main__":
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    sys.exit(main())
