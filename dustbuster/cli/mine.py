"""``dustbuster``: the command line.

Only this entry point (and agents/) may import the Faust app; the subcommands here that need no
Kafka (mine, canonize) import only core/ and the log readers.
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import sys
import time
from pathlib import Path

from dustbuster.core.errors import ConfigError, DustError
from dustbuster.core.params import DustParams

from . import __version__
from . import crawlcli, evalcli, truthcli, validatecli
from . import progress as prog

log = logging.getLogger("dustbuster")

EPILOG_MINE = """\
examples:
  dustbuster mine access.log --site www.example.com
  dustbuster mine crawl.log --json > rules.json       # hosts and digests come from the log
  dustbuster mine a.log b.log.gz --stage detect --t-low 6 --ms 3
Status >= 400 lines are dropped, 304/redirects list the URL without a size, malformed lines are
counted by reason (and written with their line numbers with --rejects FILE).  docs/semantics.md
"""

def _add_params(p: argparse.ArgumentParser) -> None:
    d = DustParams()
    g = p.add_argument_group("DustBuster parameters (defaults: thesis §6.2)")
    g.add_argument("--S", type=int, default=d.S, help="max substring length in tokens (default %(default)s)")
    g.add_argument("--t-low", type=int, default=d.t_low, help="overflow threshold for ranking (default %(default)s)")
    g.add_argument("--t-high", type=int, default=d.t_high, help="overflow threshold for elimination (default %(default)s)")
    g.add_argument("--ms", type=int, default=d.ms, help="minimum support (default %(default)s)")
    g.add_argument("--mrd", type=float, default=d.mrd, help="max relative deficiency (default %(default)s)")
    g.add_argument("--mad", type=int, default=d.mad, help="max absolute deficiency (default %(default)s)")
    g.add_argument("--mw", type=int, default=d.mw, help="max window size (default %(default)s)")
    g.add_argument("--param-min-ratio", type=float, default=d.param_min_ratio, help="parameter rules: min likely-similar fraction (default %(default)s)")
    g.add_argument("--sketch-threshold", type=float, default=d.sketch_threshold, help="sketches: fraction of equal min-hashes (default %(default)s = all)")
    g.add_argument("--no-similarity", action="store_true", help="disable the LikelySimilar filter (sizes/digests)")


def _params(a: argparse.Namespace) -> DustParams:
    return DustParams(
        S=a.S, t_low=a.t_low, t_high=a.t_high, ms=a.ms, mrd=a.mrd, mad=a.mad, mw=a.mw,
        param_min_ratio=a.param_min_ratio, sketch_threshold=a.sketch_threshold,
        similarity=not a.no_similarity,
    )


def build_parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(
        prog="dustbuster",
        description="Learn per-site DUST rules (Different URLs with Similar Text) from logs, "
        "validate them against the live site, and canonize URLs for crawlers.",
    )
    ap.add_argument("--version", action="version", version=f"dustbuster {__version__}")
    ap.add_argument("-v", "--verbose", action="count", default=0, help="more logging (-vv: debug)")
    ap.add_argument("-q", "--quiet", action="store_true", help="no progress bar, no summary")
    sub = ap.add_subparsers(dest="cmd", metavar="COMMAND")
    # the same options after the subcommand (SUPPRESS keeps the global value when absent)
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument("-v", "--verbose", action="count", default=argparse.SUPPRESS, help="more logging (-vv: debug)")
    common.add_argument("-q", "--quiet", action="store_true", default=argparse.SUPPRESS, help="no progress bar, no summary")

    m = sub.add_parser("mine", parents=[common], help="mine likely DUST rules from log files (no Kafka needed)",
                       description="Phases 1-3 of DustBuster on a URL list read from logs: "
                       "detect likely rules (Fig. 1), eliminate redundant ones (Fig. 2), detect "
                       "parameter rules (thesis §5.3).  Nothing is fetched.",
                       epilog=EPILOG_MINE, formatter_class=argparse.RawDescriptionHelpFormatter)
    m.add_argument("logs", nargs="+", metavar="LOG", help="log files (.gz ok; - for stdin)")
    m.add_argument("--site", help="host for log lines that carry none (common/combined)")
    m.add_argument("--scheme", default="http", choices=("http", "https"), help="scheme for such lines (default http)")
    m.add_argument("--format", default="auto", help="auto (default), common, combined, vhost, jsonl, heritrix, cdx, cdxj, tsv")
    m.add_argument("--stage", default="eliminate", choices=("detect", "eliminate"), help="stop after phase 1 (detect) or 2 (default)")
    m.add_argument("--json", action="store_true", help="print the JSON document instead of a table")
    m.add_argument("-o", "--output", metavar="FILE", help="write the table or JSON here instead of stdout")
    m.add_argument("--limit", type=int, default=0, help="print at most N rules in the table (0 = all)")
    m.add_argument("--rejects", metavar="FILE", help="write rejected lines with line numbers and reasons")
    m.add_argument("--max-url-length", type=int, default=2048, help="reject longer URLs (default %(default)s)")
    m.add_argument("--max-tokens", type=int, default=256, help="reject URLs with more tokens (default %(default)s)")
    _add_params(m)

    validatecli.add_command(sub, common, _add_params)
    truthcli.add_command(sub, common)
    evalcli.add_command(sub, common)
    crawlcli.add_commands(sub, common)
    b = sub.add_parser("broker", parents=[common], help="start/stop the local single-node Kafka (KRaft) broker",
                       description="A real Apache Kafka broker on 127.0.0.1, from Maven Central jars "
                       "(deploy/kafka/pom.xml; needs Java 17 and mvn).  'start' is idempotent and "
                       "returns once the broker serves clients; data persist in --data-dir.")
    b.add_argument("action", choices=("start", "stop", "status"), help="start (idempotent), stop, or say whether it runs")
    b.add_argument("--data-dir", default="var/kafka", help="persistent data dir (default %(default)s)")
    b.add_argument("--port", type=int, default=9092, help="client port (default %(default)s)")
    b.add_argument("--controller-port", type=int, default=9093, help="controller port (default %(default)s)")
    f = sub.add_parser("feed", parents=[common], help="produce log lines into the raw topic",
                       description="Send a log file's lines (or stdin's) to Kafka in batches keyed by site. "
                       "Exits non-zero, saying how many lines were delivered, if the broker rejects a batch "
                       "after retries.  Broker and topic names come from DUST_* settings.")
    f.add_argument("logs", nargs="+", metavar="LOG", help="log files, sent one after the other (.gz ok; - for stdin)")
    f.add_argument("--site", required=True, help="the site (host) the lines belong to; the message key")
    f.add_argument("--format", default="auto", help="log format hint for the workers (default auto)")
    f.add_argument("--scheme", default="http", choices=("http", "https"),
                   help="scheme of URLs from lines that carry none (common/combined; default %(default)s)")
    f.add_argument("--batch-lines", type=int, default=500, help="lines per message (default %(default)s)")
    f.add_argument("--follow", action="store_true", help="keep reading new lines, like tail -F (survives rotation)")
    f.add_argument("--bootstrap", help="Kafka bootstrap servers (default: DUST_KAFKA_BOOTSTRAP or 127.0.0.1:9092)")
    f.add_argument("--rejects", metavar="FILE", help="write lines too big for one message (not sent) with their "
                   "line numbers")
    f.add_argument("--max-message-bytes", type=int, default=1_000_000, metavar="N",
                   help="most bytes of one message; batches are cut to fit (default %(default)s)")

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

    sm = sub.add_parser("sim-site", parents=[common], help="serve the DUST site simulator (and write its traffic log)",
                        description="A simulated forum site with known DUST (sim/site.py) on loopback: several "
                        "host names, aliases, no-op and content parameters, print versions, growing pages, "
                        "look-alikes, redirects, soft errors, slow and failing pages.")
    sm.add_argument("--host", default="127.0.0.1", help="address to listen on (loopback only; default %(default)s)")
    sm.add_argument("--port", type=int, default=8080, help="port to listen on (default %(default)s)")
    sm.add_argument("--write-log", metavar="FILE", help="write an access log of simulated traffic and exit")
    sm.add_argument("--lines", type=int, default=20000, help="lines of --write-log (default %(default)s)")
    sm.add_argument("--log-port", type=int, help="port to put in the log's host names (default: --port)")
    sm.add_argument("--truth", metavar="FILE", help="write the ground-truth rules as JSON")

    w = sub.add_parser("worker", parents=[common], help="run a streaming worker (Faust)",
                       description="Consume the raw topic, keep per-site incremental DUST state in RocksDB "
                       "(DUST_DATA_DIR), and emit candidate rules every DUST_WINDOW_S seconds; validate them "
                       "against the sites configured in DUST_VALIDATOR_SITES and publish rule sets; follow the "
                       "rules topic and canonicalize the frontier topic (seen flags); serve the HTTP API on "
                       "DUST_API_PORT (default 8870; docs/api.md).  All settings come from DUST_* environment "
                       "variables (stream/settings.py); flags override them.")
    w.add_argument("--data-dir", help="state directory (DUST_DATA_DIR)")
    w.add_argument("--window", type=float, help="window seconds (DUST_WINDOW_S)")
    w.add_argument("--bootstrap", help="Kafka bootstrap servers (DUST_KAFKA_BOOTSTRAP)")
    return ap


def cmd_feed(a: argparse.Namespace) -> int:
    import asyncio

    from dustbuster.stream.admin import ensure_topics
    from dustbuster.stream.producer import FeedStats, feed
    from dustbuster.logs.reader import RejectSink
    from dustbuster.stream.settings import Settings

    if a.follow and len(a.logs) > 1:
        raise ConfigError("--follow follows one file")
    settings = Settings.from_env(kafka_bootstrap=a.bootstrap)
    rej_fh = open(a.rejects, "w", encoding="utf-8") if a.rejects else None
    show = prog.enabled(a.quiet)
    bar = None
    if show:
        from tqdm import tqdm

        bar = tqdm(desc="lines", unit=" lines", file=sys.stderr)
    async def run():
        import signal

        stop = asyncio.Event()
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGINT, signal.SIGTERM):
            loop.add_signal_handler(sig, stop.set)  # --follow: finish the batch in hand, then exit 0
        await ensure_topics(settings)  # our partitions, leaders elected: no auto-creation noise
        total = FeedStats()
        for path in a.logs:
            if stop.is_set():
                break
            st = await feed(settings.kafka_bootstrap, settings.raw_topic, path, a.site.lower(), a.format,
                            a.scheme, a.batch_lines, a.follow, on_progress=bar.update if bar else None, stop=stop,
                            max_message_bytes=a.max_message_bytes, rejects=RejectSink(rej_fh) if rej_fh else None)
            for f in ("lines", "batches", "bytes", "seconds", "rejected"):
                setattr(total, f, getattr(total, f) + getattr(st, f))
        return total

    try:
        stats = asyncio.run(run())
    finally:
        if bar:
            bar.close()
        if rej_fh:
            rej_fh.close()
    if not a.quiet:
        rate = stats.lines / stats.seconds if stats.seconds else 0
        sys.stderr.write(f"fed {stats.lines} lines in {stats.batches} batches to {settings.raw_topic} "
                         f"({rate:,.0f} lines/s)"
                         + (f"; {stats.rejected} lines too big for a message not sent"
                            + (f" (in {a.rejects})" if a.rejects else "") if stats.rejected else "") + "\n")
    return 0


def cmd_candidates(a: argparse.Namespace) -> int:
    import asyncio

    from dustbuster.stream.consume import latest_by_key
    from dustbuster.stream.settings import Settings

    if a.wait_lines and not a.site:
        raise DustError("--wait-lines needs --site")
    settings = Settings.from_env(kafka_bootstrap=a.bootstrap)
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


def _print_candidates(site: str, d: dict, limit: int) -> None:
    """A candidate set for a person: likely rules (not validated), unsafe ones flagged."""
    from dustbuster.core.errors import RuleError
    from dustbuster.core.rulecheck import unsafe_candidate
    from dustbuster.core.rules import rule_from_json

    st = d["stats"]
    urls = list(d.get("test_urls") or [])[:5000]
    print(f"# {site}: window {d['window']}, {st.get('lines')} lines, {st.get('urls')} unique URLs, "
          f"{len(d['rules'])} likely rules, {len(d['param_rules'])} parameter rules (candidates, not validated)")
    for r in d["rules"][: limit] + d["param_rules"]:
        try:
            why = unsafe_candidate(rule_from_json(r), urls) if urls else None
        except RuleError:
            why = "does not parse"
        second = r["support_high"] if r.get("type", "substring") == "substring" else r.get("disqualified")
        print(f"{r['support']:>7} {second:>6}  {r['display']}" + (f"   UNSAFE: {why}" if why else ""))


def cmd_sim_site(a: argparse.Namespace) -> int:
    import asyncio

    from dustbuster.sim.site import SimSite, start

    site = SimSite()
    if a.truth:
        Path(a.truth).write_text(json.dumps(site.truth(), indent=1))
    if a.write_log:
        port = a.log_port or a.port
        Path(a.write_log).write_text("\n".join(site.log_lines(a.lines, port=port if port != 80 else None)) + "\n")
        if not a.quiet:
            sys.stderr.write(f"wrote {a.lines} lines to {a.write_log}\n")
        return 0

    async def serve():
        runner, port = await start(site, a.host, a.port)
        sys.stderr.write(f"simulated site on http://{a.host}:{port}/ (hosts {', '.join(site.hosts)})\n")
        try:
            while True:
                await asyncio.sleep(3600)
        finally:
            await runner.cleanup()

    try:
        asyncio.run(serve())
    except KeyboardInterrupt:
        pass
    return 0


def cmd_worker(a: argparse.Namespace) -> int:
    import asyncio

    import faust

    from dustbuster.agents import register_all
    from dustbuster.state.partitions import Stores
    from dustbuster.stream.app import create_app, ensure_topics, topics
    from dustbuster.stream.settings import Settings

    settings = Settings.from_env(data_dir=Path(a.data_dir) if a.data_dir else None, window_s=a.window,
                                 kafka_bootstrap=a.bootstrap)
    asyncio.run(ensure_topics(settings))
    app = create_app(settings)
    stores = Stores(settings.data_dir / "state", settings.params)
    register_all(app, settings, topics(app, settings), stores)
    try:
        faust.Worker(app, loglevel="info", logging_config=worker_logging(a.verbose), quiet=True).execute_from_commandline()
    finally:
        stores.close()
    return 0


class RetriedLeaderChange(logging.Filter):
    """Drops aiokafka's warning for a send retried because a partition's leader is being elected
    (right after topics are created, or when a broker moves leadership): the client retries it by
    itself, and a send that still fails is reported as an error by our code.  -v shows them."""

    RETRIABLE = ("NotLeaderForPartitionError", "LeaderNotAvailableError")

    def filter(self, record: logging.LogRecord) -> bool:
        msg = record.getMessage()
        return not ("retrying" in msg and any(e in msg for e in self.RETRIABLE))


def worker_logging(verbose: int) -> dict:
    """The worker logs what it does at INFO in plain words (windows, validation rounds, rule sets);
    the libraries under it only what means trouble.  ``mode.timers`` warns "Timer ... is
    overlapping" whenever the loop is busy at a commit tick; the worker measures real stalls itself
    (dust_event_loop_lag_max_seconds, dust_event_loop_stalls_total), so that one is at ERROR.
    -v shows the libraries' INFO, -vv their DEBUG."""
    third = "WARNING" if not verbose else "INFO" if verbose == 1 else "DEBUG"
    loggers = {name: {"level": third} for name in ("faust", "mode", "aiokafka", "kafka", "aiohttp", "rocksdict")}
    if not verbose:
        loggers["mode.timers"] = {"level": "ERROR"}
    return {"merge": True, "version": 1, "disable_existing_loggers": False, "loggers": loggers}


