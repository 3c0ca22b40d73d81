"""Crawl efficiency of a harness app (issue 28 item 1), run by bench/quality/run.py while the app is
served (after validation: the site as it is now, newer than its logs).

Four real Scrapy crawls (bench/quality/crawl_scrapy.py, one process each), breadth-first, cookies
off, the same download budget (CLOSESPIDER_PAGECOUNT), seeded with the front page under every
origin the site answers to (run.App.origins: the bare host and www., on both ports; a crawler
meets a site by every name links use), through its real server:
  * ``scrapy``: Scrapy as it is (its own request fingerprints);
  * ``scrapy + our rules``: the validated rule set as users configure it
    (REQUEST_FINGERPRINTER_CLASS = dustbuster.scrapy.DustRequestFingerprinter, DUSTBUSTER_RULES);
  * ``scrapy + hand canonicalizer``: bench/quality/handcanon.py's function for the app as the
    fingerprinter (the ceiling of a hand-written canonicalizer; bench only);
  * ``scrapy + content truth``: the content truth as the fingerprinter — the best any
    canonicalizer could do (TruthFingerprinter of crawl_scrapy.py).  Run last: a URL's content is
    known when one of the three other crawls of this run got a 200 page at it (as the first URL
    requested or a redirect's target) and every page got there is of one content cluster
    (dustbuster.core.report.truth, as crawls.numbers clusters); such a URL's key is its content.
    Any other URL (never seen, a non-200, or a page that changed between the crawls) is keyed
    through the hand-written canonicalizer, which merges only URLs of one page: by the content
    of a known URL of its canonical form, else by that form.  It still downloads what the others
    never saw, so it is a ceiling of this budget's crawls, not an oracle of the whole site.
Distinct contents: the content clusters of dustbuster.core.report.truth (the same-content test of
`dustbuster truth`) over the pages of the four crawls; *per download* = distinct contents over
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

HAND, TRUTH = "scrapy + hand canonicalizer", "scrapy + content truth"
CRAWLS = {  # name: args of crawl_scrapy.py given (rules file, app name, app folder); in this order
    "scrapy": lambda rules, app, folder: ["--mode", "plain"],
    "scrapy + our rules": lambda rules, app, folder: ["--mode", "key", "--rules", str(rules)],
    HAND: lambda rules, app, folder: ["--mode", "hand", "--app", app],
    TRUTH: lambda rules, app, folder: ["--mode", "truth", "--truth-map", str(truth_map_file(folder)), "--app", app],
}


def crawl_efficiency(app, rules: Path, budget: int) -> dict:
    """The four crawls of ``app`` (run.App, served now) and their numbers."""
    seeds = app.out / "crawl-seeds.txt"
    seeds.write_text("".join(f"{o}/\n" for o in app.origins))
    docs = {}
    for name, args in CRAWLS.items():
        if name == TRUTH:
            truth_map_file(app.out).write_text(json.dumps(truth_map(docs)))
        out = crawl_file(app.out, name)
        t0 = time.perf_counter()
        r = subprocess.run([sys.executable, str(HERE / "crawl_scrapy.py"), str(seeds), str(out), "--max", str(budget),
                            "--bfs", *args(rules, app.name, app.out)], cwd=ROOT, capture_output=True, text=True,
                           timeout=1800)
        if r.returncode != 0:
            raise SystemExit(f"{name} crawl failed:\n{r.stderr[-3000:]}")
        docs[name] = json.loads(out.read_text()) | {"seconds": round(time.perf_counter() - t0, 1)}
    return {"budget": budget, "seeds_urls": len(app.origins)} | crawl_numbers(docs, rules, app.name, app.out)


def truth_map_file(folder: Path) -> Path:
    return folder / "crawl-truth-map.json"


def truth_map(docs: dict[str, dict]) -> dict[str, int]:
    """URL -> content cluster of the 200 pages of ``docs`` (the crawls so far), for the URLs whose
    pages are all of one cluster (first URL requested and redirect target)."""
    from collections import defaultdict

    from dustbuster.core.report.truth import Signature, cluster

    pages = [r for d in docs.values() for r in d["responses"] if r["status"] == 200]
    ids = cluster([Signature.from_json(r["sig"]) for r in pages])
    shows: dict[str, set[int]] = defaultdict(set)
    for r, c in zip(pages, ids):
        shows[r["url"]].add(c)
        shows[r.get("response_url") or r["url"]].add(c)
    return {u: next(iter(cs)) for u, cs in shows.items() if len(cs) == 1}


def truth_key(folder: Path, app: str):
    """The key of the content-truth crawl: crawl_scrapy.TruthFingerprinter on the run's map."""
    import scrapy
    from crawl_scrapy import TruthFingerprinter  # bench/quality/crawl_scrapy.py

    fp = TruthFingerprinter(str(truth_map_file(folder)), app)
    return lambda url: fp.fingerprint(scrapy.Request(url))


