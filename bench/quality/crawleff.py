"""Crawl efficiency of a harness app (issue 28 item 1), run by bench/quality/run.py while the app is
served (after validation: the site as it is now, newer than its logs).

Three real Scrapy crawls (bench/quality/crawl_scrapy.py, one process each), breadth-first from the
site's root through its real server, cookies off, the same download budget (CLOSESPIDER_PAGECOUNT):
  * ``scrapy``: Scrapy as it is (its own request fingerprints);
  * ``scrapy + our rules``: the validated rule set as users configure it
    (REQUEST_FINGERPRINTER_CLASS = dustbuster.scrapy.DustRequestFingerprinter, DUSTBUSTER_RULES);
  * ``scrapy + hand canonicalizer``: bench/quality/handcanon.py's function for the app as the
    fingerprinter (the ceiling; bench only).
Distinct contents: the content clusters of dustbuster.core.report.truth (the same-content test of
`dustbuster truth`) over the pages of the three crawls; *per download* = distinct contents over
responses downloaded.  The plain crawl's contents this crawl never reached are split in two
(bench/quality/lostrules.py): *lost by the rules*, those of them no URL seen in any crawl reaches
under the crawl's request key (the rules merge every URL of them with another content), and *not
reached within the budget*, the rest: the budget was spent on other pages (or the page changed
between the crawls).
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
    seeds = app.out / "crawl-seeds.txt"
    seeds.write_text(app.base + "/\n")
    docs = {}
    for name, args in CRAWLS.items():
        out = crawl_file(app.out, name)
        t0 = time.perf_counter()
        r = subprocess.run([sys.executable, str(HERE / "crawl_scrapy.py"), str(seeds), str(out), "--max", str(budget),
                            "--bfs", *args(rules, app.name)], cwd=ROOT, capture_output=True, text=True, timeout=1800)
        if r.returncode != 0:
            raise SystemExit(f"{name} crawl failed:\n{r.stderr[-3000:]}")
        docs[name] = json.loads(out.read_text()) | {"seconds": round(time.perf_counter() - t0, 1)}
    return {"budget": budget} | crawl_numbers(docs, rules, app.name)


def crawl_numbers(docs: dict[str, dict], rules: Path, app: str) -> dict:
    """crawls.numbers of the three crawls, with the keys of the two that have rules and the
    distinct contents per download."""
    from crawls import numbers  # bench/quality/crawls.py: clusters and per-crawl counts
    from lostrules import hand_key, rules_key  # bench/quality/lostrules.py

    keys = {"scrapy + our rules": rules_key(rules), "scrapy + hand canonicalizer": hand_key(app)}
    res = numbers(docs, 1, sum(r.get("status") == "valid" for r in json.loads(rules.read_text())["rules"]), keys)
    for row in res["crawls"].values():
        row["per_download"] = round(row["distinct"] / row["downloads"], 3) if row["downloads"] else None
    return res


def crawl_file(folder: Path, name: str) -> Path:
    """The JSON a crawl of CRAWLS writes in an app's folder."""
    return folder / f"crawl-{name.replace(' ', '-').replace('+', 'with')}.json"


def recount(folder: Path) -> dict:
    """The crawl numbers of a finished run's app folder (OUTDIR/APP: result.json, rules.json and the
    three crawls' JSON) computed again, e.g. for results written before *lost by the rules*; the
    crawls' seconds and budget are kept from result.json."""
    res = json.loads((folder / "result.json").read_text())
    old = res.get("crawl")
    if not old:
        raise SystemExit(f"{folder / 'result.json'} has no crawl numbers (the crawl stage did not run)")
    docs = {}
    for name in CRAWLS:
        path = crawl_file(folder, name)
        if not path.is_file():
            raise SystemExit(f"{path} is missing: recount needs the three crawls' JSON")
        docs[name] = json.loads(path.read_text()) | {"seconds": old["crawls"][name]["seconds"]}
    keep = {k: v for k, v in old.items() if k not in ("crawls", "distinct_all", "seeds", "rules")}
    return keep | crawl_numbers(docs, folder / "rules.json", res["app"])


def crawl_table(res: dict) -> str:
    """The crawl efficiency table of docs/quality.md."""
    c = res.get("crawl")
    if not c:
        return ""
    hand = c["crawls"]["scrapy + hand canonicalizer"]["per_download"] or 0
    out = [f"Crawl efficiency (issue 28): Scrapy breadth-first from the root through the real server, budget "
           f"{c['budget']:,} downloads, cookies off, after validation (bench/quality/crawleff.py); "
           f"{c['distinct_all']:,} distinct contents over all three crawls:", "",
           "| crawl | downloads | distinct contents | per download | of the ceiling | lost by the rules "
           "| not reached within the budget | seconds |",
           "|---|---:|---:|---:|---:|---:|---:|---:|"]
    for name, r in c["crawls"].items():
        share = f"{r['per_download'] / hand:.0%}" if hand and r["per_download"] is not None else "–"
        out.append(f"| {name} | {r['downloads']:,} | {r['distinct']:,} | {r['per_download']} | {share} | "
                   f"{lost_cells(name, r)} | {r['seconds']} |")
    return "\n".join(out + lost_notes(c["crawls"])) + "\n"


def lost_cells(name: str, r: dict) -> str:
    """The two cells of one crawl: lost by the rules, not reached within the budget.  The plain
    crawl has no rules; a result written before the split (no ``lost_by_rules``) shows its old
    *missed* as not split."""
    if name == "scrapy":
        return f"– | {r['missed']}"
    if "lost_by_rules" not in r:
        return f"not counted | {r['missed']} (missed, not split)"
    return f"{r['lost_by_rules']} | {r['not_reached']}"


def lost_notes(crawls: dict[str, dict]) -> list[str]:
    """Example URLs under the table, and what a result without the split means."""
    out = []
    if any("lost_by_rules" not in r for n, r in crawls.items() if n != "scrapy"):
        out += ["", "*not counted*: this result predates the split; `.venv/bin/python bench/quality/crawls.py "
                "--recount OUTDIR/APP` counts it from the run's crawls."]
    for n, r in crawls.items():
        if r.get("lost_examples"):
            out += ["", f"Contents *{n}* loses by its rules (their URL in the plain crawl): "
                    + ", ".join(f"`{u}`" for u in r["lost_examples"][:4]) + "."]
        if r.get("at_risk_reached"):
            out += ["", f"*{n}* reached {r['at_risk_reached']} contents by the order of its crawl although every URL "
                    "of them is merged with another content (another order loses them; not in the table)."]
        if r.get("changed"):
            out += ["", f"Of the {r['not_reached']} contents *{n}* did not reach within the budget, {r['changed']} are "
                    "pages it fetched at the plain crawl's URL and found changed (another content there)."]
    examples = [(n, r.get("not_reached_examples", r["missed_examples"])) for n, r in crawls.items()]
    for n, exs in [(n, exs) for n, exs in examples if exs][:2]:
        out += ["", f"Contents *{n}* did not reach (their URL in the plain crawl): "
                + ", ".join(f"`{u}`" for u in exs[:4]) + "."]
    return out
