"""Crawl efficiency of a harness app (issue 28 item 1), run by bench/quality/run.py while the app is
served (after validation: the site as it is now, newer than its logs).

Three real Scrapy crawls (bench/quality/crawl_scrapy.py, one process each), breadth-first from the
site's root through its real server, cookies off, the same download budget (CLOSESPIDER_PAGECOUNT):
  * ``scrapy``: Scrapy as it is (its own request fingerprints);
  * ``scrapy + our rules``: the validated rule set as users configure it
    (REQUEST_FINGERPRINTER_CLASS = dustbuster.scrapy.DustRequestFingerprinter, DUSTBUSTER_RULES);
  * ``scrapy + hand canonicalizer``: bench/quality/handcanon.py's function for the app as the
    fingerprinter (the ceiling; bench only).
Distinct contents: the content clusters of dustbuster.core.truth (the same-content test of
`dustbuster truth`) over the pages of the three crawls; *per download* = distinct contents over
responses downloaded; *lost* = contents the plain crawl reached that this crawl never did.
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent

CRAWLS = {  # name: args of crawl_scrapy.py given (rules file, app name)
    "scrapy": lambda rules, app: ["--mode", "plain"],
    "scrapy + our rules": lambda rules, app: ["--mode", "key", "--rules", str(rules)],
    "scrapy + hand canonicalizer": lambda rules, app: ["--mode", "hand", "--app", app],
}


def crawl_efficiency(app, rules: Path, budget: int) -> dict:
    """The three crawls of ``app`` (run.App, served now) and their numbers."""
    from crawls import numbers  # bench/quality/crawls.py: clusters and per-crawl counts

    seeds = app.out / "crawl-seeds.txt"
    seeds.write_text(app.base + "/\n")
    docs = {}
    for name, args in CRAWLS.items():
        out = app.out / f"crawl-{name.replace(' ', '-').replace('+', 'with')}.json"
        t0 = time.perf_counter()
        r = subprocess.run([sys.executable, str(HERE / "crawl_scrapy.py"), str(seeds), str(out), "--max", str(budget),
                            "--bfs", *args(rules, app.name)], cwd=ROOT, capture_output=True, text=True, timeout=1800)
        if r.returncode != 0:
            raise SystemExit(f"{name} crawl failed:\n{r.stderr[-3000:]}")
        docs[name] = json.loads(out.read_text()) | {"seconds": round(time.perf_counter() - t0, 1)}
    res = numbers(docs, 1, sum(r.get("status") == "valid" for r in json.loads(rules.read_text())["rules"]))
    for row in res["crawls"].values():
        row["per_download"] = round(row["distinct"] / row["downloads"], 3) if row["downloads"] else None
    return {"budget": budget} | res


def crawl_table(res: dict) -> str:
    """The crawl efficiency table of docs/quality.md."""
    c = res.get("crawl")
    if not c:
        return ""
    hand = c["crawls"]["scrapy + hand canonicalizer"]["per_download"] or 0
    out = [f"Crawl efficiency (issue 28): Scrapy breadth-first from the root through the real server, budget "
           f"{c['budget']:,} downloads, cookies off, after validation (bench/quality/crawleff.py); "
           f"{c['distinct_all']:,} distinct contents over all three crawls:", "",
           "| crawl | downloads | distinct contents | per download | of the ceiling | lost (vs plain) | seconds |",
           "|---|---:|---:|---:|---:|---:|---:|"]
    for name, r in c["crawls"].items():
        share = f"{r['per_download'] / hand:.0%}" if hand and r["per_download"] is not None else "–"
        out.append(f"| {name} | {r['downloads']:,} | {r['distinct']:,} | {r['per_download']} | {share} | "
                   f"{r['missed']} | {r['seconds']} |")
    lost = [(n, r["missed_examples"]) for n, r in c["crawls"].items() if r.get("missed_examples")]
    for n, exs in lost[:2]:
        out += ["", f"Contents *{n}* never reached (their URL in the plain crawl): "
                + ", ".join(f"`{u}`" for u in exs[:4]) + "."]
    return "\n".join(out) + "\n"
