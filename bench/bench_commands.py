"""Benchmark of the commands a user runs, end to end, next to the engine inside them (issue 25).

Each command runs as a subprocess (``python -m dustbuster ...``: the interpreter's start, the
imports, reading, mining, the UNSAFE flags, writing the JSON); its wall time and its CPU time (user
+ system, from the child's resource usage) are reported next to

* ``engine``: the same work in a fresh process, timed inside: read (``read_urllist``), mine
  (``core.mine``), flags (``core.mine.unsafe_flags``);
* ``reference``: bench/bench_mine.py's plain reference (the reference parsers + the naive Figure-1
  oracle + Figure 2) on the same logs: the floor ``mine`` is compared with.

Logs (bench/out/commands/):

* ``real``: bench_mine.py's 67,620 real lines of tests/data/logs (semicomplete.com, secrepo.com,
  monitorware's TWiki, two NASA days), ``--site www.example.com``;
* ``hostaware``: the same lines in vhost form, each source site under one of the simulator's host
  names with the simulator's port (semicomplete → www.forum.test, secrepo → forum.test, TWiki →
  politics.forum.test, NASA → movies.forum.test; the NASA TSV rows written as common-format lines):
  one URL list of four hosts, as a vhost log gives it.  ``validate`` fetches it from ``dustbuster
  sim-site`` on loopback: the home pages (``/``, ``/index.html``) answer, every other path is the
  simulator's soft-error page (a failed fetch).  Thousands of candidates: the mined ones plus
  ``mine --stage detect``'s likely pairs given to ``validate --candidates`` (the phase-1 pairs
  before elimination; what a user passes to have every likely pair decided).

Commands: ``mine`` (both logs; the host-aware one at ``--stage detect`` too, its thousands of
candidates flagged), ``validate`` (host-aware log, thousands of candidates: CPU time next to the
fetches and the time they take at the site's rate — 10 pages/s, the sites file's default — and at
the rate the simulator was given), ``canonize --rules mine.json --unvalidated`` on the real log's
URLs next to :class:`dustbuster.core.canon.canonize.Canonizer` in process.  A worker's ingest needs the
broker: bench/bench_stream.py measures it.  Growth: the fetch-free candidate checks (UNSAFE flags,
and validate's unobserved output, applicable URLs and coverage) in process on U and 2U URLs × C
and 2C candidates, one pass (core/canon/urlreach.py) next to the per-candidate checks they replaced
(dustdev/checkref.py).

    .venv/bin/python bench/bench_commands.py [--repeat 3] [--ref-repeat 1] [--only mine,validate,canonize,growth]
    .venv/bin/python bench/bench_commands.py --small      # tiny logs, one run: what CI runs (tests/test_bench_small.py)

Prints Markdown tables; writes bench/out/bench_commands.json (``--out`` elsewhere).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.bench_mine import COMBINED, LOGS, OUT, measure, real_log  # noqa: E402

WORK = OUT / "commands"
SITE = "www.example.com"
#: source site of tests/data/logs → the simulator host it is served under in the host-aware log
SIM_HOST = {"semicomplete-apache": "www.forum.test", "secrepo-selflogs": "forum.test",
            "monitorware-twiki": "politics.forum.test", "nasa-ksc-1995-tsv-sample": "movies.forum.test"}
NASA = ["nasa-ksc-1995-tsv-sample/nasa_19950801_fullday.tsv", "nasa-ksc-1995-tsv-sample/nasa_19950701.tsv"]
SITE_RATE = 10.0  #: pages per second: the sites file's default rate_per_s (core/validation/siteconfig.py)
SIM_RATE = 2000.0  #: the rate the simulator on loopback is fetched at here

ENGINE = r"""
import json, sys, time
sys.path.insert(0, {root!r})
from dustbuster.core.mining.mine import mine, unsafe_flags
from dustbuster.logs.reader import read_urllist
t0 = time.perf_counter()
ul, st = read_urllist({logs!r}, site={site!r})
t1 = time.perf_counter()
res = mine(ul, stage={stage!r})
t2 = time.perf_counter()
flags = unsafe_flags(res, ul)
t3 = time.perf_counter()
cands = len(res.kept if res.stage == "eliminate" else res.detected) + len(res.param_rules()) + len(res.general)
print(json.dumps({{"read_s": t1 - t0, "mine_s": t2 - t1, "flags_s": t3 - t2, "total_s": t3 - t0, "urls": len(ul),
                  "lines": st.lines, "candidates": cands, "unsafe": len(flags)}}))
