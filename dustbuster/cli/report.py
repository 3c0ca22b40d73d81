"""``dustbuster report``: a site owner's report (dustbuster.core.report.sitereport) as JSON and as one
self-contained HTML page (dustbuster.cli.reporthtml)."""

from __future__ import annotations

import argparse
import json
import sys
from collections import Counter
from pathlib import Path

from .common import read_doc

EPILOG = """\
examples:
  dustbuster report --site forum.test --rules rules.json access.log --html report.html --json report.json
  dustbuster report --site forum.test --rules rules.json access.log --truth truth.jsonl --html report.html
The counters are each distinct URL of the logs (2xx or no status) and its hits; --truth is the
output of `dustbuster truth` on such a log (the content clusters): then the report also says how
many duplicates there really are and how many the rules find.
"""


def add_parser(sub, common) -> argparse.ArgumentParser:
    r = sub.add_parser("report", parents=[common], help="a site owner's report: duplicates, rules, what to fix",
                       description="A report for a site's owner: how much of a crawl of the site is duplicate, the "
                       "validated rules with their evidence, the parameters and paths that make the most duplicates, "
                       "and for each rule what the site could do itself (a 301, a canonical link, a robots.txt "
                       "Clean-param).", epilog=EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter)
    r.add_argument("logs", nargs="+", help="the site's access or crawl logs (its URL counters)")
    r.add_argument("--site", required=True, help="the site")
    r.add_argument("--rules", required=True, metavar="RULES.json", help="the site's RuleSet (validated rules)")
    r.add_argument("--truth", metavar="TRUTH.jsonl", help="the content truth of `dustbuster truth` (optional)")
    r.add_argument("--format", default="auto", help="log format (default: auto)")
    r.add_argument("--scheme", default="http", help="scheme of the log's URLs (default http)")
    r.add_argument("--html", metavar="OUT.html", help="write the HTML page here")
    r.add_argument("--json", metavar="OUT.json", help="write the JSON here ('-': stdout)")
    return r


def counters(logs: list[str], fmt: str, site: str, scheme: str) -> Counter:
    """Each distinct URL of the logs (2xx or no status) and its hits."""
    from dustbuster.logs.record import Limits
    from dustbuster.logs.reader import ReadStats, iter_records

    hits: Counter = Counter()
    for rec in iter_records(logs, fmt, site, scheme, limits=Limits(), stats=ReadStats()):
        if rec.status is None or 200 <= rec.status < 300:
            hits[rec.url] += 1
    return hits


def run(a: argparse.Namespace) -> int:
    from dustbuster.core.errors import DustError
    from dustbuster.core.report.sitereport import site_report

    site = a.site.lower()
    doc = read_doc(a.rules)
    if doc.get("site") and str(doc["site"]).lower() != site:
        raise DustError(f"{a.rules} holds the rules of {doc['site']}, not of {site}")
    urls = counters(a.logs, a.format, site, a.scheme)
    if not urls:
        raise DustError(f"no URL of {site} in {', '.join(a.logs)}")
    truth = None
    if a.truth:
        from .truth import read_records

        truth = read_records(Path(a.truth))
    rep = site_report(site, doc, urls, truth)
    if a.json:
        text = json.dumps(rep, indent=1, ensure_ascii=False) + "\n"
        sys.stdout.write(text) if a.json == "-" else Path(a.json).write_text(text, encoding="utf-8")
    if a.html:
        from .reporthtml import render

        Path(a.html).write_text(render(rep), encoding="utf-8")
    if not a.quiet:
        sys.stderr.write(f"{site}: {rep['duplicates']} of {rep['urls']} URLs are duplicates by {len(rep['rules'])} "
                         f"rules ({rep['duplicate_share']:.1%})\n")
    return 0