def cmd_broker(a: argparse.Namespace) -> int:
    from .broker import LocalKafka, port_open, read_pidfile, stop_pid

    data = Path(a.data_dir).resolve()
    running = read_pidfile(data)
    if a.action == "status":
        if running and port_open(running[1]):
            print(f"running: pid {running[0]}, bootstrap 127.0.0.1:{running[1]}")
            return 0
        print("not running")
        return 3
    if a.action == "stop":
        if not running:
            print("not running")
            return 0
        stop_pid(running[0])
        (data / "broker.pid").unlink(missing_ok=True)
        print(f"stopped pid {running[0]}")
        return 0
    if running and port_open(running[1]):
        print(f"already running: pid {running[0]}, bootstrap 127.0.0.1:{running[1]}")
        return 0
    if port_open(a.port):
        raise DustError(f"port {a.port} is taken by another process: choose --port")
    k = LocalKafka(data, bport=a.port, cport=a.controller_port, offsets_partitions=3).start()
    print(f"started: pid {k.proc.pid}, bootstrap {k.bootstrap} (format {k.timings['format_s']:.1f}s, "
          f"start {k.timings['start_s']:.1f}s); log {k.log_file}")
    return 0


def cmd_mine(a: argparse.Namespace) -> int:
    from dustbuster.core.mine import mine
    from dustbuster.logs.formats import Limits
    from dustbuster.logs.reader import ReadStats, RejectSink, read_urllist

    params = _params(a)
    show = prog.enabled(a.quiet)
    total = sum(os.path.getsize(p) for p in a.logs if p != "-" and Path(p).exists())
    on_bytes, close_bar = prog.byte_bar(total, show)
    stats = ReadStats()
    rej_fh = open(a.rejects, "w", encoding="utf-8") if a.rejects else None
    t0 = time.perf_counter()
    try:
        ul, stats = read_urllist(
            a.logs, a.format, a.site, a.scheme,
            limits=Limits(a.max_url_length, a.max_tokens), stats=stats,
            rejects=RejectSink(rej_fh), on_bytes=on_bytes,
        )
    finally:
        close_bar()
        if rej_fh:
            rej_fh.close()
    read_s = time.perf_counter() - t0
    if not len(ul):
        raise DustError(nothing_read_hint(a.logs, stats.to_dict()))
    bar = prog.StageBar(show)
    try:
        result = mine(ul, params, a.stage, progress=bar)
    finally:
        bar.close()
    result.stats = {"read": stats.to_dict(), "read_seconds": round(read_s, 3), **result.stats}
    unsafe = _unsafe_flags(result, ul)
    out = open(a.output, "w", encoding="utf-8") if a.output else sys.stdout
    try:
        if a.json:
            doc = result.to_json()
            for r in doc["param_rules"] + doc["rules"]:
                if r["display"] in unsafe:
                    r["unsafe"] = unsafe[r["display"]]
            json.dump(doc, out, indent=1, ensure_ascii=False)
            out.write("\n")
        else:
            _print_table(result, a.limit, unsafe, out)
        out.flush()
    finally:
        if a.output:
            out.close()
    if not a.quiet:
        _print_summary(result.stats)
    return 0


