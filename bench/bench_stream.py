"""Streaming benchmarks through a real broker, one worker process, with their floors measured in
the same run.

    .venv/bin/python bench/bench_stream.py [--lines 50000] [--window 5] [--repeat 3] [--parse-processes N]

``--parse-processes N``: the worker decodes and parses raw messages in N processes of its own
(DUST_PARSE_PROCESSES), to use more cores per worker; ``auto``, the default, is the worker's own
default (1 on two CPUs or more); 0 parses on the agent's thread.

Uses DUST_KAFKA_BOOTSTRAP if set, else starts the project's local KRaft broker.  Steps:

1. new URLs: the synthetic forum log (dustbuster.sim.forum) is produced, then a worker started; the
   rate is unique URLs / the worker's ingest span (first message applied to the last; the windows
   that ran meanwhile included, since they share the state thread);
2. known URLs: the worker stopped, the same log produced four more times (every URL is known), the
   worker started again on its state with a window longer than the run (no window runs: the ingest
   alone); the rate is lines per second between its first and last acknowledged changelog writes
   (each group's ``\\0applied`` record, with the broker's timestamp);
3. floors: a bare aiokafka consumer reading the raw topic (all five passes) and decoding each
   message's JSON; the batch engine (read + ``mine``, in this process) on the same log;
4. state size on disk per 10,000 unique URLs (after step 2, compacted);
5. freshness: a worker already running and idle, a fresh log fed; time from the feeder's last
   acknowledged line to the candidate set that has seen every line.
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from dustdev.devkafka import Worker, kafka_bootstrap, read_topic, stream_env  # noqa: E402
from dustbuster.core.errors import ConfigError  # noqa: E402
from dustbuster.stream.settings import Settings  # noqa: E402


def snapshots(env: dict, site: str, until_lines: int, timeout: float = 600) -> list[tuple[float, int, int]]:
    """(time, lines, urls, ingest span) of every candidate set of ``site``, polled until ``until_lines``."""
    topic = env["DUST_TOPIC_PREFIX"] + "-candidates"
    seen: dict[int, tuple[float, int, int]] = {}
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        for m in read_topic(env["DUST_KAFKA_BOOTSTRAP"], topic):
            d = json.loads(m.value)
            if d["site"] == site and m.offset not in seen:
                st = d["stats"]
                seen[m.offset] = (m.timestamp / 1000.0, st["lines"], st["urls"],
                                  st.get("ingest_last", 0) - st.get("ingest_first", 0))
        rows = sorted(seen.values())
        if rows and rows[-1][1] >= until_lines:
            return rows
        time.sleep(0.5)
    raise SystemExit("timed out waiting for candidates")


BATCH_LINES = 500  #: lines per raw message (dustbuster feed --batch-lines)


def feed(env: dict, path: Path, site: str) -> float:
    t0 = time.perf_counter()
    subprocess.run([sys.executable, "-m", "dustbuster", "feed", str(path), "--site", site, "-q", "--batch-lines",
                    str(BATCH_LINES)],
                   cwd=ROOT, env=env, check=True)
    return time.perf_counter() - t0


def applied_timeline(bootstrap: str, topic: str) -> list[tuple[float, int]]:
    """(broker timestamp in s, raw offset) of every ``\\0applied`` record of the URL changelog
    (a fresh topic: none is compacted away during a run)."""
    return sorted((m.timestamp / 1000.0, int(m.value)) for m in read_topic(bootstrap, topic) if m.key == b"\0applied")


def timeline_rate(points: list[tuple[float, int]], lo: int, lines_per_message: int) -> float:
    """Lines per second between the first and the last applied offset beyond ``lo``."""
    mid = [p for p in points if p[1] > lo]
    if len(mid) < 2 or mid[-1][0] <= mid[0][0]:
        return float("nan")
    return (mid[-1][1] - mid[0][1]) * lines_per_message / (mid[-1][0] - mid[0][0])


def bare_consumer(bootstrap: str, topic: str) -> tuple[int, float]:
    """(lines, seconds): every message of ``topic`` read by a plain aiokafka consumer, its JSON decoded."""
    import asyncio

    from aiokafka import AIOKafkaConsumer

    async def run() -> tuple[int, float]:
        c = AIOKafkaConsumer(topic, bootstrap_servers=bootstrap, auto_offset_reset="earliest", enable_auto_commit=False,
                             group_id=None, fetch_max_bytes=50 * 1024 * 1024, max_partition_fetch_bytes=8 * 1024 * 1024)
        await c.start()
        lines, t0, idle = 0, None, 0
        try:
            while idle < 3:
                got = await c.getmany(timeout_ms=1000, max_records=1000)
                if not got:
                    idle += 1
                    continue
                idle = 0
                t0 = t0 or time.perf_counter()
                for msgs in got.values():
                    for m in msgs:
                        lines += len(json.loads(m.value)["lines"])
                t1 = time.perf_counter()
        finally:
            await c.stop()
        return lines, t1 - t0

    return asyncio.run(run())


def batch_engine(log: Path, site: str) -> tuple[float, int]:
    """(seconds, unique URLs): read + phases 1-3 of ``dustbuster mine`` on ``log``, in this process."""
    from dustbuster.core.mining.mine import mine
    from dustbuster.core.params import DustParams
    from dustbuster.logs.reader import read_urllist

    t0 = time.perf_counter()
    ul, _ = read_urllist([log], site=site)
    mine(ul, DustParams())
    return time.perf_counter() - t0, len(ul)


def new_and_known(bootstrap: str, tmp: Path, log: Path, site: str, lines: int, window: float,
                  extra_env: dict | None = None) -> dict:
    """Steps 1-4 on fresh topics (see the module doc)."""
    out: dict = {}
    env = stream_env(bootstrap, window=window, partitions=1) | (extra_env or {})
    out["feed_s"] = feed(env, log, site)
    w = Worker(env, tmp / "w", tmp / "w.log").start()
    try:
        rows = snapshots(env, site, lines)
    finally:
        w.stop()
    out["unique_urls"] = rows[-1][2]
    out["new_urls_per_s"] = rows[-1][2] / rows[-1][3]  # first message applied → last, windows included
    out["new_windows"] = len(rows)
    for _ in range(4):  # every URL known now
        feed(env, log, site)
    n, secs = bare_consumer(bootstrap, env["DUST_TOPIC_PREFIX"] + "-raw")
    out["floor_bare_consumer_lines_per_s"] = n / secs
    w = Worker({**env, "DUST_WINDOW_S": "3600"}, tmp / "w", tmp / "w2.log").start()
    changelog = env["DUST_TOPIC_PREFIX"] + "-urls-changelog"
    last = messages_per_pass = -(-lines // BATCH_LINES)
    try:
        deadline = time.monotonic() + 600
        while time.monotonic() < deadline and last < 5 * messages_per_pass - 1:
            time.sleep(1)
            points = applied_timeline(bootstrap, changelog)
            last = points[-1][1] if points else -1
    finally:
        w.stop()
    out["known_lines_per_s"] = timeline_rate(points, messages_per_pass - 1, BATCH_LINES)
    size = sum(f.stat().st_size for f in (tmp / "w" / "state").rglob("*") if f.is_file())
    out["state_mb_per_10k_urls"] = size / 1e6 / out["unique_urls"] * 10000
    secs, urls = batch_engine(log, site)
    out["floor_batch_engine_lines_per_s"], out["floor_batch_engine_urls_per_s"] = lines / secs, urls / secs
    return out


def freshness(bootstrap: str, tmp: Path, log2: Path, site: str, lines: int, window: float,
              extra_env: dict | None = None) -> float:
    """Step 5: the worker is running and idle; a fresh log fed; its last line to the candidates."""
    env2 = stream_env(bootstrap, window=window, partitions=1) | (extra_env or {})
    w2 = Worker(env2, tmp / "w2", tmp / "w2.log").start()
    try:
        time.sleep(8)
        feed(env2, log2, site)
        t_last = time.time()
        rows3 = snapshots(env2, site, lines)
        return rows3[-1][0] - t_last
    finally:
        w2.stop()


def _processes(text: str) -> str:
    """A --parse-processes value, checked as the worker reads DUST_PARSE_PROCESSES."""
    try:
        resolved_processes(text)
    except ConfigError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None
    return text


def resolved_processes(text: str) -> int:
    """The parser processes a worker on this machine runs for DUST_PARSE_PROCESSES=``text``."""
    return Settings.from_env({"DUST_PARSE_PROCESSES": text}).parse_processes


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--lines", type=int, default=50000)
    ap.add_argument("--window", type=float, default=5.0)
    ap.add_argument("--repeat", type=int, default=3, help="runs, each on fresh topics; medians are reported")
    ap.add_argument("--small", action="store_true", help="a few hundred lines, one run: CI's check that it runs")
    ap.add_argument("--out", type=Path, default=ROOT / "bench" / "out" / "bench_stream.json", help="the JSON results")
    ap.add_argument("--parse-processes", type=_processes, default="auto",
                    help="the worker's parser processes (DUST_PARSE_PROCESSES): a number, or auto (the "
                         "worker's default: 1 on two CPUs or more); 0: parse inline")
    a = ap.parse_args()
    if a.small:
        a.lines, a.window, a.repeat = 1000, 1.0, 1
    extra = {"DUST_PARSE_PROCESSES": str(a.parse_processes)}
    from dustbuster.sim.forum import generate

    site = "www.forum.co.il"
    runs = []
    with kafka_bootstrap() as bootstrap:
        for k in range(a.repeat):
            tmp = Path(tempfile.mkdtemp(prefix="dust-bench-"))
            log, log2 = tmp / "forum.log", tmp / "forum2.log"
            log.write_text("\n".join(generate(a.lines, seed=1)) + "\n")
            log2.write_text("\n".join(generate(a.lines, seed=2)) + "\n")
            row = new_and_known(bootstrap, tmp, log, site, a.lines, a.window, extra)
            row["freshness_s"] = freshness(bootstrap, tmp, log2, site, a.lines, a.window, extra)
            runs.append(row)
            sys.stderr.write(json.dumps(row) + "\n")
            shutil.rmtree(tmp, ignore_errors=True)
    out = {"lines": a.lines, "window_s": a.window, "parse_processes": a.parse_processes,
           "parse_processes_used": resolved_processes(a.parse_processes), "when": time.strftime("%Y-%m-%d %H:%M"), "runs": runs,
           "median": {k: statistics.median(r[k] for r in runs) for k in runs[0]}}
    print(json.dumps(out["median"], indent=1))
    a.out.parent.mkdir(parents=True, exist_ok=True)
    a.out.write_text(json.dumps(out, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
