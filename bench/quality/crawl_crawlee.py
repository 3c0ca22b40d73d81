"""One real Crawlee-for-Python crawl (ParselCrawler, no browser) of a quality-harness site, run by
bench/quality/crawls.py.

    python bench/quality/crawl_crawlee.py SEEDS OUT [--rules FILE] [--max N]

From the seeds, every link of the harness's domain is enqueued; the hosts (*.quality.test) are
reached through dustdev.loopproxy on 127.0.0.1.  With --rules, every request's unique_key is
its canonical URL (dustbuster.crawlee.DustKeys).  OUT: JSON with every page (URL, status, content
signature) and the counts.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import logging
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from crawlee import ConcurrencySettings  # noqa: E402
from crawlee.crawlers import ParselCrawler  # noqa: E402
from crawlee.proxy_configuration import ProxyConfiguration  # noqa: E402
from crawlee.storage_clients import MemoryStorageClient  # noqa: E402

from dustbuster.core.report.truth import signature  # noqa: E402
from dustdev.loopproxy import LoopbackProxy  # noqa: E402


async def crawl(seeds: list[str], rules: str, most: int, proxy: str) -> dict:
    keys = None
    if rules:
        from dustbuster.crawlee import DustKeys

        keys = DustKeys(rules)
    out: list[dict] = []
    crawler = ParselCrawler(storage_client=MemoryStorageClient(), proxy_configuration=ProxyConfiguration(proxy_urls=[proxy]),
                            concurrency_settings=ConcurrencySettings(min_concurrency=4, max_concurrency=8, desired_concurrency=8),
                            max_request_retries=1, max_requests_per_crawl=most, configure_logging=False,
                            ignore_http_error_status_codes=list(range(400, 600)))

    @crawler.router.default_handler
    async def handler(context) -> None:
        body = await context.http_response.read()
        ctype = context.http_response.headers.get("content-type", "") or "text/html"
        out.append({"url": context.request.url, "response_url": context.request.loaded_url or context.request.url,
                    "status": context.http_response.status_code, "sig": signature(body, ctype).to_json()})
        if "html" in ctype:
            await context.enqueue_links(strategy="same-domain",
                                        transform_request_function=keys.transform if keys else None)

    stats = await crawler.run([keys.request(u) for u in seeds] if keys else seeds)
    if keys:
        keys.stop()
    return {"responses": out, "stats": {"requests_finished": stats.requests_finished,
                                        "requests_failed": stats.requests_failed,
                                        **({f"dustbuster/{k}": v for k, v in keys.counts.items()} if keys else {})}}


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("seeds")
    ap.add_argument("out")
    ap.add_argument("--rules", default="")
    ap.add_argument("--max", type=int, default=3000)
    a = ap.parse_args()
    logging.basicConfig(level=logging.INFO)
    logging.getLogger("crawlee").setLevel(logging.WARNING)
    seeds = [u for u in Path(a.seeds).read_text().splitlines() if u]
    with LoopbackProxy((".quality.test",)) as proxy:
        doc = asyncio.run(crawl(seeds, a.rules, a.max, proxy.url))
    Path(a.out).write_text(json.dumps(doc))
    return 0


if __name__ == "__main__":
    sys.exit(main())