"""


def run_timed(args: list[str], **kw) -> dict:
    """Wall and CPU seconds (user + system) of one child process; its exit status checked."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    r = subprocess.run(args, capture_output=True, text=True, cwd=ROOT, **kw)
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if r.returncode != 0:
        raise SystemExit(f"{' '.join(args[:4])} ... failed ({r.returncode}):\n{r.stderr[-3000:]}")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return {"wall_s": wall, "cpu_s": cpu, "stdout": r.stdout}


def dust(*args: str) -> list[str]:
    return [sys.executable, "-m", "dustbuster", *args]


def cut(paths: list[Path], lines: int | None, name: str) -> list[Path]:
    """``paths`` as they are, or their first ``lines`` lines each (header kept) under WORK/name."""
    if not lines:
        return paths
    out = []
    for k, p in enumerate(paths):
        q = WORK / name / f"{k}-{p.name}"
        q.parent.mkdir(parents=True, exist_ok=True)
        with open(p, "rb") as fh:
            q.write_bytes(b"".join(line for _, line in zip(range(lines), fh)))
        out.append(q)
    return out


def hostaware_log(port: int, lines: int | None) -> Path:
    """The real lines in vhost form, each source under its simulator host (module docstring)."""
    path = WORK / f"hostaware-{lines or 'all'}.log"
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w", encoding="utf-8", errors="surrogateescape") as out:
        for f in COMBINED + ["monitorware-twiki/access_log"]:
            vhost = f"{SIM_HOST[f.split('/')[0]]}:{port}"
            text = (LOGS / f).read_text(encoding="utf-8", errors="surrogateescape").splitlines()
            out.writelines(f"{vhost} {line}\n" for line in text[:lines])
        for f in NASA:
            out.writelines(_nasa_as_vhost(LOGS / f, f"{SIM_HOST['nasa-ksc-1995-tsv-sample']}:{port}", lines))
    return path


def _nasa_as_vhost(path: Path, vhost: str, lines: int | None):
    """A NASA TSV row (host logname time method url response bytes) as a vhost common-format line."""
    rows = path.read_text(encoding="utf-8", errors="surrogateescape").splitlines()[1:]
    for row in rows[:lines]:
        f = row.split("\t")
        if len(f) < 7 or not f[2].isdigit():
            continue
        when = time.strftime("%d/%b/%Y:%H:%M:%S +0000", time.gmtime(int(f[2])))
        yield f'{vhost} {f[0]} - {f[1]} [{when}] "{f[3]} {f[4]} HTTP/1.0" {f[5]} {f[6] or "-"}\n'


def med(rows: list[dict], key: str) -> float:
    return statistics.median(r[key] for r in rows)


def bench_mine(name: str, logs: list[Path], site: str | None, stage: str, repeat: int, ref: list[dict]) -> dict:
    """``dustbuster mine`` end to end, the engine in a fresh process, and the reference's floor."""
    site_args = ["--site", site] if site else []
    out = WORK / f"mine-{name}-{stage}.json"
    cmd, eng = [], []
    for _ in range(repeat):  # interleaved
        cmd.append(run_timed(dust("mine", *map(str, logs), *site_args, "--stage", stage, "--json", "-o", str(out), "-q")))
        code = ENGINE.format(root=str(ROOT), logs=[str(p) for p in logs], site=site, stage=stage)
        eng.append(json.loads(run_timed([sys.executable, "-c", code], env=_env())["stdout"].strip().splitlines()[-1]))
    row = {"log": name, "stage": stage, "lines": eng[0]["lines"], "urls": eng[0]["urls"], "candidates": eng[0]["candidates"],
           "unsafe": eng[0]["unsafe"], "command_wall_s": med(cmd, "wall_s"), "command_cpu_s": med(cmd, "cpu_s"),
           "engine_read_s": med(eng, "read_s"), "engine_mine_s": med(eng, "mine_s"), "engine_flags_s": med(eng, "flags_s"),
           "engine_total_s": med(eng, "total_s"), "runs": {"command": cmd, "engine": eng}}
    if ref:
        row["reference_total_s"] = med(ref, "total_s")
        row["ratio_reference_to_command"] = row["reference_total_s"] / row["command_wall_s"]
        row["ratio_reference_to_engine"] = row["reference_total_s"] / row["engine_total_s"]
        row["reference_cpu_s"] = med(ref, "cpu_s")  # the child's whole CPU time, its start and imports included
        row["ratio_reference_to_command_cpu"] = row["reference_cpu_s"] / row["command_cpu_s"]
    for r in cmd:
        r.pop("stdout", None)
    return row


