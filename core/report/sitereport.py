"""A site owner's report: how much of a crawl of the site is duplicate, which rules say
so and on what evidence, the parameters and paths that make the most duplicates, and for each rule
what the site could do itself (a 301, a declared canonical, a robots.txt ``Clean-param``).  Pure:
from a RuleSet document, the site's URL counters (each distinct URL of its log and its hits) and,
optionally, the content truth of ``dustbuster truth`` (records with ``cluster``).
``dustbuster report`` renders it as JSON and as one self-contained HTML page.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from typing import Any, Mapping
from urllib.parse import parse_qsl, urlsplit

from dustbuster.core.canon.rulebook import RuleBook
from dustbuster.core.model.rules import Rule, rules_from_document
from dustbuster.core.report.truth import url_class

TOP = 12


def advice(rule: Rule) -> dict[str, str]:
    """What the site could do itself so that crawlers never see the duplicates of ``rule``."""
    canonical = "declare the canonical URL in each page (<link rel=\"canonical\">), which Google and Bing read"
    own = rule.site_advice()  # the rule type's (redirect, robots)
    return {k: own[k] for k in ("redirect",) if k in own} | {"canonical": canonical} | {
        k: v for k, v in own.items() if k != "redirect"}


def _removed_params(url: str, canonical: str) -> set[str]:
    before = {k for k, _ in parse_qsl(urlsplit(url).query, keep_blank_values=True)}
    after = {k for k, _ in parse_qsl(urlsplit(canonical).query, keep_blank_values=True)}
    return before - after


def _canonized(site: str, doc: Mapping[str, Any], urls: Mapping[str, int]) -> tuple[dict, dict]:
    """(url → canonical URL, url → the rules that changed it)"""
    book = RuleBook()  # the rule book's admission, as a crawler's: a set it refuses raises RuleError
    book.update(site, dict(doc) | {"rules": [r for r in doc.get("rules", []) if r.get("status") == "valid"]})
    canon, applied = {}, {}
    for u in urls:
        res = book.canonize(u, site)
        canon[u], applied[u] = res.canonical, res.rules
    return canon, applied


def site_report(site: str, doc: Mapping[str, Any], urls: Mapping[str, int],
                truth: Mapping[str, Mapping] | None = None) -> dict:
    """The report's data.  ``urls``: each distinct URL of the site and its hits (the counters)."""
    rules = [r for r in rules_from_document(doc) if r.status == "valid"]
    canon, applied = _canonized(site, doc, urls)
    first: dict[str, str] = {}  # each canonical URL's one kept URL: itself when crawled, else the first seen
    for u in urls:
        first.setdefault(canon[u], canon[u] if canon[u] in urls else u)
    dupes = [u for u in urls if first[canon[u]] != u]
    per_rule: Counter[str]
    params: Counter[str]
    classes: defaultdict[str, dict[str, Any]]
    per_rule, params, classes = Counter(), Counter(), defaultdict(lambda: {"urls": 0, "duplicates": 0})
    for u in urls:
        c = classes[url_class(u)]
        c["urls"] += 1
        for text in dict.fromkeys(applied[u]):
            per_rule[text] += 1
    for u in dupes:
        classes[url_class(u)]["duplicates"] += 1
        params.update(_removed_params(u, canon[u]))
    n = len(urls)
    out = {"site": site, "version": doc.get("version"), "urls": n, "hits": sum(urls.values()),
           "canonical": len(first), "duplicates": len(dupes), "duplicate_share": len(dupes) / n if n else 0.0,
           "duplicate_hits": sum(urls[u] for u in dupes),
           "rules": [_rule_row(r, per_rule[r.text]) for r in rules],
           "parameters": [{"name": k, "duplicates": v} for k, v in params.most_common(TOP)],
           "classes": sorted(({"class": k} | v for k, v in classes.items()), key=lambda c: (-c["duplicates"], c["class"])),
           "examples": [{"url": u, "canonical": canon[u]} for u in dupes[:TOP]]}
    if truth:
        out["truth"] = _truth(urls, canon, truth)
    return out


def _rule_row(rule: Rule, urls: int) -> dict:
    ev = rule.evidence or {}
    return {"rule": rule.text, "type": rule.type, "urls_rewritten": urls,
            "evidence": {k: ev.get(k) for k in ("positives", "negatives", "distinct_pages", "fetches", "reason")},
            "samples": [list(s) for s in (ev.get("samples") or [])[:3]], "advice": advice(rule)}


def _truth(urls: Mapping[str, int], canon: Mapping[str, str], truth: Mapping[str, Mapping]) -> dict:
    """Against the content truth: the duplicates there are, the share the rules find, false merges."""
    known = [u for u in urls if (truth.get(u) or {}).get("cluster") is not None]
    pages = {truth[u]["cluster"] for u in known}
    groups: dict[str, set] = defaultdict(set)
    for u in known:
        groups[canon[u]].add(truth[u]["cluster"])
    true_dupes = len(known) - len(pages)
    under = Counter(c for g in groups.values() for c in g)  # a page: how many canonical URLs reach it
    left = sum(k - 1 for k in under.values())
    return {"urls": len(known), "pages": len(pages), "duplicates": true_dupes,
            "duplicate_share": true_dupes / len(known) if known else 0.0,
            "found": true_dupes - left, "found_share": (true_dupes - left) / true_dupes if true_dupes else 1.0,
            "left": left, "false_merges": sum(len(g) > 1 for g in groups.values())}
