"""A streaming window at the per-site cap: its cost with the URL list as it grows by a few new URLs.

    .venv/bin/python bench/bench_window.py [--urls 100000] [--new 1000] [--windows 3] [--processes 1,2] [--check]

A partition state (dustbuster.state.partitions.PartitionState, RocksDB in a temporary folder) is
filled with the synthetic forum's lines (dustbuster.sim.forum, seeded) through the ingest's own
path (parse_lines, stage_group, commit) until the site holds ``--urls`` minus ``--windows`` times
``--new`` URLs; a first window runs (the cold one: every bucket counted); then ``--windows`` times:
lines of another seed are staged until ``--new`` new URLs came in, and a window runs.  All of it
once for each of ``--processes`` (DUST_WINDOW_PROCESSES; 1,2 by default), each on a state of its
own filled with the same lines (the same lists; no run reuses another's caches).
Reported per window: the processes asked for and those it mined in (one under 20,000 URLs), its
seconds (the state thread's work: ``PartitionState.window``), the URLs, the candidates,
and with ``--check`` whether its candidates equal ``dustbuster.core.mining.mine.mine`` on the same URL list
(the check itself is not timed).  Prints JSON; writes bench/out/bench_window.json.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from dustdev.benchout import emit  # noqa: E402

import dustbuster.core.mining.processes as processes  # noqa: E402
from dustbuster.core.mining.mine import mine, unsafe_flags  # noqa: E402
from dustbuster.core.params import DustParams  # noqa: E402
from dustbuster.logs.reader import parse_lines  # noqa: E402
from dustbuster.sim.forum import generate  # noqa: E402
from dustbuster.state.partitions import Message, PartitionState  # noqa: E402

SITE = "www.forum.co.il"
TOPIC = "raw"
BATCH = 500


class Feeder:
    """Lines of the forum log (seeded) staged and committed in groups of one message."""

    def __init__(self, state: PartitionState, seed: int, lines: int) -> None:
        self.state, self.lines = state, generate(lines, seed)
        self.offset = state.applied(TOPIC)

    def until(self, urls: int) -> int:
        """Feed until the site holds ``urls`` URLs (or the lines run out); returns URLs held."""
        sup = self.state.site(SITE)
        while sup.url_count() < urls:
            batch = [ln for _, ln in zip(range(BATCH), self.lines)]
            if not batch:
                break
            self.offset += 1
            res = parse_lines(batch, SITE)
            st = self.state.stage_group(TOPIC, [Message(self.offset, SITE, res.records, res.counts)])
            if st is not None:
                self.state.commit(st)
        return sup.url_count()


def window(state: PartitionState, check: bool) -> dict:
    t0 = time.perf_counter()
    result = state.window(SITE)
    secs = time.perf_counter() - t0
    row = {"seconds": round(secs, 3), "processes": result.stats.get("window_processes"),
           "urls": result.stats.get("urls"), "rules": len(result.kept),
           "param_rules": len(result.param_rules()), "general_rules": len(result.general),
           "unsafe": len(result.unsafe), "timings": {k: v for k, v in result.stats.items() if k.endswith("_seconds")}}
    if check:
        ul = state.site(SITE).urllist()
        want = mine(ul, state.params)
        want.unsafe = unsafe_flags(want, ul)
        row["equal_to_mine"] = _comparable(want) == _comparable(result)
    return row


def _comparable(result) -> dict:
    """The candidates of a result (its JSON less the stats, which a window adds counters to)."""
    doc = result.to_json()
    doc.pop("stats")
    return doc


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--urls", type=int, default=100_000, help="URLs of the site at the last window (the cap; default 100000)")
    ap.add_argument("--new", type=int, default=1000, help="new URLs before each window (default 1000)")
    ap.add_argument("--windows", type=int, default=3, help="windows after the cold one (default 3)")
    ap.add_argument("--check", action="store_true", help="compare each window's candidates with mine's (untimed)")
    ap.add_argument("--processes", default="1,2", help="processes a window may mine in "
                    "(DUST_WINDOW_PROCESSES), each run on the same lists, comma-separated (default 1,2)")
    ap.add_argument("--small", action="store_true", help="3,000 URLs, 200 new, one window, checked: CI's check that it runs")
    ap.add_argument("--out", type=Path, default=ROOT / "bench" / "out" / "bench_window.json", help="the JSON results")
    a = ap.parse_args()
    if a.small:
        a.urls, a.new, a.windows, a.check = 3000, 200, 1, True
        processes.MIN_URLS = 1  # the small list mined in two processes too: CI runs that path
    procs = sorted({int(p) for p in a.processes.split(",")})
    out: dict = {"urls": a.urls, "new": a.new, "processes": procs, "when": time.strftime("%Y-%m-%d %H:%M"),
                 "windows": [], "cold": [], "fill_seconds": []}
    for p in procs:  # each on a state of its own, filled alike: no run reuses another's work
        with tempfile.TemporaryDirectory(prefix="dust-window-") as tmp:
            state = PartitionState(Path(tmp), 0, DustParams(), max_urls_per_site=a.urls, window_processes=p)
            t0 = time.perf_counter()
            held = Feeder(state, 1, a.urls * 4).until(a.urls - a.windows * a.new)
            out["fill_seconds"].append(round(time.perf_counter() - t0, 1))
            out["cold"].append({"asked": p, **window(state, a.check)})
            print(json.dumps({"filled": held, "cold": out["cold"][-1]}), file=sys.stderr)
            more = Feeder(state, 2, a.urls * 4)
            for k in range(a.windows):
                more.until(held + (k + 1) * a.new)
                out["windows"].append({"asked": p, **window(state, a.check)})
                print(json.dumps(out["windows"][-1]), file=sys.stderr)
            state.close()
    out["median_seconds"] = {str(p): statistics.median(r["seconds"] for r in out["windows"] if r["asked"] == p)
                             for p in procs}
    emit(out, a.out)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
