"""``dustbuster truth``: the content ground truth of a log — every unique 2xx URL fetched once with
the validator's fetcher and policy, sketched as the validator does, and clustered by content
(dustbuster.core.report.truth).  One JSON line per URL; resumable; every failure counted and listed."""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
import time
from collections import Counter
from contextvars import ContextVar
from pathlib import Path

from dustbuster.core.errors import ConfigError, DustError

from . import progress as prog

EPILOG = """\
examples:
  dustbuster truth access.log --site www.example.com --sites sites.json -o truth.jsonl
  dustbuster truth access.log --site www.example.com --sites sites.json -o truth.jsonl   # again: resumes
  dustbuster eval --truth truth.jsonl rules.json                    # then score rule sets against it
Each line of the output: url, ok, status, reason (of a failure; soft_error: the page matches the
site's answer to URLs that cannot exist, found with the validator's probes), content_type, size,
redirected, final_url, title, canonical and robots (what the page declares), sketch (the validator's
4 min-hashes), signature (256 min-hashes, or a digest for non-text), cluster (same number = same
page: estimated shingle resemblance >= --threshold and the same title after normalisation), class
(first path segment).  A second run fetches only the URLs that have no record yet, or whose fetch failed for a
passing reason (timeout, connection, 5xx); --refetch fetches everything again.
sites.json is the validator's fetch policy (see `dustbuster validate --help`).
"""

#: failure reasons worth another try on the next run (the others are answers: 404, robots, ...)
TRANSIENT = frozenset({"timeout", "connection_failed", "site_down", "http_error", "status_429"})
_CAPTURE: ContextVar[list | None] = ContextVar("dust_truth_capture", default=None)


def add_parser(sub, common) -> argparse.ArgumentParser:
    t = sub.add_parser("truth", parents=[common], help="fetch every page of a log once and cluster them by content",
                       description="The content ground truth of a log: each unique 2xx URL is fetched once with "
                       "the validator's fetcher and policy (configured origins only, robots.txt, rate, size cap), "
                       "sketched as the validator does, and URLs whose pages show the same content are clustered. "
                       "Prints how much DUST the log has and where (per URL class).",
                       epilog=EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter)
    t.add_argument("logs", nargs="+", metavar="LOG", help="log files (.gz ok; - for stdin)")
    t.add_argument("--site", required=True, help="the site: its key in --sites, and the host of lines that carry none")
    t.add_argument("--sites", required=True, metavar="SITES.json", help="fetch policy per site (origins, rate, ...)")
    t.add_argument("-o", "--output", required=True, metavar="TRUTH.jsonl", help="the truth file (resumed if present)")
    t.add_argument("--scheme", default="http", choices=("http", "https"), help="scheme for lines without one")
    t.add_argument("--format", default="auto", help="log format (default auto; see `mine --help`)")
    t.add_argument("--threshold", type=float, default=0.9,
                   help="estimated shingle resemblance for 'same content' (default %(default)s)")
    t.add_argument("--max-urls", type=int, default=0, metavar="N",
                   help="fetch at most the first N distinct 2xx URLs of the logs: the fetch budget when the truth is "
                   "training data for `dustbuster learn` (default: every URL)")
    t.add_argument("--refetch", action="store_true", help="fetch every URL again, ignoring the records in the file")
    t.add_argument("--no-soft-errors", action="store_true",
                   help="keep pages that look like the site's answer to a page that cannot exist")
    return t


def log_urls(logs: list[str], fmt: str, site: str, scheme: str) -> tuple[list[str], dict]:
    """Unique URLs of the logs whose status is 2xx (or unknown), in order of first appearance."""
    from dustbuster.logs.record import Limits
    from dustbuster.logs.reader import ReadStats, iter_records

    stats = ReadStats()
    seen: dict[str, None] = {}
    for rec in iter_records(logs, fmt, site, scheme, limits=Limits(), stats=stats):
        if rec.status is None or 200 <= rec.status < 300:
            seen.setdefault(rec.url, None)
    return list(seen), stats.to_dict()


def read_records(path: Path) -> dict[str, dict]:
    """The records of an earlier run (a line cut by an interruption is ignored)."""
    out: dict[str, dict] = {}
    if not path.exists():
        return out
    with open(path, encoding="utf-8") as fh:
        for line in fh:
            try:
                d = json.loads(line)
            except ValueError:
                continue
            if isinstance(d, dict) and isinstance(d.get("url"), str):
                out[d["url"]] = d
    return out


