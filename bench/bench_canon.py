"""Benchmark of canonicalization (issue 5): in-process URLs/s with a 100-rule set, side by side
with w3lib's ``canonicalize_url`` on the same URLs in the same run, and the HTTP batch API's
throughput and latency with 1,000-URL batches.

Rules: the 54 rules `dustbuster mine` finds in the synthetic forum log (bench/genlog.py, 200,000
lines: 51 substring + 3 parameter rules) plus 46 rules of the semicomplete.com log
(tests/data/logs) anchored at that host (``^http://semicomplete.com/...``, so never applicable to
forum URLs: they only load the automaton) = 100 rules in one set.  URLs: the forum log's 70,548 unique URLs (a crawl
frontier never repeats URLs much; normalization's cache is cleared before each run).

Measured, interleaved, ``--repeat`` times each, medians (one core: Python runs one thread):

* ``w3lib``: ``w3lib.url.canonicalize_url`` (sorts the query, normalizes percent-encoding);
* ``rules``: :class:`dust.canonize.Canonizer` (Figure 5.5, Aho–Corasick prefilter);
* ``normalize+rules``: :meth:`dust.rulebook.RuleBook.canonicalize` — what the workers and the API
  do: yarl RFC 3986 normalization, site lookup, rules, result record;
* ``normalize+rules, all via yarl``: the same with ``HTTP://`` URLs, which miss the "already
  normalized" fast path (dust/normalize.py), so every URL is parsed by yarl (worst case);
* ``figure-5.5``: :func:`dust.canonize.canonize`, the plain loop over every rule (reference);
* HTTP: ``agents.api.make_api`` served by a separate process on loopback; ``--requests`` POSTs of
  1,000 URLs at concurrency 1 and 4; URLs/s, p50 and p99 request latency.

    .venv/bin/pip install -e '.[bench]'      # w3lib
    .venv/bin/python bench/bench_canon.py [--repeat 5] [--requests 200]

Writes bench/out/bench_canon.json and prints a Markdown table.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "bench" / "out"
sys.path.insert(0, str(ROOT))


def rule_set() -> tuple[list, list[str]]:
    from bench.genlog import generate
    from dust.mine import mine
    from stream.reader import parse_lines, read_urllist
    from dust.urllist import URLList

    ul = URLList()
    for rec in parse_lines(list(generate(200_000, 1)), "www.forum.co.il").records:
        ul.add(*rec)
    forum = mine(ul)
    semi_ul, _ = read_urllist([ROOT / "tests/data/logs/semicomplete-apache/apache_logs"], site="semicomplete.com")
    semi = mine(semi_ul)
    rules = forum.param_rules() + forum.substring_rules()
    # another site's rules, anchored at its own host: never applicable here, only automaton entries
    # (its unanchored likely rules, like "/" → "", are never valid and would mangle every URL)
    rules += [r for r in semi.substring_rules() if r.anchor_start][: 100 - len(rules)]
    assert len(rules) == 100, len(rules)
    return rules, list(ul)


def doc_of(rules) -> dict:
    return {"site": "forum.co.il", "version": 1, "rules": [r.to_json() for r in rules]}


def timed(fn, urls) -> float:
    t0 = time.perf_counter()
    for u in urls:
        fn(u)
    return time.perf_counter() - t0


def in_process(rules, urls, repeat: int) -> dict:
    from w3lib.url import canonicalize_url

    from dust.canonize import Canonizer, canonize
    from dust.normalize import _normalize
    from dust.rulebook import RuleBook

    c = Canonizer(rules)
    book = RuleBook()
    book.update("forum.co.il", doc_of(rules))
    ref_urls = urls[:10000]
    runs: dict[str, list[float]] = {"w3lib": [], "rules": [], "normalize+rules": [],
                                    "normalize+rules, all via yarl": [], "figure-5.5": []}
    upper = ["HTTP" + u[4:] if u.startswith("http:") else u for u in urls]  # misses the fast path
    changed = sum(c(u) != u for u in urls)
    from dust.normalize import already_normal

    fast = sum(map(already_normal, urls))
    for _ in range(repeat):
        runs["w3lib"].append(len(urls) / timed(canonicalize_url, urls))
        runs["rules"].append(len(urls) / timed(c, urls))
        _normalize.cache_clear()
        runs["normalize+rules"].append(len(urls) / timed(book.canonicalize, urls))
        _normalize.cache_clear()
        runs["normalize+rules, all via yarl"].append(len(upper) / timed(book.canonicalize, upper))
        runs["figure-5.5"].append(len(ref_urls) / timed(lambda u: canonize(u, rules), ref_urls))
    return {"urls": len(urls), "changed_by_rules": changed, "rules": len(rules), "fast_path": fast,
            "urls_per_s": {k: statistics.median(v) for k, v in runs.items()}, "runs": runs}


SERVER = r"""
import asyncio, json, sys
sys.path.insert(0, {root!r})
from aiohttp import web
from agents.api import make_api
from dust.rulebook import RuleBook
from stream.metrics import Metrics
book = RuleBook()
book.update("forum.co.il", json.load(open({doc!r})))
web.run_app(make_api(book, Metrics(), max_batch=10000), host="127.0.0.1", port={port}, print=None, access_log=None)
"""


async def http_load(port: int, urls: list[str], requests: int, concurrency: int) -> dict:
    import aiohttp

    batches = [urls[(i * 1000) % (len(urls) - 1000):][:1000] for i in range(requests)]
    lat: list[float] = []
    async with aiohttp.ClientSession() as s:
        q = list(enumerate(batches))

        async def worker():
            while q:
                _, b = q.pop()
                t0 = time.perf_counter()
                async with s.post(f"http://127.0.0.1:{port}/canonicalize", json={"urls": b}) as r:
                    body = await r.read()
                    assert r.status == 200, body[:200]
                lat.append(time.perf_counter() - t0)

        # warm up
        async with s.post(f"http://127.0.0.1:{port}/canonicalize", json={"urls": batches[0]}) as r:
            await r.read()
        t0 = time.perf_counter()
        await asyncio.gather(*(worker() for _ in range(concurrency)))
        wall = time.perf_counter() - t0
    lat.sort()
    return {"concurrency": concurrency, "requests": requests, "batch": 1000, "urls_per_s": requests * 1000 / wall,
            "p50_ms": 1000 * lat[len(lat) // 2], "p99_ms": 1000 * lat[min(len(lat) - 1, int(len(lat) * 0.99))]}


def http(rules, urls, requests: int) -> list[dict]:
    from dustbuster.broker import free_port, port_open

    OUT.mkdir(parents=True, exist_ok=True)
    doc = OUT / "bench_canon_rules.json"
    doc.write_text(json.dumps(doc_of(rules)))
    port = free_port()
    proc = subprocess.Popen([sys.executable, "-c", SERVER.format(root=str(ROOT), doc=str(doc), port=port)])
    try:
        deadline = time.monotonic() + 30
        while not port_open(port):
            assert time.monotonic() < deadline and proc.poll() is None, "API server did not start"
            time.sleep(0.1)
        return [asyncio.run(http_load(port, urls, requests, c)) for c in (1, 4)]
    finally:
        proc.terminate()
        proc.wait(10)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--requests", type=int, default=200)
    a = ap.parse_args()
    rules, urls = rule_set()
    res = {"in_process": in_process(rules, urls, a.repeat), "http": http(rules, urls, a.requests)}
    OUT.mkdir(parents=True, exist_ok=True)
    (OUT / "bench_canon.json").write_text(json.dumps(res, indent=1))
    ip = res["in_process"]
    ups = ip["urls_per_s"]
    print(f"{ip['urls']:,} unique URLs, {ip['rules']} rules ({ip['changed_by_rules']:,} URLs changed by them; "
          f"{ip['fast_path']:,} already normalized); "
          f"medians of {a.repeat}\n")
    print("| canonicalizer | URLs/s (one core) | vs w3lib |\n|---|---:|---:|")
    for k, v in ups.items():
        print(f"| {k} | {v:,.0f} | {v / ups['w3lib']:.2f}× |")
    print("\n| HTTP POST /canonicalize, 1,000-URL batches | URLs/s | p50 ms | p99 ms |\n|---|---:|---:|---:|")
    for h in res["http"]:
        print(f"| concurrency {h['concurrency']}, {h['requests']} requests | {h['urls_per_s']:,.0f} | "
              f"{h['p50_ms']:.1f} | {h['p99_ms']:.1f} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
