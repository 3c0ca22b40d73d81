"""``dustbuster mine``: phases 1-3 of DustBuster on the URLs of log files, without Kafka."""

from __future__ import annotations

import argparse
import json
import logging
import os
import sys
import time
from pathlib import Path

from dustbuster.core.errors import DustError
from dustbuster.core.mining.collector import quiet_collector
from dustbuster.logs.formats import format_help
from dustbuster.logs.sitecap import DEFAULT_MAX_URLS_PER_SITE, SiteCap

from . import progress as prog
from .common import add_params, add_url_lists, nothing_read_hint, params, read_url_lists
from .jobs import AUTO, DEFAULT_MAX_MEMORY_MB, MinePlan, jobs_arg, mine_processes, read_processes

log = logging.getLogger(__name__)

EPILOG = """\
examples:
  dustbuster mine access.log --site www.example.com
  dustbuster mine crawl.log --json > rules.json       # hosts and digests come from the log
  dustbuster mine a.log b.log.gz --stage detect --t-low 6 --ms 3
  dustbuster mine access.log --urls frontier.txt --site www.example.com   # + a crawler's URLs
Status >= 400 lines are dropped, 304/redirects list the URL without a size, malformed lines are
counted by reason (and written with their line numbers with --rejects FILE).  docs/semantics.md
"""


def add_parser(sub, common) -> argparse.ArgumentParser:
    m = sub.add_parser("mine", parents=[common], help="mine likely DUST rules from log files (no Kafka needed)",
                       description="Phases 1-3 of DustBuster on a URL list read from logs: "
                       "detect likely rules (Fig. 1), eliminate redundant ones (Fig. 2), detect "
                       "parameter rules (thesis §5.3).  Nothing is fetched.",
                       epilog=EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter)
    m.add_argument("logs", nargs="+", metavar="LOG", help="log files (gzip and bzip2 read by their first bytes; - for stdin)")
    m.add_argument("--site", help="host for log lines that carry none (common/combined)")
    m.add_argument("--scheme", default="http", choices=("http", "https"), help="scheme for such lines (default http)")
    m.add_argument("--format", default="auto", help=format_help())
    m.add_argument("--stage", default="eliminate", choices=("detect", "eliminate"), help="stop after phase 1 (detect) or 2 (default)")
    m.add_argument("--json", action="store_true", help="print the JSON document instead of a table")
    m.add_argument("-o", "--output", metavar="FILE", help="write the table or JSON here instead of stdout")
    m.add_argument("--limit", type=int, default=0, help="print at most N rules in the table (0 = all)")
    m.add_argument("--rejects", metavar="FILE", help="write rejected lines with line numbers and reasons")
    m.add_argument("--max-url-length", type=int, default=2048, help="reject longer URLs (default %(default)s)")
    m.add_argument("--max-tokens", type=int, default=256, help="reject URLs with more tokens (default %(default)s)")
    m.add_argument("--max-urls-per-site", type=int, default=DEFAULT_MAX_URLS_PER_SITE, metavar="N",
                   help="mine at most the first N distinct URLs of each site (host) in log order, as the "
                   "streaming worker does (DUST_MAX_URLS_PER_SITE); a site that reaches it is mined on that "
                   "sample, said on stderr and in the JSON's stats.sample (default %(default)s; 0 = no cap)")
    m.add_argument("--jobs", type=jobs_arg, default=AUTO, metavar="N",
                   help="processes: N read a large log's ranges, and with 2 or more Figure 1's supports are "
                   "counted in a second process while this one runs phase 3 and the other miners (the same "
                   "rules, sooner, more memory at once); auto (default): every usable CPU reads, and two "
                   "processes mine where the CPUs, the list's size and --max-memory allow (docs/performance.md)")
    m.add_argument("--max-memory", type=int, default=DEFAULT_MAX_MEMORY_MB, metavar="MB",
                   help="the memory --jobs auto plans for: two processes mine only where their estimated "
                   "peak together fits (default %(default)s)")
    add_url_lists(m)
    add_params(m)
    return m