def done(rec: dict | None) -> bool:
    return rec is not None and (rec.get("ok") or rec.get("reason") not in TRANSIENT
                                and not str(rec.get("reason", "")).startswith("status_5"))


def _fetcher_class():
    from dustbuster.fetch.client import Fetcher

    class BodyFetcher(Fetcher):
        """The validator's Fetcher, keeping the last response body of each fetch for the signature.
        (dustbuster.fetch.client returns only the validator's 4-min-hash sketch; the body is taken where the
        fetcher reads it, per task, through a context variable.)"""

        async def _get(self, url, count: bool = True):
            got = await super()._get(url, count)
            cap = _CAPTURE.get()
            if cap is not None and count:
                cap.append((str(url), *got))
            return got

        async def page(self, url: str):
            cap: list = []
            token = _CAPTURE.set(cap)
            try:
                res = await self.fetch(url)
            finally:
                _CAPTURE.reset(token)
            return res, (cap[-1] if cap and res.ok else None)

    return BodyFetcher


def record(url: str, res, last, hosts=None) -> dict:
    """One truth line (without cluster) from a fetch result (soft errors checked) and its captured
    response; with the page's identity evidence (title, declared canonical, final URL, robots).
    ``hosts``: the site's host names, one word in the signature as in the validator's sketches."""
    from dustbuster.core.report.truth import Signature, signature, url_class

    rec = {"url": url, "ok": bool(res.ok), "status": res.status, "reason": None if res.ok else res.reason,
           "class": url_class(url), "redirected": bool(res.redirected)}
    ident = res.identity
    if ident is not None:
        rec.update({k: v for k, v in ident.to_json().items() if k in ("title", "canonical", "robots", "final_url")})
    if not res.ok:
        return rec
    if last is None:  # cannot happen with dustbuster.fetch.client as it is; never a page without a signature
        return rec | {"ok": False, "reason": "no_body"}
    final, _status, body, ctype, _link = last
    sig: Signature = signature(body, ctype, hosts=hosts)
    rec.update(content_type=ctype.split(";")[0].strip() or None, size=len(body), final_url=final,
               sketch=res.sketch.to_json() if res.sketch else None, signature=sig.to_json())
    return rec


def fetch_order(urls: list[str]) -> list[str]:
    """``urls`` in the order they are fetched: grouped by path and query, each group in the log's
    order, so that one path under the site's several hosts (``www.``, another port) is fetched
    within moments of itself — a page that changes by the minute (relative times, a clock) is not
    told apart from itself by the time between two fetches.  The records keep the log's order.

    >>> fetch_order(["http://a.test/x", "http://a.test/y", "http://www.a.test/x"])
    ['http://a.test/x', 'http://www.a.test/x', 'http://a.test/y']
    """
    from dustbuster.core.urls.scope import split_url

    first: dict[str, int] = {}
    for u in urls:
        _, path, tail = split_url(u)
        first.setdefault(path + tail, len(first))
    return sorted(urls, key=lambda u: first[split_url(u)[1] + split_url(u)[2]])


async def fetch_all(urls: list[str], policy, out_fh, soft_errors: bool, on_done) -> Counter:
    """Fetch ``urls`` (bounded concurrency), append one record each to ``out_fh`` as it comes; a
    page matching the site's soft-error signature (dustbuster.fetch.softerrors, as the validator
    finds them) is recorded as a failure, ``soft_error``."""
    from dustbuster.fetch.softerrors import SoftErrorAware

    counts: Counter = Counter()
    async with _fetcher_class()(policy) as f:
        soft = SoftErrorAware(f.fetch, test_urls=urls, counts=f.counts) if soft_errors else None
        queue: asyncio.Queue = asyncio.Queue()
        for u in urls:
            queue.put_nowait(u)

        async def worker() -> None:
            while True:
                try:
                    u = queue.get_nowait()
                except asyncio.QueueEmpty:
                    return
                res, last = await f.page(u)
                if soft is not None:
                    res = await soft.check(u, res)
                rec = record(u, res, last, f.hosts)
                counts["ok" if rec["ok"] else rec["reason"]] += 1
                out_fh.write(json.dumps(rec, ensure_ascii=False) + "\n")
                out_fh.flush()
                on_done(rec)

        n = max(1, min(16, policy.per_host_concurrency * max(1, len(policy.origins))))
        await asyncio.gather(*(worker() for _ in range(n)))
    return counts