def crawl_numbers(docs: dict[str, dict], rules: Path, app: str, folder: Path | None = None) -> dict:
    """crawls.numbers of the crawls, with the keys of those that have rules (or the truth) and the
    distinct contents per download."""
    from crawls import numbers  # bench/quality/crawls.py: clusters and per-crawl counts
    from lostrules import hand_key, rules_key  # bench/quality/lostrules.py

    keys = {"scrapy + our rules": rules_key(rules), HAND: hand_key(app)}
    if TRUTH in docs and folder is not None and truth_map_file(folder).is_file():
        keys[TRUTH] = truth_key(folder, app)
    res = numbers(docs, 1, sum(r.get("status") == "valid" for r in json.loads(rules.read_text())["rules"]), keys)
    for row in res["crawls"].values():
        row["per_download"] = round(row["distinct"] / row["downloads"], 3) if row["downloads"] else None
    return res


def crawl_file(folder: Path, name: str) -> Path:
    """The JSON a crawl of CRAWLS writes in an app's folder."""
    return folder / f"crawl-{name.replace(' ', '-').replace('+', 'with')}.json"


def recount(folder: Path) -> dict:
    """The crawl numbers of a finished run's app folder (OUTDIR/APP: result.json, rules.json and the
    crawls' JSON; the content-truth crawl only where the run had it) computed again, e.g. for
    results written before *lost by the rules*; the crawls' seconds and budget are kept from
    result.json."""
    res = json.loads((folder / "result.json").read_text())
    old = res.get("crawl")
    if not old:
        raise SystemExit(f"{folder / 'result.json'} has no crawl numbers (the crawl stage did not run)")
    docs = {}
    for name in CRAWLS:
        path = crawl_file(folder, name)
        if name == TRUTH and name not in old["crawls"]:
            continue  # a run before the content-truth crawl
        if not path.is_file():
            raise SystemExit(f"{path} is missing: recount needs the crawls' JSON")
        docs[name] = json.loads(path.read_text()) | {"seconds": old["crawls"][name]["seconds"]}
    keep = {k: v for k, v in old.items() if k not in ("crawls", "distinct_all", "seeds", "rules")}
    from run import port_aliases  # bench/quality/run.py: the hand canonicalizer's ports of that run

    port_aliases(res.get("ports") or [0])
    return keep | crawl_numbers(docs, folder / "rules.json", res["app"], folder)


def crawl_table(res: dict) -> str:
    """The crawl efficiency table of docs/quality.md."""
    c = res.get("crawl")
    if not c:
        return ""
    ceilings = [c["crawls"][k]["per_download"] if k in c["crawls"] else None for k in (HAND, TRUTH)]
    entry = (f"from the front page under each of its {c['seeds_urls']} origins (host and www., both ports)"
             if c.get("seeds_urls") else "from the root")
    out = [f"Crawl efficiency (issue 28): Scrapy breadth-first {entry} through the real server, budget "
           f"{c['budget']:,} downloads, cookies off, after validation (bench/quality/crawleff.py); "
           f"{c['distinct_all']:,} distinct contents over all {len(c['crawls'])} crawls:", "",
           "| crawl | downloads | distinct contents | per download | of the ceiling: hand / content truth "
           "| lost by the rules | not reached within the budget | seconds |",
           "|---|---:|---:|---:|---|---:|---:|---:|"]
    for name, r in c["crawls"].items():
        share = " / ".join(f"{r['per_download'] / x:.0%}" if x and r["per_download"] is not None else "–"
                           for x in ceilings)
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