def run(a: argparse.Namespace) -> int:
    from dustbuster.core.mining.mine import candidate_count, mine, unsafe_flags
    from dustbuster.core.mining.parallel import mine_two_or_alone

    show = prog.enabled(a.quiet)
    if a.max_urls_per_site < 0:
        raise DustError("--max-urls-per-site must be >= 0 (0 = no cap)")
    if a.max_memory < 1:
        raise DustError("--max-memory must be >= 1 (MB)")
    cap = SiteCap(a.max_urls_per_site)
    ul, stats, read_s = _read(a, show, cap)
    for line in cap.warnings():  # said even with -q: the rules are a sample's
        sys.stderr.write(line + "\n")
    plan = mine_processes(a.jobs, len(ul), sum(map(len, ul.infos)), a.max_memory)
    log.info("mining %s URLs: %s", len(ul), plan.why)
    with quiet_collector():
        bar = prog.StageBar(show)
        try:
            test_urls = ul.test_urls()
            if plan.processes > 1:  # each process judges the candidates it mines: result.unsafe set
                result, lost = mine_two_or_alone(ul, params(a), a.stage, progress=bar, unsafe_urls=test_urls)
                if lost is not None:  # killed (out of memory?): this process mined the list alone
                    log.warning("%s; the list was mined again in this process alone", lost)
                    plan = MinePlan(1, "one process (the second was lost)")
            else:
                result = mine(ul, params(a), a.stage, progress=bar)
                result.unsafe = unsafe_flags(result, test_urls)
        finally:
            bar.close()
        result.stats = {"read": stats.to_dict(), "read_seconds": round(read_s, 3), **result.stats,
                        "listed_urls": len(ul.listed), "candidates": candidate_count(result), "sample": cap.to_dict()}
        unsafe = result.unsafe
    out = open(a.output, "w", encoding="utf-8") if a.output else sys.stdout
    try:
        if a.json:
            _write_json(result, out)
        else:
            _print_table(result, a.limit, unsafe, out)
        out.flush()
    finally:
        if a.output:
            out.close()
    if not a.quiet:
        _print_summary(result.stats)
        sys.stderr.write(f"mined by {plan.why}\n")
    return 0


def _read(a: argparse.Namespace, show: bool, cap: SiteCap | None = None):
    """The URL list of the logs, the read statistics and the seconds it took; no URL is an error."""
    from dustbuster.logs.record import Limits
    from dustbuster.logs.reader import ReadStats, RejectSink, read_urllist

    total = sum(os.path.getsize(p) for p in a.logs if p != "-" and Path(p).exists())
    on_bytes, close_bar = prog.byte_bar(total, show)
    stats = ReadStats()
    rej_fh = open(a.rejects, "w", encoding="utf-8") if a.rejects else None
    t0 = time.perf_counter()
    try:
        ul, stats = read_urllist(
            a.logs, a.format, a.site, a.scheme,
            limits=Limits(a.max_url_length, a.max_tokens), stats=stats,
            rejects=RejectSink(rej_fh), on_bytes=on_bytes, cap=cap, jobs=read_processes(a.jobs),
        )
        read_url_lists(ul, a.urls, a.site, a.scheme, stats)
    finally:
        close_bar()
        if rej_fh:
            rej_fh.close()
    if not len(ul) and not ul.listed:
        raise DustError(nothing_read_hint(a.logs, stats.to_dict()))
    return ul, stats, time.perf_counter() - t0


def _write_json(result, out) -> None:
    json.dump(result.to_json(), out, indent=1, ensure_ascii=False)
    out.write("\n")