def _env() -> dict:
    return {**os.environ, "PYTHONHASHSEED": "0"}


def mine_table(rows: list[dict]) -> None:
    print("| log | stage | lines | unique URLs | candidates | UNSAFE | `mine` wall (s) | `mine` CPU (s) | engine: read / mine / flags (s) "
          "| reference (s) | reference / `mine` | reference / engine | reference / `mine`, CPU |")
    print("|---|---|---:|---:|---:|---:|---:|---:|---|---:|---:|---:|---:|")
    for r in rows:
        ref = r.get("reference_total_s")
        print(f"| {r['log']} | {r['stage']} | {r['lines']:,} | {r['urls']:,} | {r['candidates']:,} | {r['unsafe']} | "
              f"{r['command_wall_s']:.2f} | {r['command_cpu_s']:.2f} | {r['engine_read_s']:.2f} / {r['engine_mine_s']:.2f} / "
              f"{r['engine_flags_s']:.2f} | " + (f"{ref:.2f} | {r['ratio_reference_to_command']:.1f}× | "
                                                 f"{r['ratio_reference_to_engine']:.1f}× | {r['ratio_reference_to_command_cpu']:.1f}× |" if ref
                                                 else "– | – | – | – |"))


def bench_validate(lines: int | None, repeat: int) -> dict:
    """``dustbuster validate`` of the host-aware log against the simulator, with thousands of candidates."""
    from dustdev.devsim import SITE as SIM_SITE, start_sim_site, write_sites

    sim, port = start_sim_site(ROOT)
    try:
        log = hostaware_log(port, lines)
        sites = write_sites(WORK / "sites.json", port, rate_per_s=SIM_RATE, concurrency=8)
        cands = WORK / "hostaware-detect.json"
        run_timed(dust("mine", str(log), "--stage", "detect", "--json", "-o", str(cands), "-q"))
        runs = []
        for _ in range(repeat):
            out = WORK / "hostaware-rules.json"
            r = run_timed(dust("validate", str(log), "--site", SIM_SITE, "--sites", str(sites),
                               "--candidates", str(cands), "-o", str(out), "-q"))
            st = json.loads(out.read_text())["stats"]
            runs.append({"wall_s": r["wall_s"], "cpu_s": r["cpu_s"], "fetches": st["fetches"], "urls": st["urls"],
                         "candidates": st["candidates"], "valid": st["valid"], "covered": st["covered"],
                         "decided": st["decided"]})
    finally:
        sim.terminate()
        sim.wait(10)
    row = {k: runs[0][k] for k in ("urls", "candidates", "fetches", "valid", "covered", "decided")}
    row |= {"wall_s": med(runs, "wall_s"), "cpu_s": med(runs, "cpu_s"), "site_rate_per_s": SITE_RATE, "sim_rate_per_s": SIM_RATE,
            "runs": runs}
    row["fetch_s_at_site_rate"] = row["fetches"] / SITE_RATE
    row["cpu_to_fetch_time"] = row["cpu_s"] / row["fetch_s_at_site_rate"] if row["fetches"] else None
    print(f"\n`validate`, host-aware log: {row['urls']:,} URLs, {row['candidates']:,} candidates, {row['fetches']:,} pages "
          f"fetched, {row['valid']} valid, {row['covered']} covered\n")
    print("| wall (s), simulator at 2,000 pages/s | CPU (s) | fetches | their time at the site's 10 pages/s (s) | CPU / fetch time |")
    print("|---:|---:|---:|---:|---:|")
    ratio = f"{row['cpu_to_fetch_time']:.2f}" if row["cpu_to_fetch_time"] is not None else "–"
    print(f"| {row['wall_s']:.1f} | {row['cpu_s']:.1f} | {row['fetches']:,} | {row['fetch_s_at_site_rate']:.1f} | {ratio} |")
    return row


CANON = r"""
import json, sys, time
sys.path.insert(0, {root!r})
from dustbuster.core.canon.canonize import Canonizer
from dustbuster.core.model.rules import canonization_order, rules_from_document
doc = json.load(open({rules!r}))
urls = open({urls!r}).read().splitlines()
t0 = time.perf_counter()
canon = Canonizer(canonization_order(rules_from_document(doc)))
out = [canon(u) for u in urls]
print(json.dumps({{"canon_s": time.perf_counter() - t0, "urls": len(urls), "changed": sum(a != b for a, b in zip(urls, out))}}))
"""


