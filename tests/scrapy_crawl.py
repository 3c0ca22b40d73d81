"""A real Scrapy crawl of the simulator on loopback, run as its own process by tests/test_scrapy.py
(Twisted's reactor runs once per process).

    python tests/scrapy_crawl.py SEEDS OUT [--dupefilter | --middleware | --fingerprinter | --rewrite]
                                 [--rules SOURCE] [--token T]

--fingerprinter: key-only (DustRequestFingerprinter); --rewrite: each seed, as a link, requested at
its canonical URL (DustLinks.process_value, as a link extractor would call it).

SEEDS: one URL a line (hosts *.forum.test, resolved to 127.0.0.1 here); OUT: JSON with every
response (request URL, response URL, status) and Scrapy's stats.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import scrapy  # noqa: E402
from scrapy.crawler import CrawlerProcess  # noqa: E402
from scrapy.resolver import CachingThreadedResolver  # noqa: E402
from twisted.internet import defer  # noqa: E402


class LoopbackResolver(CachingThreadedResolver):
    """The simulator's host names (*.forum.test) are on 127.0.0.1; nothing else is resolved."""

    def getHostByName(self, name, timeout=()):  # noqa: N802 (Twisted's name)
        if name == "forum.test" or name.endswith(".forum.test") or name in ("127.0.0.1", "localhost"):
            return defer.succeed("127.0.0.1")
        return defer.fail(OSError(f"{name} is not a test host"))


class SeedSpider(scrapy.Spider):
    name = "seeds"

    def __init__(self, seeds: list[str], out: list, rewrite: str = "", **kw) -> None:
        super().__init__(**kw)
        self.seeds, self.out = seeds, out
        if rewrite:
            from dustbuster.scrapy import DustLinks

            links = DustLinks(rewrite)
            self.seeds = [links.process_value(u) for u in seeds]
            links.stop()

    async def start(self):
        for u in self.seeds:
            yield scrapy.Request(u, callback=self.parse)

    def start_requests(self):  # Scrapy < 2.13
        for u in self.seeds:
            yield scrapy.Request(u, callback=self.parse)

    def parse(self, response):
        first = (response.request.meta.get("redirect_urls") or [response.request.url])[0]
        self.out.append({"url": first, "response_url": response.url, "status": response.status})


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("seeds")
    ap.add_argument("out")
    ap.add_argument("--dupefilter", action="store_true")
    ap.add_argument("--middleware", action="store_true")
    ap.add_argument("--fingerprinter", action="store_true")
    ap.add_argument("--rewrite", action="store_true")
    ap.add_argument("--rules", default="")
    ap.add_argument("--token", default="")
    a = ap.parse_args()
    settings = {
        "DNS_RESOLVER": "tests.scrapy_crawl.LoopbackResolver",
        "ROBOTSTXT_OBEY": False, "TELNETCONSOLE_ENABLED": False, "LOG_LEVEL": "INFO", "RETRY_ENABLED": False,
        "CONCURRENT_REQUESTS": 16, "CONCURRENT_REQUESTS_PER_DOMAIN": 16, "DOWNLOAD_DELAY": 0,
        "DOWNLOAD_TIMEOUT": 60, "HTTPERROR_ALLOW_ALL": True, "COOKIES_ENABLED": False,
        "DUSTBUSTER_RULES": a.rules, "DUSTBUSTER_TOKEN": a.token, "DUSTBUSTER_REFRESH_S": 1.0,
    }
    if a.dupefilter:
        settings["DUPEFILTER_CLASS"] = "dustbuster.scrapy.DustDupeFilter"
    if a.middleware:
        settings["DOWNLOADER_MIDDLEWARES"] = {"dustbuster.scrapy.DustDownloaderMiddleware": 650}
    if a.fingerprinter:
        settings["REQUEST_FINGERPRINTER_CLASS"] = "dustbuster.scrapy.DustRequestFingerprinter"
    seeds = [u for u in Path(a.seeds).read_text().splitlines() if u]
    out: list = []
    process = CrawlerProcess(settings)
    crawler = process.create_crawler(SeedSpider)
    process.crawl(crawler, seeds=seeds, out=out, rewrite=a.rules if a.rewrite else "")
    process.start()
    stats = {k: (v if isinstance(v, (int, float, str)) else str(v)) for k, v in crawler.stats.get_stats().items()}
    Path(a.out).write_text(json.dumps({"responses": out, "stats": stats}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
