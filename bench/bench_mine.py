"""Benchmark of batch mining, phases 1+2 (Figure 1 detect + Figure 2 eliminate) *including reading
the log*, engine against the plain reference, on two logs, and the engine's growth.

Logs (site www.example.com where the lines carry no host):

* ``forum``: the synthetic forum log of dustbuster.sim.forum written by bench/genlog.py (vhost +
  combined format, seeded), ``--lines`` lines (bench/out/forum-N.log);
* ``real``: real logs of tests/data/logs, 67,620 lines: the combined logs (semicomplete-apache
  apache_logs + the three secrepo-selflogs access.log.*) concatenated into bench/out/real/clf.log,
  plus monitorware-twiki/access_log (common) and the two NASA TSV files (header row), read as
  separate files of one URL list.

Implementations, each run in a fresh subprocess (its own peak RSS), interleaved, S=35 and the
papers' defaults:

* ``engine``: the readers in use (the bulk reader, logs/bulk.py, over logs/fastparse.py's fast
  paths) + dustbuster.core.mining.detect + dustbuster.core.mining.refine; with ``--before`` also the same engine
  with the line-loop reader (``read_urllist(bulk=False)``), interleaved;
* ``reference``: the reference parsers (dustdev.parsers.reference_parsers) + the naive
  Figure-1 oracle (dustdev.reference, plain dicts) + the same Figure 2 code.

Reported per log: read, detect, eliminate and total seconds (total = read + detect + eliminate,
the interpreter's start and imports excluded), peak RSS, likely pairs and survivors (and whether
both implementations produced the same ranked likely pairs), medians of ``--repeat`` engine runs
and ``--ref-repeat`` reference runs; the ratio reference / engine with and without reading.  Then
the engine on the forum log at ``--scales`` times ``--lines`` (Proposition 5.1: quasi-linear).

    .venv/bin/python bench/bench_mine.py [--lines 50000] [--repeat 3] [--ref-repeat 1] [--scales 1,2,3,4] [--before]

Prints Markdown tables; writes bench/out/bench_mine.json.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "bench" / "out"
LOGS = ROOT / "tests" / "data" / "logs"
SITE = "www.example.com"
COMBINED = ["semicomplete-apache/apache_logs", "secrepo-selflogs/access.log.2018-12-15",
            "secrepo-selflogs/access.log.2021-10-22_to_2021-10-27", "secrepo-selflogs/access.log.2022-12-22"]
OTHERS = ["monitorware-twiki/access_log", "nasa-ksc-1995-tsv-sample/nasa_19950801_fullday.tsv",
          "nasa-ksc-1995-tsv-sample/nasa_19950701.tsv"]

CHILD = r"""
import json, resource, sys, time
sys.path.insert(0, {root!r})
from dustbuster.core.params import DustParams
from dustbuster.core.mining.detect import count_supports, likely_pairs, orient, Pair
from dustbuster.core.mining.refine import eliminate, elimination_order
from dustdev.reference import oracle_supports_both
from dustdev.parsers import reference_parsers
from dustbuster.logs.reader import read_urllist
P = DustParams()
engine = {which!r} != "reference"
t0 = time.perf_counter()
if engine:
    ul, st = read_urllist({logs!r}, site={site!r}, bulk={which!r} == "engine")
else:
    with reference_parsers():
        ul, st = read_urllist({logs!r}, site={site!r})
t1 = time.perf_counter()
rss_read = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
if engine:
    table = count_supports(ul, P)
    pairs = likely_pairs(table, P)
    n_distinct = len(table.codes)
    del table
else:
    low, high = oracle_supports_both(ul, P)
    n_distinct = len(high)
    pairs = []
    for k, c in low.items():
        if c >= P.ms:
            a, b = orient(*k)
            pairs.append(Pair(a, b, c, high[k]))
    pairs.sort(key=lambda p: (-p.support, -p.support_high, p.alpha, p.beta))
    del low, high