def bench_canonize(logs: list[Path], repeat: int) -> dict:
    """``canonize --rules RULES --unvalidated`` on the real log's unique URLs (4 times over) vs the
    Canonizer; RULES: ``mine --json``'s candidates less those it flags UNSAFE (applied, they would
    mangle every URL: what a person applying candidates leaves out)."""
    from dustbuster.logs.reader import read_urllist

    ul, _ = read_urllist([str(p) for p in logs], site=SITE)
    urls = WORK / "real-urls.txt"
    urls.write_text("".join(f"{u}\n" for u in sorted(ul)) * 4)
    mined = WORK / "mine-real-eliminate.json"
    if not mined.exists():
        run_timed(dust("mine", *map(str, logs), "--site", SITE, "--json", "-o", str(mined), "-q"))
    doc = json.loads(mined.read_text())
    for key in [k for k in ("param_rules", "general_rules", "rules") if k in doc]:  # mine@2: "rules" only
        doc[key] = [r for r in doc[key] if "unsafe" not in r]
    rules = WORK / "mine-real-safe.json"
    rules.write_text(json.dumps(doc))
    cmd, eng = [], []
    for _ in range(repeat):
        with open(urls) as fh:
            cmd.append(run_timed(dust("canonize", "--rules", str(rules), "--unvalidated", "--no-normalize", "--site", SITE,
                                      "-o", str(WORK / "canonical.txt"), "-q"), stdin=fh))
        eng.append(json.loads(run_timed([sys.executable, "-c", CANON.format(root=str(ROOT), rules=str(rules), urls=str(urls))])
                              ["stdout"].strip().splitlines()[-1]))
    n = eng[0]["urls"]
    row = {"urls": n, "changed": eng[0]["changed"], "command_wall_s": med(cmd, "wall_s"), "command_cpu_s": med(cmd, "cpu_s"),
           "engine_s": med(eng, "canon_s")}
    print(f"\n`canonize --unvalidated` with the real log's candidates not flagged UNSAFE: {n:,} URLs ({row['changed']:,} changed)\n")
    print("| `canonize` wall (s) | URLs/s end to end | engine (Canonizer) (s) | URLs/s engine |")
    print("|---:|---:|---:|---:|")
    print(f"| {row['command_wall_s']:.2f} | {n / row['command_wall_s']:,.0f} | {row['engine_s']:.2f} | {n / row['engine_s']:,.0f} |")
    return row


def bench_growth(log: Path, urls_n: int, cands_n: int, plain: bool) -> dict:
    """The fetch-free candidate checks at U/2U URLs × C/2C candidates of the host-aware log (its
    phase-1 pairs, the parameter and general rules): one pass and per candidate."""
    from dustbuster.core.mining.mine import mine
    from dustbuster.core.model.rules import SubstringRule
    from dustbuster.logs.reader import read_urllist

    ul, _ = read_urllist([str(log)])
    res = mine(ul, stage="detect")
    every = [SubstringRule(p.alpha, p.beta) for p in res.detected] + res.param_rules() + res.general
    pool = random.Random(0).sample(sorted(ul), min(len(ul), 2 * urls_n))
    rows = []
    print(f"\nfetch-free candidate checks, in process ({len(every):,} candidates and {len(ul):,} URLs available)\n")
    print("| URLs | candidates | UNSAFE flags, one pass (s) | per candidate (s) | validate's checks, one pass (s) | per candidate (s) |")
    print("|---:|---:|---:|---:|---:|---:|")
    for u in (urls_n, 2 * urls_n):
        for c in (cands_n, 2 * cands_n):
            row = {"urls": min(u, len(pool)), "candidates": min(c, len(every)), **_checks(pool[:u], every[:c], plain)}
            rows.append(row)
            print(f"| {row['urls']:,} | {row['candidates']:,} | {row['unsafe_s']:.2f} | {_fmt(row.get('unsafe_plain_s'))} | "
                  f"{row['prefetch_s']:.2f} | {_fmt(row.get('prefetch_plain_s'))} |")
    return {"rows": rows}


def _fmt(x: float | None) -> str:
    return "–" if x is None else f"{x:.2f}"