def nothing_read_hint(logs: list[str], read: dict) -> str:
    """One line that says why no URL came out of the logs, and what to do."""
    names = ", ".join(logs)
    rejected = read.get("rejected") or {}
    if not read.get("lines"):
        return f"no URL read: {names} is empty"
    if rejected.get("no_host"):
        return f"no URL read from {names}: its lines carry no host ({rejected['no_host']} rejected): pass --site HOST"
    if read.get("dropped_status") and not rejected:
        return f"no URL read from {names}: every request failed (status >= 400)"
    why = ", ".join(f"{k}={v}" for k, v in rejected.items()) or "nothing parsed"
    return f"no URL read from {names} ({why}): check the format (--format) or see the lines with --rejects FILE"


def _unsafe_flags(result, ul, sample: int = 5000) -> dict[str, str]:
    """Display text → why applying the candidate unvalidated would mangle URLs (dustbuster.core.rulecheck),
    judged on a fixed sample of the mined URLs."""
    import random

    from dustbuster.core.rulecheck import unsafe_candidate
    from dustbuster.core.rules import SubstringRule

    urls = list(ul)
    if len(urls) > sample:
        urls = random.Random(0).sample(urls, sample)
    pairs = result.kept if result.stage == "eliminate" else result.detected
    rules = [SubstringRule(p.alpha, p.beta) for p in pairs] + result.param_rules()
    return {r.text: why for r in rules if (why := unsafe_candidate(r, urls))}


