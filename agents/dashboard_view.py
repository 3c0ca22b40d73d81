"""The dashboard's JSON (``GET /dashboard/state.json``): every site in a row, one site in detail.

Pure functions of :class:`~dustbuster.agents.dashboard_state.DashboardState` and the rule book, plus a small
cache for what costs a few milliseconds (discovered redundancy, the test URLs each rule changes,
unsafe candidates), computed again only when the site's window or rule-set version changes.
"""

from __future__ import annotations

import logging
import time
from typing import Any

from dustbuster.core.errors import RuleError
from dustbuster.core.canon.rulebook import RuleBook, SiteRules
from dustbuster.core.canon.rulecheck import unsafe_candidate
from dustbuster.core.model.rules import Rule, rule_dicts, rule_from_json
from dustbuster.core.validation.validate import apply_rule

from .dashboard_state import DashboardState, SiteTraffic, VersionLog

log = logging.getLogger(__name__)

SPARK_POINTS = 40  #: points of the small series in the sites table
MAX_CANDIDATES = 60  #: candidate rules shown (the highest ranked)
UNSAFE_SAMPLE = 500  #: test URLs a candidate is checked on for URL mangling
EXAMPLES = 5  #: test URLs shown per rule
CACHE_SITES = 64


class ViewCache:
    """Results per (site, what, window, version); bounded."""

    def __init__(self) -> None:
        self._d: dict[tuple, Any] = {}

    def get(self, key: tuple, compute) -> Any:
        if key not in self._d:
            if len(self._d) > CACHE_SITES * 3:
                self._d.clear()
            self._d[key] = compute()
        return self._d[key]


def snapshot(state: DashboardState, book: RuleBook, site: str | None, cache: ViewCache, worker: str = "",
             now: float | None = None) -> dict[str, Any]:
    now = time.time() if now is None else now
    names = sorted(set(state.traffic) | set(book.sites) | set(state.versions.sites) | set(state.rounds.running))
    rows = [site_row(state, book, s, cache, now) for s in names]
    chosen = site if site in names else (names[0] if names else None)
    return {"now": now, "worker": worker, "sites": rows, "site": chosen,
            "detail": site_detail(state, book, chosen, cache, now) if chosen else None}


def site_row(state: DashboardState, book: RuleBook, site: str, cache: ViewCache, now: float) -> dict[str, Any]:
    st = state.traffic.get(site)
    sr = book.sites.get(site)
    last = st.points[-1] if st and st.points else None
    running, _ = state.rounds.for_site(site)
    cand = (st.candidates if st else None) or {}
    return {"site": site, "lines": last.lines if last else None, "urls": last.urls if last else None,
            "spark": [p.urls for p in list(st.points)[-SPARK_POINTS:]] if st else [],
            "candidates": len(rule_dicts(cand)) if cand else None,
            "version": sr.version if sr else None, "rules": len(sr.rules) if sr else 0,
            "validating": running.phase if running else None,
            "redundancy": redundancy(st, sr, cache, book) if st and sr else None}


def site_detail(state: DashboardState, book: RuleBook, site: str, cache: ViewCache, now: float) -> dict[str, Any]:
    st = state.traffic.get(site)
    sr = book.sites.get(site)
    running, last = state.rounds.for_site(site)
    return {
        "site": site,
        "traffic": [{"t": p.t, "window": p.window, "lines": p.lines, "urls": p.urls} for p in st.points] if st else [],
        "candidates": candidates_view(st, cache) if st and st.candidates else None,
        "round": running.to_json(now) if running else None,
        "last_round": last.to_json(now) if last else None,
        "fetch_budget": state.budgets.get(site),
        "published": published_view(st, sr, cache, state.versions) if sr else None,
        "versions": state.versions.for_site(site),
        "redundancy": redundancy(st, sr, cache, book) if st and sr else None,
    }


def candidates_view(st: SiteTraffic, cache: ViewCache) -> dict[str, Any]:
    cand = st.candidates or {}
    window = cand.get("window")
    raw = rule_dicts(cand)
    shown = sorted(raw, key=lambda r: -_num(r.get("support")))[:MAX_CANDIDATES]
    unsafe = cache.get((st.site, "unsafe", window), lambda: _unsafe(shown, st.test_urls[:UNSAFE_SAMPLE]))
    rules = [{"display": str(r.get("display", "")), "type": r.get("type", "substring"), "support": _num(r.get("support")),
              "support_high": r.get("support_high") if r.get("type", "substring") == "substring" else None,
              "disqualified": r.get("disqualified"), "unsafe": unsafe.get(str(r.get("display", "")))} for r in shown]
    stats = cand["stats"] if isinstance(cand.get("stats"), dict) else {}
    keep = ("lines", "urls", "records", "likely_pairs", "after_elimination", "param_rules", "window_seconds", "worker")
    return {"window": window, "received": cand.get("received"), "count": len(raw), "rules": rules,
            "stats": {k: stats[k] for k in keep if k in stats}, "status": "likely, not validated"}