def _checks(urls: list[str], rules: list, plain: bool) -> dict:
    """Seconds of the UNSAFE flags and of validate's fetch-free checks of every rule (unobserved
    output, applicable URLs, covered by the first five rules), one pass (and per candidate)."""
    from dustbuster.core.canon.coverage import Coverage
    from dustbuster.core.canon.rulecheck import unobserved_output, unsafe_candidates
    from dustbuster.core.canon.urlreach import URLReach

    valid, seen = rules[:5], frozenset(urls)
    t0 = time.process_time()
    flags = unsafe_candidates(rules, urls)
    t1 = time.process_time()
    reach = URLReach(urls, rules)
    cover = Coverage(urls, reach)
    fast = [(unobserved_output(r, urls, seen, reach=reach), len(reach.changed(r)), cover(r, valid)) for r in rules]
    t2 = time.process_time()
    out = {"unsafe_s": t1 - t0, "prefetch_s": t2 - t1, "unsafe": len(flags)}
    if plain:
        from dustdev.checkref import changed_plain, covered_by_plain, unobserved_output_plain, unsafe_candidate_plain

        t0 = time.process_time()
        old = {r.text: w for r in rules if (w := unsafe_candidate_plain(r, urls))}
        t1 = time.process_time()
        slow = [(unobserved_output_plain(r, urls, seen), len(changed_plain(r, urls)), covered_by_plain(r, valid, urls))
                for r in rules]
        t2 = time.process_time()
        if old != flags or slow != fast:
            raise SystemExit("one pass and per candidate disagree")
        out |= {"unsafe_plain_s": t1 - t0, "prefetch_plain_s": t2 - t1}
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--repeat", type=int, default=3, help="runs of each command, median reported (default 3)")
    ap.add_argument("--ref-repeat", type=int, default=1, help="reference runs per log (default 1)")
    ap.add_argument("--only", default="mine,validate,canonize,growth", help="comma-separated parts (default all)")
    ap.add_argument("--growth-urls", type=int, default=2500, help="U of the growth table (default 2500)")
    ap.add_argument("--growth-candidates", type=int, default=2000, help="C of the growth table (default 2000)")
    ap.add_argument("--no-plain", action="store_true", help="growth: leave out the per-candidate checks")
    ap.add_argument("--small", action="store_true", help="tiny logs (300 lines a file), one run, no reference: CI's check that it runs")
    ap.add_argument("--out", type=Path, default=OUT / "bench_commands.json", help="the JSON results (default bench/out/bench_commands.json)")
    a = ap.parse_args()
    lines = 300 if a.small else None
    repeat = 1 if a.small else a.repeat
    parts = a.only.split(",")
    WORK.mkdir(parents=True, exist_ok=True)
    real = cut(real_log(), lines, "small")
    results: dict = {"when": time.strftime("%Y-%m-%d %H:%M:%S"), "small": a.small, "python": sys.version.split()[0]}
    if "mine" in parts:
        results["mine"] = run_mine(real, lines, repeat, 0 if a.small else a.ref_repeat)
    if "validate" in parts:
        results["validate"] = bench_validate(lines, repeat)
    if "canonize" in parts:
        results["canonize"] = bench_canonize(real, repeat)
    if "growth" in parts:
        u, c = (100, 50) if a.small else (a.growth_urls, a.growth_candidates)
        results["growth"] = bench_growth(hostaware_log(8080, lines), u, c, not a.no_plain)
    a.out.parent.mkdir(parents=True, exist_ok=True)
    if a.only != ap.get_default("only") and a.out.exists():  # a part run again: the others' results kept
        results = json.loads(a.out.read_text()) | {k: v for k, v in results.items() if k in parts}
    a.out.write_text(json.dumps(results, indent=1))
    return 0


def _with_cpu(fn, *args) -> dict:
    """``fn(*args)`` (a dict), with the CPU seconds its child processes took as ``cpu_s``."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    row = fn(*args)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return row | {"cpu_s": (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)}


def run_mine(real: list[Path], lines: int | None, repeat: int, ref_repeat: int) -> list[dict]:
    """``mine`` on the real log (and its reference floor) and on the host-aware one (port 8080 in its hosts)."""
    ref = [_with_cpu(measure, "reference", real) for _ in range(ref_repeat)]
    host = hostaware_log(8080, lines)
    rows = [bench_mine("real", real, SITE, "eliminate", repeat, ref), bench_mine("hostaware", [host], None, "eliminate", repeat, []),
            bench_mine("hostaware", [host], None, "detect", repeat, [])]
    print()
    mine_table(rows)
    return rows


if __name__ == "__main__":
    raise SystemExit(main())
