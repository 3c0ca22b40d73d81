"""``dustbuster eval``: rule sets and two baselines scored against a content ground truth
(``dustbuster truth``) with the papers' metrics (dustbuster.core.report.evaluate), side by side."""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING, Callable

from dustbuster.core.errors import ConfigError, DustError

if TYPE_CHECKING:  # imported where used: the commands that need no canonizer import none
    from dustbuster.core.canon.canonize import Canonizer

EPILOG = """\
examples:
  dustbuster truth test.log --site s.com --sites sites.json -o truth.jsonl
  dustbuster eval --truth truth.jsonl rules.json candidates.json
  dustbuster eval --truth truth.jsonl rules.json --json > scores.json
  dustbuster eval --truth truth.jsonl rules.json --html report.html
Rule files: a RuleSet (dustbuster validate, docs/ruleset.schema.json) applies its 'valid' rules; any
other document with no valid rule (dustbuster mine --json) is applied as unvalidated candidates, each
candidate that would mangle URLs on its own left out (as `canonize --unvalidated`).  Baselines:
KeepAll (every URL is its own canonical form) and w3lib's canonicalize_url (needs w3lib).
Metrics: discovered redundancy and coverage (WWW 2007 §3 "Metrics"), duplicates removed
correctly, false merges (a canonical form over different contents), and SIGIR 2017's crawl
simulation precision, recall and F1; each overall and per URL class.  docs/quality.md.
"""


def add_parser(sub, common) -> argparse.ArgumentParser:
    e = sub.add_parser("eval", parents=[common], help="score rule sets against a content ground truth",
                       description="Canonicalize the URLs of a truth file (dustbuster truth) with each rule set, "
                       "and with the KeepAll and w3lib baselines, and print the papers' metrics side by side: "
                       "discovered redundancy, coverage, false merges, crawl-simulation precision/recall/F1, "
                       "overall and per URL class.", epilog=EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter)
    e.add_argument("rules", nargs="*", metavar="RULES.json", help="rule files (RuleSet or mine --json output)")
    e.add_argument("--truth", required=True, metavar="TRUTH.jsonl", help="the truth file of dustbuster truth")
    e.add_argument("--json", action="store_true", help="print one JSON document instead of tables")
    e.add_argument("--html", metavar="REPORT.html", help="also write a self-contained HTML report (table and charts)")
    e.add_argument("--examples", type=int, default=3, help="false-merge examples per canonicalizer (default %(default)s)")
    e.add_argument("--classes", type=int, default=12, help="URL classes shown in tables (default %(default)s; JSON has all)")
    e.add_argument("--model", action="append", default=[], metavar="DIR",
                   help="also score a learned model alone as the canonicalizer (dustbuster learn; the paper's "
                   "use, unvalidated; needs the [learned] extra); repeatable")
    e.add_argument("--no-w3lib", action="store_true", help="leave out the w3lib baseline")
    e.add_argument("--ma", type=int, default=10, help="max canonization iterations (default %(default)s)")
    return e


def load_truth(path: str) -> tuple[list, dict]:
    """The evaluated pages (fetched, clustered) in order, and counts of the records left out."""
    from dustbuster.core.report.evaluate import Page, unique_in_order

    p = Path(path)
    if not p.is_file():
        raise ConfigError(f"no such truth file: {path} (make it with dustbuster truth)")
    pages, left = [], {"records": 0, "failed": 0, "unclustered": 0}
    with open(p, encoding="utf-8") as fh:
        for n, line in enumerate(fh, 1):
            try:
                d = json.loads(line)
                url = d["url"]
            except (ValueError, KeyError, TypeError):
                raise DustError(f"{path}:{n}: not a truth record") from None
            left["records"] += 1
            if not d.get("ok"):
                left["failed"] += 1
            elif d.get("cluster") is None:
                left["unclustered"] += 1
            else:
                pages.append(Page(url, d["cluster"], str(d.get("class") or "")))
    if left["unclustered"]:
        raise DustError(f"{path}: {left['unclustered']} pages have no cluster: the truth run was interrupted; "
                        "run dustbuster truth again to finish it")
    if not pages:
        raise DustError(f"{path}: no fetched page to evaluate ({left['failed']} failed records)")
    return unique_in_order(pages), left


