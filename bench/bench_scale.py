"""Scale-out: 1, 2 and 3 workers in one consumer group on one broker, the same new-URL load.

    .venv/bin/python bench/bench_scale.py [--sites 6] [--lines 20000] [--workers 1,2,3] [--window 5] [--parse-processes N]

``--workers 1,2,4,8`` for the curve on a machine with a core each; ``--parse-processes N``: each
worker decodes and parses raw messages in N processes of its own (DUST_PARSE_PROCESSES; default 0).

Uses DUST_KAFKA_BOOTSTRAP if set, else starts the project's local KRaft broker.  For each worker
count, on fresh topics with ``--sites`` partitions: the workers are started and given time to join
the group, then one synthetic forum log per site (dustbuster.sim.forum, a different seed each) is
produced, each site under its own name; the run ends when every site's candidate set has seen all
its lines, and each site's URL count is checked against ``dustbuster mine``'s.  The rate is the
unique URLs of all sites over the group's ingest span (the earliest first message applied to the
latest last one, across sites).  The window (``--window``, 30 s) comes after the ingest: a window
is per site and runs on the worker that owns the site, so windows spread over the workers as the
partitions do, and leaving them out of the span keeps the comparison about the ingest (with 5 s
windows the span depends on whether a window tick falls inside it).  The producer (one per site, in this process, all at once) runs
meanwhile and its time is given: on a machine with few cores the workers, the broker and the
producer share them, which the output states (``cpus``).

Runs every worker count ``--repeat`` times, interleaved; prints JSON with the medians and writes
bench/out/bench_scale.json.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from dustbuster.devkafka import Worker, kafka_bootstrap, latest_candidates, stream_env  # noqa: E402

JOIN_S = 10  #: seconds the workers get to join the group before the first line


def produce(env: dict, files: dict[str, Path]) -> float:
    """Every site's log produced at once (one producer per site, in this process); seconds taken."""
    import asyncio

    from dustbuster.logs.reader import raw_lines
    from dustbuster.stream.producer import feed

    async def all_sites() -> None:
        topic = env["DUST_TOPIC_PREFIX"] + "-raw"
        await asyncio.gather(*(feed(env["DUST_KAFKA_BOOTSTRAP"], topic, str(p), s, lines=raw_lines(p))
                               for s, p in files.items()))

    t0 = time.perf_counter()
    asyncio.run(all_sites())
    return time.perf_counter() - t0


def expected_urls(files: dict[str, Path]) -> dict[str, int]:
    """Each site's unique URLs as ``dustbuster mine`` reads its log."""
    from dustbuster.logs.reader import read_urllist

    return {site: len(read_urllist([path], site=site)[0]) for site, path in files.items()}


def run(bootstrap: str, tmp: Path, files: dict[str, Path], lines: int, workers: int, window: float,
        parse_processes: int = 0) -> dict:
    env = stream_env(bootstrap, window=window, partitions=len(files)) | {"DUST_PARSE_PROCESSES": str(parse_processes)}
    tag = env["DUST_TOPIC_PREFIX"]  # fresh topics, and fresh data directories with them
    ws = [Worker(env, tmp / f"{tag}w{i}", tmp / f"{tag}w{i}.log").start() for i in range(workers)]
    try:
        time.sleep(JOIN_S)
        produce_s = produce(env, files)
        got = latest_candidates(env, {s: lines for s in files}, timeout=900, workers=ws)
        stats = {site: d["stats"] for site, d in got.items()}
    finally:
        for w in ws:
            w.stop()
    first = min(st["ingest_first"] for st in stats.values())
    last = max(st["ingest_last"] for st in stats.values())
    urls = sum(st["urls"] for st in stats.values())
    owners = sorted({st["worker"] for st in stats.values()})
    want = expected_urls(files)
    return {"workers": workers, "workers_with_sites": len(owners), "unique_urls": urls, "produce_s": round(produce_s, 2),
            "span_s": round(last - first, 2),
            "new_urls_per_s": round(urls / (last - first)),
            "urls_equal_to_mine": all(stats[s]["urls"] == n for s, n in want.items())}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sites", type=int, default=6)
    ap.add_argument("--lines", type=int, default=20000, help="lines per site")
    ap.add_argument("--workers", default="1,2,3")
    ap.add_argument("--window", type=float, default=30.0,
                    help="window seconds; the default lets the ingest finish before the first window")
    ap.add_argument("--repeat", type=int, default=3, help="runs per worker count (interleaved); medians")
    ap.add_argument("--parse-processes", type=int, default=0,
                    help="parser processes per worker (DUST_PARSE_PROCESSES; default 0: parse inline)")
    a = ap.parse_args()
    from dustbuster.sim.forum import generate

    tmp = Path(tempfile.mkdtemp(prefix="dust-scale-"))
    files = {}
    for k in range(a.sites):
        p = tmp / f"site{k}.log"
        p.write_text("\n".join(generate(a.lines, seed=200 + k)) + "\n")
        files[f"site{k}.example"] = p
    out = {"when": time.strftime("%Y-%m-%d %H:%M"), "cpus": os.cpu_count(), "sites": a.sites, "lines_per_site": a.lines,
           "window_s": a.window, "parse_processes": a.parse_processes, "runs": []}
    counts = [int(x) for x in a.workers.split(",")]
    with kafka_bootstrap() as bootstrap:
        for _ in range(a.repeat):
            for n in counts:
                row = run(bootstrap, tmp, files, a.lines, n, a.window, a.parse_processes)
                out["runs"].append(row)
                sys.stderr.write(json.dumps(row) + "\n")
    out["median_new_urls_per_s"] = {n: statistics.median(r["new_urls_per_s"] for r in out["runs"] if r["workers"] == n)
                                    for n in counts}
    shutil.rmtree(tmp, ignore_errors=True)
    print(json.dumps(out, indent=1))
    (ROOT / "bench" / "out").mkdir(parents=True, exist_ok=True)
    (ROOT / "bench" / "out" / "bench_scale.json").write_text(json.dumps(out, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
