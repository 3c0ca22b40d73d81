"""``dustbuster frontier``: URLs into the frontier topic (:func:`dustbuster.stream.frontier.send_frontier`),
and with --wait the workers' answers printed."""

from __future__ import annotations

import argparse
import sys

from .common import settings as kafka_settings


def add_parser(sub, common) -> argparse.ArgumentParser:
    f = sub.add_parser("frontier", parents=[common], help="send URLs to the frontier topic (canonized by workers)",
                       description="Read URLs (one a line) and send them to the frontier topic, keyed by site, "
                       "in JSON batches; workers answer on the canonical topic (docs/canonizer.md).")
    f.add_argument("urls", nargs="?", default="-", metavar="FILE|-", help="URLs one a line (default: stdin)")
    f.add_argument("--site", required=True, help="the site the URLs belong to (the message key)")
    f.add_argument("--batch-lines", dest="batch", type=int, default=500, metavar="N", help="URLs per message (default %(default)s)")
    f.add_argument("--wait", action="store_true", help="then print the workers' answers from the canonical topic: "
                   "new|seen<TAB>URL<TAB>canonical")
    f.add_argument("--timeout", type=float, default=120, help="seconds to wait for the answers (default %(default)s)")
    f.add_argument("--bootstrap", help="Kafka bootstrap servers (DUST_KAFKA_BOOTSTRAP)")
    return f


def run(a: argparse.Namespace) -> int:
    import asyncio

    from dustbuster.stream.frontier import send_frontier

    s = kafka_settings(a)
    site = a.site.lower()
    fh = sys.stdin if a.urls == "-" else open(a.urls, encoding="utf-8", errors="replace")
    urls = [u.strip() for u in fh if u.strip()]
    answers = asyncio.run(send_frontier(s, site, urls, a.batch, a.wait, a.timeout, on_answer=_print_answer))
    if not a.quiet:
        dup = sum(1 for d in answers if d.get("seen"))
        sys.stderr.write(f"sent {len(urls)} URLs of {site} to {s.frontier_topic}"
                         + (f"; {len(answers)} answers, {dup} already seen\n" if a.wait else "\n"))
    return 0


def _print_answer(d: dict) -> None:
    print(f"{'seen' if d.get('seen') else 'new'}\t{d['url']}\t{d['canonical']}", flush=True)