def w3lib_canon() -> Callable[[str], str] | None:
    try:
        from w3lib.url import canonicalize_url
    except ImportError:
        return None
    return canonicalize_url


def rule_canon(path: str, ma: int, quiet: bool) -> tuple[Canonizer, dict]:
    """The canonicalizer of a rule file and what it is: valid rules, or unvalidated candidates
    screened like ``canonize --unvalidated``."""
    from dustbuster.core.canon.admission import screen_rules
    from dustbuster.core.canon.canonize import Canonizer
    from dustbuster.core.model.rules import SCHEMA_RULESET

    from .common import read_rules

    doc, rules = read_rules(path)
    valid = [r for r in rules if r.status == "valid"]
    info = {"file": path, "site": doc.get("site"), "rules_in_file": len(rules), "stats": doc.get("stats") or {}}
    if valid or doc.get("schema") == SCHEMA_RULESET:  # a RuleSet, even an empty one
        info.update(kind="validated", applied=len(valid), left_out=len(rules) - len(valid))
        return Canonizer(valid, ma), info
    ok, bad = screen_rules(str(doc.get("site") or "rules-file"), rules, ma)
    for r, why in bad:
        if not quiet:
            sys.stderr.write(f"note: {path}: not applying {r.text}: {why}\n")
    info.update(kind="unvalidated", applied=len(ok), left_out=len(bad))
    return Canonizer(ok, ma), info


def canonicalizers(a: argparse.Namespace, urls: list[str]) -> list[tuple[str, Callable[[str], str], dict]]:
    out: list[tuple[str, Callable[[str], str], dict]] = [("KeepAll", lambda u: u, {"kind": "baseline"})]
    if not a.no_w3lib:
        w3 = w3lib_canon()
        if w3 is None:
            if not a.quiet:
                sys.stderr.write("note: w3lib is not installed: the w3lib baseline is left out "
                                 "(pip install w3lib, or the project's 'bench' extra: pip install -e '.[bench]')\n")
        else:
            out.append(("w3lib canonicalize_url", w3, {"kind": "baseline"}))
    for path in a.rules:
        canon, info = rule_canon(path, a.ma, a.quiet)
        out.append((f"{Path(path).name} ({info['kind']}, {info['applied']} rules)", canon, info))
    for path in a.model:
        out.append(model_canon(path, urls))
    return out


def model_canon(path: str, urls: list[str]) -> tuple[str, Callable[[str], str], dict]:
    """A learned model alone (SIGIR 2017 §2: each URL → the model's form), predicted in one pass."""
    try:
        from dustbuster.learned.canonizer import LearnedCanonizer
    except ImportError:
        raise ConfigError("--model needs the learned canonizer's JAX: pip install 'dustbuster[learned]'") from None
    canon = LearnedCanonizer.load(Path(path))
    canon.canonicalize_all(urls)
    name = f"learned model alone ({Path(path).parent.name}/{Path(path).name})"
    return name, canon, {"kind": "learned model (unvalidated)", "file": path, "applied": 0,
                         "dropped": dict(canon.dropped)}