def clustered(urls: list[str], recs: dict[str, dict], threshold: float) -> list[dict]:
    """The records of ``urls`` in order, with cluster ids over the pages fetched."""
    from dustbuster.core.report.truth import Signature, cluster, split_by_title, url_class

    out = [recs[u] for u in urls if u in recs]
    for r in out:
        r["class"] = url_class(r["url"])  # records of an earlier run get this version's classes
    pages = [r for r in out if r.get("ok") and r.get("signature")]
    ids = split_by_title(cluster([Signature.from_json(r["signature"]) for r in pages], threshold),
                         [r.get("title") or "" for r in pages])
    for r in out:
        r["cluster"] = None
    for r, c in zip(pages, ids):
        r["cluster"] = c
    return out


def write_atomic(path: Path, recs: list[dict]) -> None:
    tmp = path.with_name(path.name + ".tmp")
    with open(tmp, "w", encoding="utf-8") as fh:
        for r in recs:
            fh.write(json.dumps(r, ensure_ascii=False) + "\n")
    os.replace(tmp, path)


def run(a: argparse.Namespace) -> int:
    from dustbuster.sitevalidation import configured_policy

    site = a.site.lower()
    policy = configured_policy(Path(a.sites), site)
    if not 0 < a.threshold <= 1:
        raise ConfigError("--threshold must be in (0, 1]")
    t0 = time.perf_counter()
    urls, read = log_urls(a.logs, a.format, site, a.scheme)
    if a.max_urls > 0:
        urls = urls[:a.max_urls]
    if not urls:
        raise DustError(f"no 2xx URL read from {', '.join(a.logs)} ({read['rejected'] or 'empty'})")
    out = Path(a.output)
    recs = {} if a.refetch else read_records(out)
    todo = fetch_order([u for u in urls if not done(recs.get(u))])
    reused = len(urls) - len(todo)
    bar = None
    if prog.enabled(a.quiet) and todo:
        from tqdm import tqdm

        bar = tqdm(total=len(todo), desc="pages fetched", unit="page", file=sys.stderr, leave=False)

    def on_done(rec: dict) -> None:
        recs[rec["url"]] = rec
        if bar is not None:
            bar.update(1)

    counts: Counter = Counter()
    if todo:
        with open(out, "w" if a.refetch else "a", encoding="utf-8") as fh:
            try:
                counts = asyncio.run(fetch_all(todo, policy, fh, not a.no_soft_errors, on_done))
            finally:
                if bar is not None:
                    bar.close()
    final = clustered(urls, recs, a.threshold)
    write_atomic(out, final)
    if not a.quiet:
        summary(final, counts, reused, time.perf_counter() - t0, out, sys.stderr)
    return 0


def summary(recs: list[dict], fetched: Counter, reused: int, seconds: float, out: Path, fh) -> None:
    """How much DUST the log has, and where; every failure counted, a few listed."""
    pages = [r for r in recs if r.get("cluster") is not None]
    fails = Counter(r["reason"] for r in recs if not r.get("ok"))
    k = len({r["cluster"] for r in pages})
    dup = len(pages) - k
    fh.write(f"{len(recs)} unique 2xx URLs: {sum(fetched.values())} fetched now, {reused} from {out}; "
             f"{len(pages)} pages, {sum(fails.values())} failed ({seconds:.1f}s)\n")
    fh.write(f"{k} distinct contents: {dup} duplicate URLs ({dup / len(pages) if pages else 0:.1%} of the pages "
             "could be skipped by a perfect canonicalizer)\n")
    if fails:
        fh.write("failures: " + ", ".join(f"{why}={n}" for why, n in fails.most_common()) + "\n")
        for r in [r for r in recs if not r.get("ok")][:5]:
            fh.write(f"  {r['reason']}: {r['url']}\n")
    per: dict[str, list] = {}
    for r in pages:
        per.setdefault(r["class"], []).append(r["cluster"])
    rows = sorted(per.items(), key=lambda kv: -(len(kv[1]) - len(set(kv[1]))))
    fh.write(f"{'class':<24} {'URLs':>6} {'contents':>8} {'duplicates':>10}\n")
    for cls, cl in rows[:15]:
        d = len(cl) - len(set(cl))
        fh.write(f"{cls[:24]:<24} {len(cl):>6} {len(set(cl)):>8} {d:>10}\n")
    fh.write(f"wrote {out}; score rule sets against it with: dustbuster eval --truth {out} RULES.json\n")


__all__ = ["add_parser", "run", "clustered", "fetch_order", "log_urls", "read_records"]