def _print_table(result, limit: int, unsafe: dict[str, str] | None = None, out=None) -> None:
    from dustbuster.core.model.rules import SubstringRule

    unsafe = unsafe or {}
    out = out or sys.stdout
    pairs = result.kept if result.stage == "eliminate" else result.detected
    title = "likely rules after redundancy elimination" if result.stage == "eliminate" else "phase-1 likely pairs (T_low supports)"
    out.write(f"# {title}: {len(pairs)} (α → β is the shrinking direction)\n")
    out.write(f"{'rank':>5} {'support':>7} {'sup_hi':>6}  rule\n")
    for rank, p in enumerate(pairs[: limit or None], 1):
        text = SubstringRule(p.alpha, p.beta).text
        note = f"   UNSAFE: {unsafe[text]}" if text in unsafe else ""
        out.write(f"{rank:>5} {p.support:>7} {p.support_high:>6}  {text}{note}\n")
    prules = result.param_rules()
    if result.scoped_params is None:
        out.write(f"# parameter rules: {len(result.param_kept)} kept of {len(result.param_candidates)} candidates\n")
    else:
        scoped = sum(1 for r in prules if r.scope and "?" not in r.scope)
        fixed = sum(1 for r in prules if "?" in r.scope)
        out.write(f"# parameter rules: {len(prules)} ({scoped} under a path scope, "
                  + (f"{fixed} under a query-parameter scope, " if fixed else "")
                  + f"{len(prules) - scoped - fixed} for the whole site; the thesis' global test keeps "
                  f"{len(result.param_kept)} of {len(result.param_candidates)})\n")
    _print_rules(prules, unsafe, out)
    if result.scoped_params is not None:
        out.write(f"# query, case and pattern rules (beyond the paper, docs/rules.md): {len(result.general)}\n")
        _print_rules(result.general, unsafe, out)
    out.write("# these are candidates, not validated: `dustbuster validate` fetches pages to decide them"
              + (f"; {len(unsafe)} flagged UNSAFE would mangle URLs if applied" if unsafe else "") + "\n")


def _print_rules(rules, unsafe: dict[str, str], out) -> None:
    """support / disqualified (or the family size of a pattern rule) and the readable rule."""
    if not rules:
        return
    out.write(f"{'support':>7} {'disq':>6}  rule\n")
    for r in rules:
        other = f"{r.members} lit" if hasattr(r, "members") else str(getattr(r, "disqualified", ""))
        note = f"   UNSAFE: {unsafe[r.text]}" if r.text in unsafe else ""
        out.write(f"{r.support:>7} {other:>6}  {r.text}{note}\n")


def _print_summary(stats: dict) -> None:
    rd = stats["read"]
    rej = ", ".join(f"{k}={v}" for k, v in rd["rejected"].items()) or "none"
    skip = ", ".join(f"{k}={v}" for k, v in rd["skipped"].items()) or "none"
    sys.stderr.write(
        f"read {rd['lines']} lines ({', '.join(sorted(set(rd['formats'].values())))}): "
        f"{rd['records']} records, {rd['dropped_status']} dropped (status >= 400), "
        f"skipped: {skip}; rejected: {rej}\n"
        f"{stats['urls']} unique URLs ({stats['urls_with_size']} with a size)"
        + (f" + {stats['listed_urls']} listed (--urls)" if stats.get("listed_urls") else "") + ", "
        f"{stats['likely_pairs']} likely pairs"
        + (f", {stats['after_elimination']} after elimination" if "after_elimination" in stats else "")
        + f", {stats['param_rules']} parameter rules"
        + (f", {stats['general_rules']} query/case/pattern rules" if "general_rules" in stats else "")
        + f" ({stats['candidates']} candidates"
        + (f", {stats['query_scoped_rules']} under a query-parameter scope" if stats.get("query_scoped_rules") else "")
        + (f", {stats['generalised_scopes']} at a generalised scope" if stats.get("generalised_scopes") else "")
        + (f", {stats['general_literal_rules']} general over literal rules" if stats.get("general_literal_rules") else "")
        + "); "
        f"{stats['read_seconds'] + stats['detect_seconds'] + stats.get('eliminate_seconds', 0) + stats['param_seconds'] + stats.get('general_seconds', 0):.2f}s\n"
    )
