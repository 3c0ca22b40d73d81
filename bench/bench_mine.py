"""Benchmark of phases 1+2 (detect + eliminate) against the naive Figure-1 oracle, and scaling.

Each measurement runs in a fresh subprocess (so peak RSS is its own), on the synthetic forum log
of dustbuster.sim.forum, written by bench/genlog.py (vhost+combined, seeded).  Side by side in one run:

* engine (dustbuster.core.detect + dustbuster.core.refine) vs oracle (dustbuster.core.reference, plain dicts, + the same Figure 2
  code), S=35 and the papers' defaults, on the 1× log (50,000 lines);
* engine on 1×, 2×, 3×, 4× logs (Proposition 5.1: quasi-linear).

    .venv/bin/python bench/bench_mine.py [--lines 50000] [--repeat 3] [--oracle-repeat 1]

Prints a Markdown table (medians) for README/docs; writes bench/out/bench_mine.json.
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

CHILD = r"""
import json, resource, sys, time
sys.path.insert(0, {root!r})
from dustbuster.core.params import DustParams
from dustbuster.core.detect import count_supports, likely_pairs, Pair
from dustbuster.core.refine import eliminate, elimination_order
from dustbuster.logs.reader import read_urllist
P = DustParams()
ul, st = read_urllist([{log!r}])
rss_read = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
t0 = time.perf_counter()
if {which!r} == "engine":
    table = count_supports(ul, P)
    pairs = likely_pairs(table, P)
    n_distinct = len(table.codes)
    del table
else:
    from dustbuster.core.reference import oracle_supports_both
    from dustbuster.core.detect import orient
    low, high = oracle_supports_both(ul, P)
    n_distinct = len(high)
    pairs = []
    for k, c in low.items():
        if c >= P.ms:
            a, b = orient(*k)
            pairs.append(Pair(a, b, c, high[k]))
    pairs.sort(key=lambda p: (-p.support, -p.support_high, p.alpha, p.beta))
    del low, high
t1 = time.perf_counter()
kept, _ = eliminate(elimination_order(pairs), P)
t2 = time.perf_counter()
print(json.dumps({{"urls": len(ul), "lines": st.lines, "detect_s": t1 - t0, "eliminate_s": t2 - t1,
                  "total_s": t2 - t0, "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
                  "read_rss_mb": rss_read / 1024, "likely": len(pairs), "kept": len(kept), "distinct_pairs": n_distinct,
                  "digest": hash(tuple((p.alpha, p.beta, p.support, p.support_high) for p in pairs)) }}))
"""


def measure(which: str, log: Path) -> dict:
    code = CHILD.format(root=str(ROOT), log=str(log), which=which)
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env={"PYTHONHASHSEED": "0", "PATH": "/usr/bin:/bin"})
    if r.returncode != 0:
        raise SystemExit(f"{which} on {log} failed:\n{r.stderr}")
    return json.loads(r.stdout.strip().splitlines()[-1])


def make_log(lines: int) -> Path:
    OUT.mkdir(parents=True, exist_ok=True)
    path = OUT / f"forum-{lines}.log"
    if not path.exists():
        with open(path, "w") as fh:
            subprocess.run([sys.executable, str(ROOT / "bench" / "genlog.py"), "--lines", str(lines)], stdout=fh, check=True)
    return path


def med(rows: list[dict], key: str) -> float:
    return statistics.median(r[key] for r in rows)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--lines", type=int, default=50000)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--oracle-repeat", type=int, default=1)
    ap.add_argument("--scales", default="1,2,3,4")
    a = ap.parse_args()
    results: dict = {"lines": a.lines, "when": time.strftime("%Y-%m-%d %H:%M:%S"), "runs": {}}
    base = make_log(a.lines)
    eng, ora = [], []
    for k in range(max(a.repeat, a.oracle_repeat)):  # interleaved, side by side
        if k < a.repeat:
            eng.append(measure("engine", base))
            print(f"engine 1x run {k + 1}: {eng[-1]['total_s']:.2f}s", file=sys.stderr)
        if k < a.oracle_repeat:
            ora.append(measure("oracle", base))
            print(f"oracle 1x run {k + 1}: {ora[-1]['total_s']:.2f}s", file=sys.stderr)
    same = all(r["digest"] == ora[0]["digest"] for r in eng + ora)
    results["runs"]["engine_1x"], results["runs"]["oracle_1x"] = eng, ora
    print(f"\n1x log: {eng[0]['lines']} lines, {eng[0]['urls']} unique URLs; S=35, T_low=6, T_high=11, MS=3; "
          f"engine and oracle phase-1 outputs identical: {same}\n")
    print("| implementation | detect (s) | eliminate (s) | total (s) | peak RSS (MB) | likely pairs | kept |")
    print("|---|---|---|---|---|---|---|")
    for name, rows in (("engine (core/)", eng), ("naive oracle (core/reference.py)", ora)):
        print(f"| {name} | {med(rows, 'detect_s'):.2f} | {med(rows, 'eliminate_s'):.2f} | {med(rows, 'total_s'):.2f} | "
              f"{med(rows, 'peak_rss_mb'):.0f} | {rows[0]['likely']} | {rows[0]['kept']} |")
    print(f"\nspeed-up (median total, oracle / engine): {med(ora, 'total_s') / med(eng, 'total_s'):.1f}x; "
          f"phase 1 alone: {med(ora, 'detect_s') / med(eng, 'detect_s'):.1f}x\n")
    print("| log | lines | unique URLs | detect (s) | eliminate (s) | total (s) | per URL (µs) | peak RSS (MB) |")
    print("|---|---|---|---|---|---|---|---|")
    t1 = None
    for s in [int(x) for x in a.scales.split(",")]:
        log = make_log(a.lines * s)
        rows = eng if s == 1 else [measure("engine", log) for _ in range(a.repeat)]
        results["runs"][f"engine_{s}x"] = rows
        tot = med(rows, "total_s")
        t1 = t1 or tot
        print(f"| {s}x | {rows[0]['lines']} | {rows[0]['urls']} | {med(rows, 'detect_s'):.2f} | {med(rows, 'eliminate_s'):.2f} | "
              f"{tot:.2f} | {tot / rows[0]['urls'] * 1e6:.0f} | {med(rows, 'peak_rss_mb'):.0f} |")
    (OUT / "bench_mine.json").write_text(json.dumps(results, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
