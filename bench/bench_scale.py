"""Scale-out: 1, 2, 3 (or 1, 2, 4, 8) workers in one consumer group on one broker, the same new-URL load.

    .venv/bin/python bench/bench_scale.py [--sites 6] [--lines 20000] [--workers 1,2,3] [--window 5] [--parse-processes N]
    bash bench/device_scale.sh      # 1, 2, 4, 8 workers on a 16-core machine of the device tool

``--workers 1,2,4,8`` for the curve on a machine with a core each; ``--parse-processes N``: each
worker decodes and parses raw messages in N processes of its own (DUST_PARSE_PROCESSES; default 0 here,
for the curves measured before the worker's default became 1 on two CPUs or more; ``auto`` gives the
worker's default).

Uses DUST_KAFKA_BOOTSTRAP if set, else starts the project's local KRaft broker.  For each worker
count, on fresh topics with ``--sites`` partitions: the workers are started and given time to join
the group, then one synthetic forum log per site (dustbuster.sim.forum, a different seed each; the sites named so that each lands on a partition of its own, see balanced_sites) is
produced, each site under its own name; the run ends when every site's candidate set has seen all
its lines, and each site's URL count is checked against ``dustbuster mine``'s.  The rate is the
unique URLs of all sites over the group's ingest span (the earliest first message applied to the
latest last one, across sites).  The window (``--window``, 30 s) comes after the ingest: a window
is per site and runs on the worker that owns the site, so windows spread over the workers as the
partitions do, and leaving them out of the span keeps the comparison about the ingest (with 5 s
windows the span depends on whether a window tick falls inside it; ``--window auto`` gives the first
worker count 45 s and each later count ``JOIN_S`` + the produce time + 1.5 × the first count's span
scaled by the worker ratio, + 5 s, so a short run does not wait a long window).  The producers
(``--producers`` processes, all sites at once) run meanwhile and their time is given: on a machine with few cores the workers, the broker and the
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

from dustdev.benchout import emit  # noqa: E402

from dustdev.devkafka import Worker, kafka_bootstrap, latest_candidates, stream_env  # noqa: E402

JOIN_S = 10  #: seconds the workers get to join the group before the first line


def _produce_one(bootstrap: str, topic: str, site: str, path: str) -> None:
    """One site's log onto the raw topic (runs in a producer process of its own)."""
    import asyncio

    from dustbuster.logs.reader import raw_lines
    from dustbuster.stream.producer import feed

    asyncio.run(feed(bootstrap, topic, path, site, lines=raw_lines(Path(path))))


def produce(env: dict, files: dict[str, Path], processes: int) -> float:
    """Every site's log produced at once, by ``processes`` producer processes (one producer in
    this process would cap the rate the workers can show on a many-core machine: it makes ~30k
    lines/s on the 2-core machine); seconds taken."""
    from concurrent.futures import ProcessPoolExecutor

    from dustbuster.stream.settings import Settings

    topic = Settings(topic_prefix=env["DUST_TOPIC_PREFIX"]).raw_topic  # the topic table's name
    t0 = time.perf_counter()
    with ProcessPoolExecutor(max_workers=max(1, processes)) as pool:
        jobs = [pool.submit(_produce_one, env["DUST_KAFKA_BOOTSTRAP"], topic, s, str(p)) for s, p in files.items()]
        for j in jobs:
            j.result()
    return time.perf_counter() - t0


def prefill_topic(env: dict, files: dict[str, Path], processes: int) -> float:
    """``--prefill``: the service's topics created (their partitions, as a worker would make them),
    then every site's log produced before any worker starts, so the producers share no core with the
    workers; seconds taken by the producing."""
    import asyncio

    from dustbuster.stream.admin import ensure_topics
    from dustbuster.stream.settings import Settings

    asyncio.run(ensure_topics(Settings.from_env(env)))
    return produce(env, files, processes)


def expected_urls(files: dict[str, Path]) -> dict[str, int]:
    """Each site's unique URLs as ``dustbuster mine`` reads its log."""
    from dustbuster.logs.reader import read_urllist

    return {site: len(read_urllist([path], site=site)[0]) for site, path in files.items()}


