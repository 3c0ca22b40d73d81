"""Streaming benchmarks through a real broker, one worker process.

    .venv/bin/python bench/bench_stream.py [--lines 50000] [--window 1]

Uses DUST_KAFKA_BOOTSTRAP if set, else starts the project's local KRaft broker.  Steps, each on
fresh topics:

1. new URLs: the synthetic forum log (dustbuster.sim.forum) is produced, then a worker started; the
   rate is unique URLs / wall time from the first message applied to the last (windows
   included), and also between the first and last candidate sets (the later, slower part);
2. known URLs: the same log produced four more times into the same topics: every URL is known;
3. freshness: a worker already running, a fresh log fed; time from the feeder's last
   acknowledged line to the candidate set that has seen every line;
4. state size on disk per 10,000 unique URLs (RocksDB dir after step 2, compacted).
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from dustbuster.devkafka import Worker, kafka_bootstrap, read_topic, stream_env  # noqa: E402


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


def rate(rows: list[tuple[float, int, int]], lo: int, hi: int, col: int) -> float:
    """Units per second between the first snapshot past ``lo`` lines and the last one at ``hi``."""
    mid = [r for r in rows if lo < r[1] <= hi]
    if len(mid) < 2:
        return float("nan")
    a, b = mid[0], mid[-1]
    return (b[col] - a[col]) / (b[0] - a[0])


def feed(env: dict, path: Path, site: str) -> float:
    t0 = time.perf_counter()
    subprocess.run([sys.executable, "-m", "dustbuster", "feed", str(path), "--site", site, "-q", "--batch-lines", "500"],
                   cwd=ROOT, env=env, check=True)
    return time.perf_counter() - t0


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--lines", type=int, default=50000)
    ap.add_argument("--window", type=float, default=1.0)
    a = ap.parse_args()
    from dustbuster.sim.forum import generate

    tmp = Path(tempfile.mkdtemp(prefix="dust-bench-"))
    log = tmp / "forum.log"
    log.write_text("\n".join(generate(a.lines, seed=1)) + "\n")
    site = "www.forum.co.il"
    out: dict = {"lines": a.lines, "window_s": a.window}
    with kafka_bootstrap() as bootstrap:
        env = stream_env(bootstrap, window=a.window, partitions=1)
        out["feed_s"] = feed(env, log, site)
        w = Worker(env, tmp / "w", tmp / "w.log").start()
        try:
            rows = snapshots(env, site, a.lines)
            # first message applied → last message applied, windows included
            out["new_urls_per_s"] = rows[-1][2] / rows[-1][3]
            out["new_urls_per_s_late"] = rate(rows, 0, a.lines, 2)
            out["new_pass_lines_per_s"] = rate(rows, 0, a.lines, 1)
            out["unique_urls"] = rows[-1][2]
            for _ in range(4):  # every URL known now; four passes, so that several windows see it
                feed(env, log, site)
            rows2 = snapshots(env, site, 5 * a.lines)
            out["known_lines_per_s"] = rate(rows2, a.lines, 5 * a.lines, 1)
        finally:
            w.stop()
        size = sum(f.stat().st_size for f in (tmp / "w" / "state").rglob("*") if f.is_file())
        out["state_bytes"] = size
        out["state_mb_per_10k_urls"] = size / 1e6 / out["unique_urls"] * 10000
        # freshness: the worker is running and idle; feed a fresh log and time the last line
        env2 = stream_env(bootstrap, window=a.window, partitions=1)
        log2 = tmp / "forum2.log"
        log2.write_text("\n".join(generate(a.lines, seed=2)) + "\n")
        w2 = Worker(env2, tmp / "w2", tmp / "w2.log").start()
        try:
            time.sleep(8)
            feed(env2, log2, site)
            t_last = time.time()
            rows3 = snapshots(env2, site, a.lines)
            out["freshness_s"] = rows3[-1][0] - t_last
        finally:
            w2.stop()
    shutil.rmtree(tmp, ignore_errors=True)
    print(json.dumps(out, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
