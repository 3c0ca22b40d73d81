"""Real crawler crawls of the quality harness's apps with and without their validated rules
(issue 26): Scrapy (plain, key-only with DustRequestFingerprinter, rewrite with DustLinks) and
Crawlee for Python (plain, DustKeys), each through the app's real server on loopback; writes
docs/crawls.md.

  .venv/bin/python bench/quality/crawls.py --apps docs          # Sphinx under Apache
  .venv/bin/python bench/quality/crawls.py --apps docs,trac
  .venv/bin/python bench/quality/crawls.py --recount bench/out/quality/mediawiki   # crawl-efficiency numbers again

Per app: the app is set up and served as `make quality` does (bench/quality/run.py: its three
traffic runs), its rules are `dustbuster validate` of the train and validate logs; the crawls start
from the site's root and the distinct URLs of the test log (as links from the web would) and follow
every link of the site, at most --max pages.  Distinct pages: the content clusters
(dustbuster.core.report.truth: signatures, resemblance >= 0.9) over the pages of all the crawls.
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(ROOT))

from run import KINDS, SIZES, App, dust, traffic  # noqa: E402  (bench/quality/run.py)

CRAWLS = {  # name: (script, args given the rules file)
    "scrapy": ("crawl_scrapy.py", lambda rules: ["--mode", "plain"]),
    "scrapy key-only": ("crawl_scrapy.py", lambda rules: ["--mode", "key", "--rules", str(rules)]),
    "scrapy rewrite": ("crawl_scrapy.py", lambda rules: ["--mode", "rewrite", "--rules", str(rules)]),
    "crawlee": ("crawl_crawlee.py", lambda rules: []),
    "crawlee keys": ("crawl_crawlee.py", lambda rules: ["--rules", str(rules)]),
}


def learn(app: App) -> tuple[Path, Path]:
    """Set up and serve the app (the caller stops it), its traffic, its validated rules; the seeds."""
    from dustbuster.cli.truth import log_urls

    if app.out.exists():
        shutil.rmtree(app.out)
    app.out.mkdir(parents=True)
    steps = app.out / "steps.log"
    app.setup(steps)
    app.start()
    logs = traffic(app, steps)
    app.edit(len(logs), steps)  # validation meets a site newer than its logs, as in run.py
    rules = app.out / "rules.json"
    dust("validate", str(logs["train"]), str(logs["validate"]), "--site", app.host, "--sites", str(app.sites_json()),
         "-o", str(rules), "-q", steps=steps)
    urls, _ = log_urls([str(logs["test"])], "auto", app.host, "http")
    seeds = app.out / "seeds.txt"
    seeds.write_text("\n".join(dict.fromkeys([app.base + "/", *urls])) + "\n")
    return rules, seeds


def crawl_all(app: App, rules: Path, seeds: Path, most: int) -> dict[str, dict]:
    docs = {}
    for name, (script, args) in CRAWLS.items():
        out = app.out / f"crawl-{name.replace(' ', '-')}.json"
        t0 = time.perf_counter()
        r = subprocess.run([sys.executable, str(HERE / script), str(seeds), str(out), "--max", str(most), *args(rules)],
                           cwd=ROOT, capture_output=True, text=True, timeout=900)
        if r.returncode != 0:
            raise SystemExit(f"{name} crawl failed:\n{r.stderr[-3000:]}")
        docs[name] = json.loads(out.read_text()) | {"seconds": round(time.perf_counter() - t0, 1)}
        print(f"  {name}: {len(docs[name]['responses'])} pages, {docs[name]['seconds']}s", file=sys.stderr)
    return docs


def site_report(app: App, seeds: Path, rules: Path, shots: Path | None) -> dict:
    """While the app is served: the content truth of the test log; then the site owner's report
    (`dustbuster report`, HTML and JSON) and, with ``shots``, a screenshot of it."""
    steps, truth = app.out / "steps.log", app.out / "truth.jsonl"
    dust("truth", str(app.out / "test.log"), "--site", app.host, "--sites", str(app.sites_json()), "-o", str(truth),
         "-q", steps=steps)
    html, js = app.out / "report.html", app.out / "report.json"
    dust("report", "--site", app.host, "--rules", str(rules), str(app.out / "test.log"), "--truth", str(truth),
         "--html", str(html), "--json", str(js), "-q", steps=steps)
    if shots is not None:
        screenshot(html, shots / f"report-{app.name}.png")
    return json.loads(js.read_text())


def screenshot(html: Path, png: Path, width: int = 1300) -> None:
    """A full-page PNG of a local HTML file in headless Chromium (Debian's chromium, chromium-driver)."""
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    opts = webdriver.ChromeOptions()
    opts.binary_location = shutil.which("chromium") or "chromium"
    for arg in ("--headless=new", "--no-sandbox", "--disable-gpu", f"--window-size={width},900", "--lang=en-GB"):
        opts.add_argument(arg)
    d = webdriver.Chrome(options=opts, service=Service(shutil.which("chromedriver") or "/usr/lib/chromium/chromedriver"))
    try:
        d.get(html.resolve().as_uri())
        height = d.execute_script("return Math.ceil(document.documentElement.scrollHeight)")
        d.set_window_size(width, min(int(height) + 40, 5000))
        png.parent.mkdir(parents=True, exist_ok=True)
        d.save_screenshot(str(png))
    finally:
        d.quit()


def numbers(docs: dict[str, dict], n_seeds: int, n_rules: int, keys: dict | None = None) -> dict:
    """Per crawl: pages downloaded, distinct pages, the plain crawl's distinct pages missed; with
    ``keys`` (crawl name: its request key, bench/quality/lostrules.py), those crawls' *missed* split
    into ``lost_by_rules`` and ``not_reached`` (within the budget); ``changed``: of those not reached,
    the contents whose URL in the plain crawl this crawl fetched too and found another content at
    (a page that changed between the crawls: recent changes, feeds)."""
    from lostrules import at_risk, errors, fetches  # bench/quality/lostrules.py

    from dustbuster.core.report.truth import Signature, cluster

    pages = [(name, r) for name, d in docs.items() for r in d["responses"] if r["status"] == 200]
    ids = cluster([Signature.from_json(r["sig"]) for _, r in pages])
    distinct: dict[str, set] = {name: set() for name in docs}
    first: dict[tuple[str, int], str] = {}  # (crawl, page): the first URL that crawl downloaded it at
    for (name, r), c in zip(pages, ids):
        distinct[name].add(c)
        first.setdefault((name, c), r["url"])
    rows = {}
    for name, d in docs.items():
        s = d["stats"]
        plain = "scrapy" if name.startswith("scrapy") else "crawlee"
        downloads = s.get("downloader/response_count", s.get("requests_finished", len(d["responses"])))
        rows[name] = {"downloads": downloads, "pages": len(d["responses"]), "distinct": len(distinct[name]),
                      "missed": len(distinct[plain] - distinct[name]), "seconds": d["seconds"],
                      "missed_examples": sorted(first[plain, c] for c in distinct[plain] - distinct[name])[:6],
                      "filtered": s.get("dupefilter/filtered"), "rewritten": s.get("dustbuster/rewritten")}
    for name, row in rows.items():
        plain = rows["scrapy" if name.startswith("scrapy") else "crawlee"]
        row["saved"] = plain["downloads"] - row["downloads"]
    seen = fetches((r, c) for (_, r), c in zip(pages, ids)) + errors(docs.values())
    for name, key in ((n, k) for n, k in (keys or {}).items() if n in docs):
        plain = "scrapy" if name.startswith("scrapy") else "crawlee"
        risky = at_risk(seen, distinct[plain], key)
        lost = risky - distinct[name]
        budget = distinct[plain] - distinct[name] - lost
        fetched = {r["url"] for r in docs[name]["responses"]}
        changed = {c for (n, r), c in zip(pages, ids) if n == plain and c in budget and r["url"] in fetched}
        rows[name] |= {"lost_by_rules": len(lost), "not_reached": len(budget), "changed": len(changed),
                       "at_risk_reached": len(risky & distinct[name]),
                       "lost_examples": sorted(first[plain, c] for c in lost)[:6],
                       "not_reached_examples": sorted(first[plain, c] for c in budget - changed)[:6]}
    return {"seeds": n_seeds, "rules": n_rules, "distinct_all": len(set(ids)), "crawls": rows}


def rule_keys(rules: Path) -> dict:
    """The request key of each crawl of CRAWLS that has the rules: the canonical URL's fingerprint
    (key-only and Crawlee's keys: the canonical URL; rewrite: the canonical URL requested), for
    lostrules.at_risk."""
    from lostrules import rules_key  # bench/quality/lostrules.py

    key = rules_key(rules)
    return {name: key for name in ("scrapy key-only", "scrapy rewrite", "crawlee keys")}


def write_doc(results: list[dict], path: Path) -> None:
    out = ["# Crawls with and without the rules (issue 26)", "",
           "Written by `bench/quality/crawls.py` (do not edit by hand).  Real crawlers, real servers on loopback:",
           "each harness app of [quality.md](quality.md) is set up and served as `make quality` does, its rules are",
           "`dustbuster validate` of its train and validate logs, and each crawler starts from the site's root and the",
           "distinct URLs of its test log and follows every link of the site.  *downloads*: responses downloaded",
           "(redirects included); *distinct pages*: content clusters (`dustbuster.core.report.truth`, resemblance ≥ 0.9)",
           "over the pages of all the crawls; *missed*: distinct pages the same crawler without rules downloaded",
           "and this crawl did not; in brackets, those of them *lost by the rules* (bench/quality/lostrules.py):",
           "no URL of them seen in any crawl escapes a merge with another content under the rules (the rest were",
           "not reached within the budget, or changed between the crawls); *saved*: downloads fewer than the same",
           "crawler without rules.", "",
           "Crawl efficiency with a fixed download budget, breadth-first from the root, per app and beside the hand-written",
           "canonicalizer of each app (the ceiling; MediaWiki and WordPress included): `make quality`'s crawl stage,",
           "[quality.md](quality.md) (bench/quality/crawleff.py).", ""]
    for res in results:
        out += [f"## {res['app']}: {res['kind']}", "",
                f"{res['seeds']} seed URLs, {res['rules']} validated rules, {res['distinct_all']} distinct pages in all.", "",
                "| crawl | downloads | pages handled | distinct pages | missed (lost by the rules) | saved "
                "| requests Scrapy's filter dropped | seconds |",
                "|---|---:|---:|---:|---:|---:|---:|---:|"]
        for name, r in res["crawls"].items():
            lost = f" ({r['lost_by_rules']})" if "lost_by_rules" in r else ""
            out.append(f"| {name} | {r['downloads']} | {r['pages']} | {r['distinct']} | {r['missed']}{lost} | {r['saved']} | "
                       f"{'' if r['filtered'] is None else r['filtered']} | {r['seconds']} |")
        out.append("")
        capped = [name for name, r in res["crawls"].items() if r["pages"] >= res.get("max", 1e18)]
        if capped:
            out += [f"The crawls {', '.join(capped)} stopped at the page budget (--max {res['max']}): for them the numbers "
                    "compare what the same budget reaches — *distinct pages* per download — and *missed* counts pages the "
                    "crawl without rules reached within its budget and this one did not (it spent the budget elsewhere).", ""]
        for name, r in res["crawls"].items():
            if r.get("missed_examples"):
                out += [f"Pages *{name}* missed (their URL in the crawl without rules): "
                        + ", ".join(f"`{u}`" for u in r["missed_examples"]) + ".", ""]
                if all("?C=" in u for u in r["missed_examples"]):
                    out += ["(Apache autoindex listings sorted another way, `?C=…;O=…`: the same entries in another order, "
                            "which the content truth counts as other pages — the order changes the shingles — and the "
                            "validated query rule folds onto the default order; each entry they link is linked from the "
                            "default listing too.)", ""]
        rep = res.get("report")
        if rep:
            t = rep.get("truth") or {}
            out += [f"The site owner's report (`dustbuster report`, [img/report-{res['app']}.png](img/report-{res['app']}.png)) "
                    f"on the test log: {rep['duplicates']} of its {rep['urls']} URLs ({rep['duplicate_share']:.1%}) are "
                    f"duplicates by the rules" + (f"; by content {t['duplicates']} ({t['duplicate_share']:.1%}), "
                    f"{t['found_share']:.1%} of them found, {t['false_merges']} false merges." if t else "."), ""]
    out += ["Modes: *key-only* (`dustbuster.scrapy.DustRequestFingerprinter`; Crawlee: `dustbuster.crawlee.DustKeys`)",
            "fetches the URLs the site links and keys them by their canonical URL; *rewrite* (`dustbuster.scrapy.DustLinks`)",
            "requests the canonical URL itself.  When each is right: [canonizer.md](canonizer.md).", ""]
    path.write_text("\n".join(out))


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--apps", default="docs", help="comma-separated: docs, trac, mediawiki, wordpress (default docs)")
    ap.add_argument("--size", choices=("small", "full"), default="small", help="the apps' size (run.py's)")
    ap.add_argument("--max", type=int, default=3000, help="pages per crawl at most")
    ap.add_argument("--out", default=str(ROOT / "bench" / "out" / "crawls"))
    ap.add_argument("--venv", default=str(ROOT / "var" / "quality" / "venv"))
    ap.add_argument("--doc", default=str(ROOT / "docs" / "crawls.md"), help="'' writes none")
    ap.add_argument("--screenshots", default="", help="a folder for screenshots of the reports (docs/img)")
    ap.add_argument("--doc-only", action="store_true", help="run nothing: the numbers and the doc again from --out")
    ap.add_argument("--recount", nargs="+", metavar="OUTDIR/APP", default=[],
                    help="run nothing: the crawl-efficiency numbers of `make quality`'s app folders (result.json, "
                         "rules.json, crawl-scrapy*.json) counted again, lost by the rules included; prints the "
                         "table of docs/quality.md and the numbers as JSON")
    ap.add_argument("--write", action="store_true", help="with --recount: store the numbers in each result.json "
                    "(then bench/quality/report.py writes docs/quality.md from them)")
    a = ap.parse_args(argv)
    if a.recount:
        return recount_folders([Path(f) for f in a.recount], a.write)
    out, results = Path(a.out).resolve(), []
    if a.doc_only:
        return doc_only(out, a.apps.split(","), Path(a.doc), a.max)
    for name in a.apps.split(","):
        host, kind = KINDS[name]
        app = App(name, host, kind, out / name, Path(a.venv).resolve(), SIZES[a.size][name])
        print(f"{name}: {kind} ...", file=sys.stderr, flush=True)
        try:
            rules, seeds = learn(app)
            docs = crawl_all(app, rules, seeds, a.max)
            report = site_report(app, seeds, rules, Path(a.screenshots) if a.screenshots else None)
        finally:
            app.stop()
        n_rules = sum(r.get("status") == "valid" for r in json.loads(rules.read_text())["rules"])
        res = {"app": name, "kind": kind, "max": a.max} | numbers(docs, len(seeds.read_text().split()), n_rules,
                                                                  rule_keys(rules))
        res["report"] = {k: report[k] for k in ("urls", "canonical", "duplicates", "duplicate_share")} | {
            "truth": report.get("truth")}
        (out / name / "result.json").write_text(json.dumps(res, indent=1))
        results.append(res)
    (out / "results.json").write_text(json.dumps(results, indent=1))
    if a.doc:
        write_doc(results, Path(a.doc))
    return 0


def doc_only(out: Path, apps: list[str], doc: Path, most: int) -> int:
    results = []
    for name in apps:
        res = json.loads((out / name / "result.json").read_text()) | {"max": most}
        docs = {c: json.loads((out / name / f"crawl-{c.replace(' ', '-')}.json").read_text()) | {
            "seconds": res["crawls"][c]["seconds"]} for c in CRAWLS}
        res |= numbers(docs, res["seeds"], res["rules"], rule_keys(out / name / "rules.json"))
        (out / name / "result.json").write_text(json.dumps(res, indent=1))
        results.append(res)
    write_doc(results, doc)
    return 0


def recount_folders(folders: list[Path], write: bool) -> int:
    """--recount: crawleff.recount of each folder, printed (and stored with ``write``)."""
    from crawleff import crawl_table, recount  # bench/quality/crawleff.py

    from dustbuster.core.errors import DustError

    for folder in folders:
        if not (folder / "result.json").is_file():
            raise SystemExit(f"{folder}: no result.json (give an app folder of a quality run, OUTDIR/APP)")
        try:
            crawl = recount(folder)
        except (DustError, KeyError, ValueError) as exc:  # a bad rules file, a crawl JSON of another shape
            raise SystemExit(f"{folder}: cannot recount: {exc!r}") from None
        print(f"## {folder}\n\n{crawl_table({'crawl': crawl})}")
        print(json.dumps({n: {k: r.get(k) for k in ("distinct", "missed", "lost_by_rules", "not_reached", "changed",
                                                          "at_risk_reached")}
                          for n, r in crawl["crawls"].items()}, indent=1))
        if write:
            res = json.loads((folder / "result.json").read_text()) | {"crawl": crawl}
            (folder / "result.json").write_text(json.dumps(res, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