def run(bootstrap: str, tmp: Path, files: dict[str, Path], lines: int, workers: int, window: float,
        producers: int = 1, parse_processes: "int | str" = 0, prefill: bool = False) -> dict:
    env = stream_env(bootstrap, window=window, partitions=len(files)) | {"DUST_PARSE_PROCESSES": str(parse_processes)}
    tag = env["DUST_TOPIC_PREFIX"]  # fresh topics, and fresh data directories with them
    if prefill:  # the topics made with their partitions, every line on the raw topic before any worker
        produce_s = prefill_topic(env, files, producers)
    ws = [Worker(env, tmp / f"{tag}w{i}", tmp / f"{tag}w{i}.log").start() for i in range(workers)]
    try:
        if not prefill:
            time.sleep(JOIN_S)
            produce_s = produce(env, files, producers)
        got = latest_candidates(env, {s: lines for s in files}, timeout=900, workers=ws)
        stats = {site: d["stats"] for site, d in got.items()}
    finally:
        for w in ws:
            w.stop()
    first = min(st["ingest_first"] for st in stats.values())
    last = max(st["ingest_last"] for st in stats.values())
    urls = sum(st["urls"] for st in stats.values())
    owners = sorted({st["worker"] for st in stats.values()})
    per_worker = {w: [st for st in stats.values() if st["worker"] == w] for w in owners}
    busiest = max(per_worker.values(), key=len)
    want = expected_urls(files)
    return {"workers": workers, "workers_with_sites": len(owners), "unique_urls": urls, "produce_s": round(produce_s, 2),
            "span_s": round(last - first, 2),
            "new_urls_per_s": round(urls / (last - first)),
            "urls_equal_to_mine": all(stats[s]["urls"] == n for s, n in want.items()),
            # the span is the busiest worker's: Faust's assignment of sites (partitions) to workers
            "sites_per_worker": sorted((len(v) for v in per_worker.values()), reverse=True),
            "busiest_worker_span_s": round(max(st["ingest_last"] for st in busiest)
                                           - min(st["ingest_first"] for st in busiest), 2),
            "per_worker_urls_per_s": sorted(round(sum(st["urls"] for st in v)
                                                  / max(1e-9, max(st["ingest_last"] for st in v)
                                                        - min(st["ingest_first"] for st in v)))
                                            for v in per_worker.values())}


def balanced_sites(n: int) -> list[str]:
    """``n`` site names that Kafka's default partitioner (murmur2 of the key, as our producer's
    aiokafka uses) spreads evenly over ``n`` partitions, one each.  Named ``siteK.example`` in the
    order found.  Real deployments have many sites, so their partitions even out by number; with a
    handful of sites, hash collisions would measure luck instead (16 plain names land on 9 of 16
    partitions, up to 3 on one, and the busiest worker sets the span)."""
    from aiokafka.partitioner import DefaultPartitioner

    part, parts = DefaultPartitioner(), list(range(n))
    names, taken = [], set()
    k = 0
    while len(names) < n:
        name = f"site{k}.example"
        p = part(name.encode(), parts, parts)
        if p not in taken:
            taken.add(p)
            names.append(name)
        k += 1
    return names


def window_for(option: str, workers: int, first: dict) -> float:
    """The window of one run: ``option`` seconds, or under 'auto' a window that falls after the
    expected ingest (45 s until the first run's span is known)."""
    if option != "auto":
        return float(option)
    if not first:
        return 45.0
    expect = first["span_s"] * first["workers"] / workers
    return round(max(12.0, JOIN_S + first["produce_s"] + 1.5 * expect + 5), 1)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sites", type=int, default=6)
    ap.add_argument("--lines", type=int, default=20000, help="lines per site")
    ap.add_argument("--workers", default="1,2,3")
    ap.add_argument("--window", default="30",
                    help="window seconds; the default lets the ingest finish before the first window; 'auto' "
                         "sizes each worker count's window from the first count's span (see above)")
    ap.add_argument("--repeat", type=int, default=3, help="runs per worker count (interleaved); medians")
    ap.add_argument("--producers", type=int, default=1,
                    help="producer processes (default 1; on a many-core machine give several, or the producer "
                         "caps the rate)")
    ap.add_argument("--small", action="store_true", help="a few hundred lines, one run: CI's check that it runs")
    ap.add_argument("--out", type=Path, default=ROOT / "bench" / "out" / "bench_scale.json", help="the JSON results")
    ap.add_argument("--prefill", action="store_true",
                    help="fill the raw topic before the workers start (the producers then share no core with "
                         "them); give the broker DUST_BROKER_REBALANCE_DELAY_MS so the workers, started together, "
                         "get one balanced first assignment")
    ap.add_argument("--parse-processes", default="0",
                    help="parser processes per worker (DUST_PARSE_PROCESSES: a number, or auto; default 0: parse inline)")
    a = ap.parse_args()
    if a.small:
        a.sites, a.lines, a.workers, a.window, a.repeat = 2, 400, "2", "2", 1
    from dustbuster.sim.forum import generate

    tmp = Path(tempfile.mkdtemp(prefix="dust-scale-"))
    files = {}
    for k, name in enumerate(balanced_sites(a.sites)):
        p = tmp / f"site{k}.log"
        p.write_text("\n".join(generate(a.lines, seed=200 + k)) + "\n")
        files[name] = p
    out = {"when": time.strftime("%Y-%m-%d %H:%M"), "cpus": os.cpu_count(), "sites": a.sites, "lines_per_site": a.lines,
           "window": a.window, "producers": a.producers, "parse_processes": a.parse_processes, "prefill": a.prefill,
           "runs": []}
    counts = [int(x) for x in a.workers.split(",")]
    first: dict = {}
    with kafka_bootstrap() as bootstrap:
        for _ in range(a.repeat):
            for n in counts:
                window = window_for(a.window, n, first)
                row = run(bootstrap, tmp, files, a.lines, n, window, a.producers, a.parse_processes, a.prefill)
                row["window_s"] = window
                first = first or {"workers": n, "span_s": row["span_s"], "produce_s": row["produce_s"]}
                out["runs"].append(row)
                sys.stderr.write(json.dumps(row) + "\n")
    out["median_new_urls_per_s"] = {n: statistics.median(r["new_urls_per_s"] for r in out["runs"] if r["workers"] == n)
                                    for n in counts}
    shutil.rmtree(tmp, ignore_errors=True)
    emit(out, a.out)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