def run(a: argparse.Namespace) -> int:
    from dustbuster.core.report.evaluate import by_class, consistent, score

    t0 = time.perf_counter()
    pages, left = load_truth(a.truth)
    results = []
    for name, canon, info in canonicalizers(a, [p.url for p in pages]):
        memo: dict[str, str] = {}

        def cached(u: str, canon=canon, memo=memo) -> str:
            if u not in memo:
                memo[u] = canon(u)
            return memo[u]

        overall = score(pages, cached, a.examples)
        bad = consistent(overall)
        if bad:  # a bug, not a user error: say so loudly
            raise DustError(f"inconsistent scores for {name}: {', '.join(bad)}")
        results.append({"name": name, **info, "overall": overall, "classes": by_class(pages, cached, 1)})
    doc = to_json(a.truth, len(pages), left, results, time.perf_counter() - t0)
    if a.json:
        json.dump(doc, sys.stdout, indent=1, ensure_ascii=False)
        sys.stdout.write("\n")
    else:
        print_tables(doc, a.classes, sys.stdout)
    if a.html:
        from .evalhtml import render, truth_identities

        wanted = {u for r in doc["results"] for m in r["overall"]["false_merge_examples"] for u, _c in m["urls"]}
        Path(a.html).write_text(render(doc, truth_identities(a.truth, wanted)), encoding="utf-8")
        if not a.quiet:
            sys.stderr.write(f"wrote {a.html}\n")
    return 0


def to_json(truth: str, pages: int, left: dict, results: list[dict], seconds: float) -> dict:
    return {"schema": "dustbuster/eval@1", "truth": truth, "pages": pages, "left_out": left,
            "seconds": round(seconds, 3),
            "results": [{k: v for k, v in r.items() if k not in ("overall", "classes")}
                        | {"overall": r["overall"].to_json(),
                           "classes": {c: s.to_json() for c, s in r["classes"].items()}} for r in results]}


def _pct(x) -> str:
    return "–" if x is None else f"{x:.1%}"


def print_tables(doc: dict, classes: int, out) -> None:
    lo = doc["left_out"]
    out.write(f"# {doc['truth']}: {doc['pages']} pages evaluated ({lo['failed']} failed fetches left out)\n")
    head = f"{'canonicalizer':<44} {'URLs':>6} {'after':>6} {'redund.':>8} {'coverage':>8} {'removed':>8} " \
           f"{'false merges':>12} {'prec.':>6} {'recall':>6} {'F1':>6}\n"
    out.write(head)
    for r in doc["results"]:
        s = r["overall"]
        fm = f"{s['false_merge_groups']} ({s['false_merge_urls']})"
        out.write(f"{r['name'][:44]:<44} {s['urls']:>6} {s['crawled']:>6} {_pct(s['redundancy']):>8} "
                  f"{_pct(s['coverage']):>8} {_pct(s['removed_share']):>8} {fm:>12} {s['precision']:>6.3f} "
                  f"{s['recall']:>6.3f} {s['f1']:>6.3f}\n")
    out.write("redund. = discovered redundancy; coverage = WWW 2007's; removed = duplicates removed with the right "
              "page kept; false merges = groups (URLs)\n")
    first = doc["results"][0]["classes"]
    names = list(first)[:classes]
    out.write(f"\n# per URL class: F1 / false-merge groups ({len(first)} classes, the {len(names)} largest)\n")
    out.write(f"{'class':<20} {'URLs':>5} {'dups':>5}" + "".join(f" {r['name'][:18]:>18}" for r in doc["results"]) + "\n")
    for c in names:
        s0 = first[c]
        row = f"{c[:20]:<20} {s0['urls']:>5} {s0['duplicates_before']:>5}"
        for r in doc["results"]:
            s = r["classes"].get(c)
            row += f" {s['f1']:>11.3f} / {s['false_merge_groups']:<4}" if s else f" {'':>18}"
        out.write(row + "\n")
    from dustbuster.core.report.evaluate import one_per_content

    for r in doc["results"]:
        ex = r["overall"]["false_merge_examples"]
        if ex:
            out.write(f"\n# false merges of {r['name']} (of {r['overall']['false_merge_groups']}):\n")
            for m in ex:
                out.write(f"  {m['canonical']}\n")
                for u, c in one_per_content(m["urls"])[:4]:
                    out.write(f"      content {c:>5}  {u}\n")


__all__ = ["add_parser", "run", "load_truth", "rule_canon"]
