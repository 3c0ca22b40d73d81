"""``dustbuster candidates``: each site's newest candidate set on the candidates topic (likely
rules of the streaming workers, not validated)."""

from __future__ import annotations

import argparse
import json
import sys
import time

from dustbuster.core.errors import DustError

from .common import settings as kafka_settings


def add_parser(sub, common) -> argparse.ArgumentParser:
    cs = sub.add_parser("candidates", parents=[common], help="print the latest candidate rules of each site",
                        description="Read the candidates topic from the start and print each site's newest "
                        "candidate set (likely rules from the streaming workers).")
    cs.add_argument("--site", help="only this site")
    cs.add_argument("--wait-lines", type=int, default=0, metavar="N",
                    help="wait until the site's candidate set has seen N lines (needs --site)")
    cs.add_argument("--timeout", type=float, default=300, help="seconds to wait (default %(default)s)")
    cs.add_argument("--json", action="store_true", help="print the JSON candidate sets")
    cs.add_argument("--limit", type=int, default=20, help="rules per site in the table (default %(default)s)")
    cs.add_argument("--bootstrap", help="Kafka bootstrap servers (DUST_KAFKA_BOOTSTRAP)")
    return cs


def run(a: argparse.Namespace) -> int:
    if a.wait_lines and not a.site:
        raise DustError("--wait-lines needs --site")
    settings = kafka_settings(a)
    sets = _wait_for_sets(a, settings)
    if a.json:
        json.dump(sets, sys.stdout, indent=1, ensure_ascii=False)
        sys.stdout.write("\n")
        return 0
    if a.site and not sets:
        raise DustError(f"no candidate set for site {a.site!r} on {settings.candidates_topic} (nothing fed yet?)")
    if not sets:
        sys.stderr.write(f"no candidate set on {settings.candidates_topic} yet: feed lines with `dustbuster feed`\n")
    for site, d in sorted(sets.items()):
        _print_candidates(site, d, a.limit)
    return 0


def _wait_for_sets(a: argparse.Namespace, settings) -> dict[str, dict]:
    """The newest candidate set of each site (of --site only), once --wait-lines are seen."""
    import asyncio

    from dustbuster.stream.consume import latest_by_key

    deadline = time.monotonic() + a.timeout
    while True:
        latest = asyncio.run(latest_by_key(settings.kafka_bootstrap, settings.candidates_topic))
        sets = {k: v for k, v in latest.items() if not a.site or k == a.site}
        ready = not a.wait_lines or (a.site in sets and sets[a.site]["stats"].get("lines", 0) >= a.wait_lines)
        if ready or time.monotonic() > deadline:
            break
        time.sleep(1.0)
    if not ready:
        raise DustError(f"no candidate set of {a.site} with {a.wait_lines} lines within {a.timeout:.0f}s")
    return sets


def _window_name(d: dict) -> str:
    """The window as a person reads it: the time of its last line (its id is a count of windows
    since 1970, which says nothing to a reader), with the id for the record."""
    last = (d.get("stats") or {}).get("ingest_last")
    if isinstance(last, (int, float)) and not isinstance(last, bool) and last > 0:
        stamp = time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime(last))
        return f"window {d['window']} (lines up to {stamp})"
    return f"window {d['window']}"


def _print_candidates(site: str, d: dict, limit: int) -> None:
    """A candidate set for a person: likely rules (not validated), unsafe ones flagged."""
    from dustbuster.core.errors import RuleError
    from dustbuster.core.canon.rulecheck import unsafe_candidate
    from dustbuster.core.model.rules import PAPER_TYPES, document_rules_json, rule_from_json
    from dustbuster.core.canon.urlreach import URLReach

    st = d["stats"]
    urls = list(d.get("test_urls") or [])[:5000]
    reach = URLReach(urls) if urls and "unsafe_flagged" not in st else None  # shared by the rules' checks
    every = document_rules_json(d)  # one list (mine@2), or the three lists of an older worker
    pairs = [r for r in every if r.get("type", "substring") == "substring"]
    params = [r for r in every if r.get("type") == "parameter"]
    general = [r for r in every if r.get("type", "substring") not in PAPER_TYPES]
    listed = f" (+ {st['listed_urls']} listed)" if st.get("listed_urls") else ""  # the frontier, fetched links
    print(f"# {site}: {_window_name(d)}, {st.get('lines')} lines, {st.get('urls')} unique URLs{listed}, "
          f"{len(pairs)} likely rules, {len(params)} parameter rules"
          + (f", {len(general)} query/case/pattern rules" if general else "") + " (candidates, not validated)")
    for r in pairs[: limit] + params + general:
        why = r.get("unsafe")  # the window's flag, as `dustbuster mine` gives it (core.mine.unsafe_flags)
        if "unsafe_flagged" not in st:  # a set of a worker older than the flags: judged on its test URLs
            try:
                why = unsafe_candidate(rule_from_json(r), urls, reach) if urls else None
            except RuleError:
                why = "does not parse"
        kind = r.get("type", "substring")
        second = {"substring": r.get("support_high"), "pattern": f"{r.get('members')} lit"}.get(kind, r.get("disqualified"))
        print(f"{r['support']:>7} {second:>6}  {r['display']}" + (f"   UNSAFE: {why}" if why else ""))