def _print_table(result, limit: int, unsafe: dict[str, str] | None = None, out=None) -> None:
    unsafe = unsafe or {}
    out = out or sys.stdout
    pairs = result.kept if result.stage == "eliminate" else result.detected
    title = "likely rules after redundancy elimination" if result.stage == "eliminate" else "phase-1 likely pairs (T_low supports)"
    out.write(f"# {title}: {len(pairs)} (α → β is the shrinking direction)\n")
    out.write(f"{'rank':>5} {'support':>7} {'sup_hi':>6}  rule\n")
    from dustbuster.core.rules import SubstringRule

    for rank, p in enumerate(pairs[: limit or None], 1):
        text = SubstringRule(p.alpha, p.beta).text
        note = f"   UNSAFE: {unsafe[text]}" if text in unsafe else ""
        out.write(f"{rank:>5} {p.support:>7} {p.support_high:>6}  {text}{note}\n")
    out.write(f"# parameter rules: {len(result.param_kept)} kept of {len(result.param_candidates)} candidates\n")
    if result.param_kept:
        out.write(f"{'support':>7} {'disq':>6}  rule\n")
        for r in result.param_rules():
            out.write(f"{r.support:>7} {r.disqualified:>6}  {r.text}\n")
    out.write("# these are candidates, not validated: `dustbuster validate` fetches pages to decide them"
              + (f"; {len(unsafe)} flagged UNSAFE would mangle URLs if applied" if unsafe else "") + "\n")