t2 = time.perf_counter()
kept, _ = eliminate(elimination_order(pairs), P)
t3 = time.perf_counter()
print(json.dumps({{"urls": len(ul), "lines": st.lines, "read_s": t1 - t0, "detect_s": t2 - t1, "eliminate_s": t3 - t2,
                  "total_s": t3 - t0, "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
                  "read_rss_mb": rss_read / 1024, "likely": len(pairs), "kept": len(kept), "distinct_pairs": n_distinct,
                  "digest": hash(tuple((p.alpha, p.beta, p.support, p.support_high) for p in pairs))}}))
"""


def measure(which: str, logs: list[Path]) -> dict:
    code = CHILD.format(root=str(ROOT), logs=[str(p) for p in logs], site=SITE, which=which)
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                       env={"PYTHONHASHSEED": "0", "PATH": "/usr/bin:/bin"})
    if r.returncode != 0:
        raise SystemExit(f"{which} on {logs[0]} failed:\n{r.stderr}")
    return json.loads(r.stdout.strip().splitlines()[-1])


def forum_log(lines: int) -> list[Path]:
    OUT.mkdir(parents=True, exist_ok=True)
    path = OUT / f"forum-{lines}.log"
    if not path.exists():
        with open(path, "w") as fh:
            subprocess.run([sys.executable, str(ROOT / "bench" / "genlog.py"), "--lines", str(lines)], stdout=fh, check=True)
    return [path]


def real_log() -> list[Path]:
    """bench/out/real/clf.log (the combined logs concatenated) and the other real logs in place."""
    path = OUT / "real" / "clf.log"
    path.parent.mkdir(parents=True, exist_ok=True)
    data = b"".join((LOGS / f).read_bytes().rstrip(b"\n") + b"\n" for f in COMBINED)
    if not path.exists() or path.read_bytes() != data:
        path.write_bytes(data)
    return [path] + [LOGS / f for f in OTHERS]


def med(rows: list[dict], key: str) -> float:
    return statistics.median(r[key] for r in rows)


def side_by_side(name: str, logs: list[Path], repeat: int, ref_repeat: int, before: bool = False) -> dict:
    eng, ref, loop = [], [], []
    for k in range(max(repeat, ref_repeat)):  # interleaved
        if k < repeat:
            eng.append(measure("engine", logs))
            print(f"{name}: engine run {k + 1}: {eng[-1]['total_s']:.2f}s", file=sys.stderr)
            if before:
                loop.append(measure("engine_lineloop", logs))
                print(f"{name}: engine (line loop) run {k + 1}: {loop[-1]['total_s']:.2f}s", file=sys.stderr)
        if k < ref_repeat:
            ref.append(measure("reference", logs))
            print(f"{name}: reference run {k + 1}: {ref[-1]['total_s']:.2f}s", file=sys.stderr)
    same = all(r["digest"] == ref[0]["digest"] and r["kept"] == ref[0]["kept"] for r in eng + loop + ref)
    e0 = eng[0]
    print(f"\n{name} log: {e0['lines']:,} lines, {e0['urls']:,} unique URLs; S=35, T_low=6, T_high=11, MS=3; "
          f"same likely pairs and survivors from both: {same}\n")
    print("| implementation | read (s) | detect (s) | eliminate (s) | total (s) | without reading (s) | peak RSS (MB) | likely | kept |")
    print("|---|---|---|---|---|---|---|---|---|")
    for label, rows in (("engine", eng), ("engine, line-loop reader (before)", loop), ("reference", ref)):
        if not rows:
            continue
        print(f"| {label} | {med(rows, 'read_s'):.2f} | {med(rows, 'detect_s'):.2f} | {med(rows, 'eliminate_s'):.2f} | "
              f"{med(rows, 'total_s'):.2f} | {med(rows, 'detect_s') + med(rows, 'eliminate_s'):.2f} | "
              f"{med(rows, 'peak_rss_mb'):.0f} | {rows[0]['likely']} | {rows[0]['kept']} |")
    with_read = med(ref, "total_s") / med(eng, "total_s")
    mining = (med(ref, "detect_s") + med(ref, "eliminate_s")) / (med(eng, "detect_s") + med(eng, "eliminate_s"))
    print(f"\nreference / engine (medians): {with_read:.1f}x including reading; {mining:.1f}x without "
          f"(reading alone {med(ref, 'read_s') / med(eng, 'read_s'):.1f}x)\n")
    out = {"engine": eng, "reference": ref, "same_output": same, "ratio_with_reading": with_read, "ratio_mining": mining}
    if loop:
        out["engine_lineloop"] = loop
        out["ratio_with_reading_before"] = med(ref, "total_s") / med(loop, "total_s")
        print(f"before (the line-loop reader), same run: {out['ratio_with_reading_before']:.1f}x including reading "
              f"(reading alone {med(ref, 'read_s') / med(loop, 'read_s'):.1f}x)\n")
    return out


def growth(lines: int, scales: list[int], repeat: int, first: list[dict]) -> dict:
    print("| forum log | lines | unique URLs | read (s) | detect (s) | eliminate (s) | total (s) | per URL (µs) | peak RSS (MB) |")
    print("|---|---|---|---|---|---|---|---|---|")
    runs = {}
    for s in scales:
        rows = first if s == 1 else [measure("engine", forum_log(lines * s)) for _ in range(repeat)]
        runs[f"engine_{s}x"] = rows
        tot = med(rows, "total_s")
        print(f"| {s}x | {rows[0]['lines']:,} | {rows[0]['urls']:,} | {med(rows, 'read_s'):.2f} | {med(rows, 'detect_s'):.2f} | "
              f"{med(rows, 'eliminate_s'):.2f} | {tot:.2f} | {tot / rows[0]['urls'] * 1e6:.0f} | {med(rows, 'peak_rss_mb'):.0f} |")
    return runs


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--lines", type=int, default=50000, help="lines of the 1x forum log (default 50000)")
    ap.add_argument("--repeat", type=int, default=3, help="engine runs per measurement, median reported (default 3)")
    ap.add_argument("--ref-repeat", type=int, default=1, help="reference runs per log, median reported (default 1)")
    ap.add_argument("--scales", default="1,2,3,4", help="forum log sizes for the growth table, in multiples of --lines, comma-separated "
                    "(default 1,2,3,4; empty: no growth table)")
    ap.add_argument("--logs", default="forum,real", help="the logs compared side by side, comma-separated: forum, real (default forum,real)")
    ap.add_argument("--small", action="store_true", help="the forum log of 2,000 lines, one run each, no growth: CI's check that it runs")
    ap.add_argument("--out", type=Path, default=OUT / "bench_mine.json", help="the JSON results")
    ap.add_argument("--before", action="store_true", help="also the engine with the line-loop reader (read_urllist(bulk=False)), "
                    "interleaved: the before/after of issue 25's bulk reader in one run")
    a = ap.parse_args()
    if a.small:
        a.lines, a.repeat, a.ref_repeat, a.scales, a.logs = 2000, 1, 1, "", "forum"
    results: dict = {"lines": a.lines, "when": time.strftime("%Y-%m-%d %H:%M:%S"), "logs": {}}
    which = a.logs.split(",")
    if "forum" in which:
        results["logs"]["forum"] = side_by_side("forum", forum_log(a.lines), a.repeat, a.ref_repeat, a.before)
    if "real" in which:
        results["logs"]["real"] = side_by_side("real", real_log(), a.repeat, a.ref_repeat, a.before)
    scales = [int(x) for x in a.scales.split(",") if x]
    if scales:
        first = results["logs"]["forum"]["engine"] if "forum" in which else [measure("engine", forum_log(a.lines))
                                                                               for _ in range(a.repeat)]
        results["growth"] = growth(a.lines, scales, a.repeat, first)
    a.out.parent.mkdir(parents=True, exist_ok=True)
    a.out.write_text(json.dumps(results, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