def _unsafe(rules: list[dict], urls: list[str]) -> dict[str, str]:
    out = {}
    for rj in rules:
        try:
            r = rule_from_json(rj)
        except RuleError:
            continue
        why = unsafe_candidate(r, urls) if urls else None
        if why:
            out[r.text] = why
    return out


def _num(v: Any) -> int:
    return v if isinstance(v, int) and not isinstance(v, bool) else 0


def published_view(st: SiteTraffic | None, sr: SiteRules, cache: ViewCache, versions: VersionLog | None = None) -> dict[str, Any]:
    doc = sr.doc
    window = (st.candidates or {}).get("window") if st else None
    urls = st.test_urls if st else []
    changes = cache.get((sr.site, "changes", window, sr.version), lambda: _changes(sr.rules, urls))
    raw = {str(r.get("display")): r for r in rule_dicts(doc)}
    rules = []
    for k, rule in enumerate(sr.rules):
        rj = raw.get(rule.text, {})
        ev = rj["evidence"] if isinstance(rj.get("evidence"), dict) else {}
        samples = [s for s in ev.get("samples") or [] if isinstance(s, list) and len(s) >= 2]
        samples_version = sr.version
        kept = versions.samples_for(sr.site, rule.text) if versions is not None and not samples else None
        if kept is not None:  # decided in an earlier round (verdict cache): the pairs fetched then
            samples_version, samples = kept[0], [s for s in kept[1] if len(s) >= 2]
        rules.append({"n": k + 1, "display": rule.text, "type": rule.type, "direction": rule.direction,
                      "support": getattr(rule, "support", None), "validated_at": rj.get("validated_at"),
                      "evidence": {key: ev.get(key) for key in ("positives", "negatives", "skipped", "fetches",
                                                                 "applicable", "reason")},
                      "samples": [{"u": str(s[0]), "v": str(s[1]), "outcome": str(s[2]) if len(s) > 2 else ""}
                                  for s in samples[:EXAMPLES]], "samples_version": samples_version,
                      "identities": _identities(ev), "parameters": [f for f in ev.get("parameters") or []
                                                                     if isinstance(f, dict)][:8],
                      "changes": changes.get(rule.text, {"count": 0, "examples": []})})
    stats = doc["stats"] if isinstance(doc.get("stats"), dict) else {}
    return {"version": sr.version, "created": doc.get("created"), "rules": rules,
            "set_check": stats.get("set_check"), "test_urls": len(urls),
            "stats": {k: stats.get(k) for k in ("candidates", "valid", "decided", "cached", "fetches", "undecided",
                                                 "window", "seconds", "fetch_outcomes", "identity_signals")}}


def _changes(rules: tuple[Rule, ...], urls: list[str]) -> dict[str, dict[str, Any]]:
    """Per rule: how many of the site's test URLs it changes, and a few of them (u → R(u))."""
    out = {}
    for r in rules:
        n = 0
        examples: list[list[str]] = []
        for u in urls:
            v = apply_rule(r, u)
            if v != u:
                n += 1
                if len(examples) < EXAMPLES:
                    examples.append([u, v])
        out[r.text] = {"count": n, "examples": examples}
    return out


def redundancy(st: SiteTraffic | None, sr: SiteRules | None, cache: ViewCache, book: RuleBook) -> dict | None:
    """Discovered redundancy (WWW 2007 §3) of the site's newest test URLs under its current rule
    set, as the workers canonicalize (normalization, then the rules)."""
    if st is None or sr is None or not st.test_urls:
        return None
    window = (st.candidates or {}).get("window")

    def compute() -> dict:
        before = set(st.test_urls)
        after = {book.canonize(u, sr.site).canonical for u in before}
        share = (len(before) - len(after)) / len(before)
        return {"urls": len(before), "unique_before": len(before), "unique_after": len(after),
                "discovered_redundancy": round(share, 4)}

    return cache.get((sr.site, "redundancy", window, sr.version), compute)


def _identities(ev: dict) -> list[dict]:
    """The first sample pairs' identity evidence (core/validation/identity.py), each side cut to what a person reads:
    status, title, declared canonical, final URL."""
    keep = ("status", "title", "canonical", "final_url")
    out = []
    for x in [x for x in ev.get("identities") or [] if isinstance(x, dict)][:EXAMPLES]:
        side = {k: {f: x[k].get(f) for f in keep if x[k].get(f) is not None} if isinstance(x.get(k), dict) else {}
                for k in ("u", "v")}
        out.append(side | {"outcome": str(x.get("outcome", ""))})
    return out