def _print_summary(stats: dict) -> None:
    rd = stats["read"]
    rej = ", ".join(f"{k}={v}" for k, v in rd["rejected"].items()) or "none"
    skip = ", ".join(f"{k}={v}" for k, v in rd["skipped"].items()) or "none"
    sys.stderr.write(
        f"read {rd['lines']} lines ({', '.join(sorted(set(rd['formats'].values())))}): "
        f"{rd['records']} records, {rd['dropped_status']} dropped (status >= 400), "
        f"skipped: {skip}; rejected: {rej}\n"
        f"{stats['urls']} unique URLs ({stats['urls_with_size']} with a size), "
        f"{stats['likely_pairs']} likely pairs"
        + (f", {stats['after_elimination']} after elimination" if "after_elimination" in stats else "")
        + f", {stats['param_rules']} parameter rules; "
        f"{stats['read_seconds'] + stats['detect_seconds'] + stats.get('eliminate_seconds', 0) + stats['param_seconds']:.2f}s\n"
    )


def main(argv: list[str] | None = None) -> int:
    ap = build_parser()
    a = ap.parse_args(argv)
    level = logging.WARNING - 10 * min(a.verbose, 2)
    logging.basicConfig(level=level, format="%(asctime)s %(levelname)s %(name)s: %(message)s", stream=sys.stderr)
    if not a.verbose:
        logging.getLogger("aiokafka.producer.sender").addFilter(RetriedLeaderChange())
    if not a.cmd:
        ap.print_help()
        return 2
    try:
        return {"mine": cmd_mine, "canonize": crawlcli.cmd_canonize, "broker": cmd_broker, "feed": cmd_feed,
                "worker": cmd_worker, "candidates": cmd_candidates, "sim-site": cmd_sim_site,
                "rules": crawlcli.cmd_rules, "export": crawlcli.cmd_export,
                "frontier": crawlcli.cmd_frontier,
                "truth": truthcli.cmd_truth, "eval": evalcli.cmd_eval,
                "validate": lambda a: validatecli.cmd_validate(a, _params(a))}[a.cmd](a)
    except DustError as exc:
        sys.stderr.write(f"dustbuster {a.cmd}: error: {exc}\n")
        return 2
    except BrokenPipeError:
        return 0
    except KeyboardInterrupt:
        sys.stderr.write("interrupted\n")
        return 130
