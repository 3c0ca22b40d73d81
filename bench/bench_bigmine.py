"""Big logs, end to end as a user runs them (issue 38's yardstick): ``dustbuster mine FILE --json -q``
on the seeded generator's logs of 1M, 3M and 10M lines (several host names of one forum:
bench/genlog.py) and on the real logs of tests/data/logs concatenated, each with ``--jobs 1`` and
``--jobs 2`` (docs/performance.md), timed as a subprocess: wall, CPU (user + system of the process
and of the processes it waited for, from ``wait4``), peak memory (the largest process's max RSS,
and the peak of all its processes together: their PSS summed, sampled every 0.1 s), lines/s — next
to the floor measured in the same run on the same file: ``LC_ALL=C awk '{print $N}' FILE | sort -u``,
N the request target's field (the unique request targets, no mining at all).  Each run's rules are
compared with the one-process run's (rule for rule), and across sizes (the share of the smaller
log's rule texts the larger one holds: a bigger log of the same site should keep them); a run whose
sites reached ``--max-urls-per-site`` says it sampled.

    .venv/bin/python bench/bench_bigmine.py                       # 1M, 3M, 10M lines
    .venv/bin/python bench/bench_bigmine.py --sizes 1000000       # one size
    .venv/bin/python bench/bench_bigmine.py --small               # 20k and 40k lines: what CI runs

Prints a Markdown table; writes bench/out/bench_bigmine.json (``--out`` elsewhere).  Generated logs
are cached under bench/out/bigmine/ (byte-identical for the same size and seed).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.bench_mine import OUT, real_log  # noqa: E402

WORK = OUT / "bigmine"
SITE = "www.forum.co.il"  #: the generator's main host (lines carry their host: vhost format)


def timed(cmd: list[str], stdout=subprocess.DEVNULL, env: dict | None = None, tree: bool = False) -> dict:
    """Run ``cmd``; its wall seconds, CPU seconds and peak RSS (MB), from wait4 (this child and the
    processes it waited for: CPU summed, RSS the largest one's); ``tree``: also the peak of its
    process tree's memory together (``tree_mb``: the sum of their PSS, shared pages counted once,
    sampled every 0.1 s)."""
    t0 = time.perf_counter()
    proc = subprocess.Popen(cmd, cwd=ROOT, stdout=stdout, stderr=subprocess.PIPE, env=env)
    peak = [0.0]
    if tree:
        stop = threading.Event()
        sampler = threading.Thread(target=_sample_tree, args=(proc.pid, stop, peak), daemon=True)
        sampler.start()
    err = proc.stderr.read().decode(errors="replace") if proc.stderr else ""  # (until it exits)
    _, status, ru = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - t0
    if tree:
        stop.set()
        sampler.join()
    proc.returncode = os.waitstatus_to_exitcode(status)
    out = {"exit": proc.returncode, "wall_s": round(wall, 2), "cpu_s": round(ru.ru_utime + ru.ru_stime, 2),
           "peak_mb": round(ru.ru_maxrss / 1024), "stderr": err[-8000:]}
    if tree:
        out["tree_mb"] = round(peak[0])
    return out


def _sample_tree(root: int, stop: threading.Event, peak: list[float]) -> None:
    while not stop.wait(0.1):
        peak[0] = max(peak[0], tree_pss_mb(root))


def tree_pss_mb(root: int) -> float:
    """The PSS (MB) of ``root`` and its descendants, from /proc (0 where it cannot be read)."""
    parent: dict[int, int] = {}
    for d in os.listdir("/proc"):
        if d.isdigit():
            try:
                with open(f"/proc/{d}/stat", "rb") as fh:
                    parent[int(d)] = int(fh.read().rsplit(b")", 1)[1].split()[1])
            except (OSError, ValueError, IndexError):
                continue
    pids, todo = set(), [root]
    while todo:
        p = todo.pop()
        pids.add(p)
        todo += [c for c, pp in parent.items() if pp == p and c not in pids]
    kb = 0
    for p in pids:
        try:
            with open(f"/proc/{p}/smaps_rollup", "rb") as fh:
                kb += next((int(line.split()[1]) for line in fh if line.startswith(b"Pss:")), 0)
        except (OSError, ValueError):
            continue
    return kb / 1024


def generated(lines: int, seed: int) -> Path:
    path = WORK / f"gen_{lines}_s{seed}.log"
    if not path.exists():
        WORK.mkdir(parents=True, exist_ok=True)
        tmp = path.with_suffix(".tmp")
        with open(tmp, "wb") as out:
            subprocess.run([sys.executable, str(ROOT / "bench" / "genlog.py"), "--lines", str(lines), "--seed", str(seed)],
                           cwd=ROOT, stdout=out, check=True, env={**os.environ, "PYTHONPATH": str(ROOT)})
        tmp.rename(path)
    return path


def target_field(path: Path) -> int:
    """awk's field number of the request target in the log's first line: the token after the
    quoted method (7 in common and combined lines, 8 in vhost lines)."""
    with open(path, "rb") as fh:
        tokens = fh.readline().decode(errors="replace").split()
    return next((k + 2 for k, t in enumerate(tokens) if t.startswith('"') and t[1:].isalpha() and t[1:].isupper()), 7)


def count_lines(path: Path) -> int:
    with open(path, "rb") as fh:
        return sum(chunk.count(b"\n") for chunk in iter(lambda: fh.read(1 << 20), b""))


def run_one(name: str, path: Path, site: str, jobs: str = "1", extra: list[str] | None = None) -> dict:
    lines = count_lines(path)
    tag = f"{name} j{jobs}" + ("".join(extra) if extra else "")
    out = WORK / f"{tag}.json"
    with open(out, "wb") as fh:
        mine = timed([sys.executable, "-m", "dustbuster", "mine", str(path), "--site", site, "--json", "-q", "-v",
                      "--jobs", str(jobs), *(extra or [])], stdout=fh, tree=True,
                     env={**os.environ, "PYTHONPATH": str(ROOT)})
    field = target_field(path)
    floor = timed(["sh", "-c", f"LC_ALL=C awk '{{print ${field}}}' '{path}' | sort -u > /dev/null"])
    rules: list[str] = []
    sample: dict = {}
    if mine["exit"] == 0:
        doc = json.loads(out.read_text())
        rules = [json.dumps(r, sort_keys=True) for r in doc.get("rules", [])]
        sample = doc.get("stats", {}).get("sample", {})
    row = {"log": name, "jobs": jobs, "lines": lines, "mb": round(path.stat().st_size / 1e6, 1), "mine": mine,
           "floor": floor, "lines_per_s": round(lines / mine["wall_s"]) if mine["exit"] == 0 and mine["wall_s"] else None,
           "floor_ratio": round(mine["wall_s"] / max(floor["wall_s"], 1e-3), 1), "rules": len(rules),
           "sampled": bool(sample.get("sampled")), "sample": sample,
           "plan": next((ln.split(" URLs: ", 1)[1] for ln in mine.get("stderr", "").splitlines() if " URLs: " in ln), None)}
    row["_rules"] = rules
    return row


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sizes", default="1000000,3000000,10000000", help="generated log sizes in lines")
    ap.add_argument("--seed", type=int, default=3)
    ap.add_argument("--small", action="store_true", help="20,000 and 40,000 lines, no real logs: CI's run")
    ap.add_argument("--no-real", action="store_true", help="leave out the real logs")
    ap.add_argument("--jobs", default="1,2,auto", help="mine --jobs values, each run on every log (default 1,2,auto: "
                    "what mine chose for auto is the row's plan)")
    ap.add_argument("--out", type=Path, default=OUT / "bench_bigmine.json")
    a = ap.parse_args(argv)
    sizes = [20_000, 40_000] if a.small else [int(s) for s in a.sizes.split(",") if s.strip()]
    jobs = [j.strip() for j in a.jobs.split(",") if j.strip()]
    rows = [run_one(f"generated {n:,}", generated(n, a.seed), SITE, j) for n in sizes for j in jobs]
    if not (a.small or a.no_real):
        rows += [run_one("real logs concatenated", real_log()[0], "www.example.com", j) for j in jobs]
    for r in rows:  # the same rules, rule for rule, whatever the processes
        first = next(x for x in rows if x["log"] == r["log"])
        r["same_rules_as_jobs_1"] = r["_rules"] == first["_rules"] if r["mine"]["exit"] == 0 else None
    gen = [r for r in rows if r["log"].startswith("generated") and r["jobs"] == jobs[0]]
    for small, big in zip(gen, gen[1:]):
        texts = [{json.loads(x)["display"] for x in r["_rules"]} for r in (small, big)]
        big["rules_kept_from_smaller"] = round(len(texts[0] & texts[1]) / max(1, len(texts[0])), 3)
    print("| log | jobs | lines | MB | mine wall s | CPU s | peak MB (one process) | peak MB (all processes) | lines/s | "
          "floor (awk, sort -u) s | mine / floor | rules | same rules as 1 job | sampled | kept from the smaller |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|---|---:|")
    for r in rows:
        m = r["mine"]
        status = "" if m["exit"] == 0 else f" (exit {m['exit']}: {m['stderr'].strip().splitlines()[-1:] or ''})"
        jobs = r["jobs"] if r["jobs"] != "auto" else f"auto: {r['plan']}"
        print(f"| {r['log']}{status} | {jobs} | {r['lines']:,} | {r['mb']} | {m['wall_s']} | {m['cpu_s']} | "
              f"{m['peak_mb']:,} | {m.get('tree_mb', 0):,} | {r['lines_per_s'] or '-'} | {r['floor']['wall_s']} | "
              f"{r['floor_ratio']} | {r['rules']} | {r['same_rules_as_jobs_1']} | {'yes' if r['sampled'] else 'no'} | "
              f"{r.get('rules_kept_from_smaller', '-')} |")
    for r in rows:
        r.pop("_rules")
        r["mine"].pop("stderr", None) if r["mine"]["exit"] == 0 else None
        r["floor"].pop("stderr", None)
    a.out.parent.mkdir(parents=True, exist_ok=True)
    a.out.write_text(json.dumps({"cpus": os.cpu_count(), "seed": a.seed, "rows": rows}, indent=1))
    return 0 if all(r["mine"]["exit"] == 0 for r in rows) else 1


if __name__ == "__main__":
    raise SystemExit(main())
