"""Freshness of a site at the per-site cap under a steady stream (issue 25 item 3's second target:
freshness ≤ 10 s + window for a site at the cap).

    .venv/bin/python bench/bench_capfresh.py [--cap 100000] [--rate 2000] [--seconds 60] [--window 10]
    .venv/bin/python bench/bench_capfresh.py --small     # what CI runs: a small cap, a short stream

Through a real broker (DUST_KAFKA_BOOTSTRAP, else the project's local KRaft broker), one worker with
its defaults (parser processes included), one partition, ``DUST_MAX_URLS_PER_SITE=--cap``:

1. prefill: the synthetic forum log (dustbuster.sim.forum, seed 1), enough lines to pass the cap,
   produced by ``dustbuster feed``; the worker started; wait until a candidate set has seen them all
   (the site now holds ``--cap`` URLs, the rest counted over the cap);
2. steady stream: lines of another seed (known URLs and new ones, which are over the cap), sent by
   this process in messages of 500 lines at ``--rate`` lines per second for ``--seconds``;
3. each message's freshness: from its send to the first candidate set of the site whose line count
   covers it.  Reported: median, 90th percentile and largest freshness over the stream's messages,
   the windows' seconds during the stream (the sets' own phase timings), and the target
   (``--window`` + the median window).

Prints JSON; writes bench/out/bench_capfresh.json.  Only loopback is used; the stream stops by itself.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from dustdev.benchout import emit  # noqa: E402

from bench.bench_stream import feed, snapshots  # noqa: E402
from dustdev.devkafka import Worker, kafka_bootstrap, read_topic, stream_env  # noqa: E402

SITE = "www.forum.co.il"
BATCH = 500
#: forum lines per unique URL, about (bench_stream: 50,000 lines → 19,825 URLs; more lines, more repeats)
LINES_PER_URL = 3.4


def stream(bootstrap: str, topic: str, lines: list[str], rate: float, seconds: float) -> list[tuple[float, int]]:
    """Send ``lines`` in messages of :data:`BATCH` at ``rate`` lines/s for at most ``seconds``;
    returns (send time, lines sent so far including this message) per message (wall clock)."""
    from aiokafka import AIOKafkaProducer

    async def run() -> list[tuple[float, int]]:
        p = AIOKafkaProducer(bootstrap_servers=bootstrap, linger_ms=0)
        await p.start()
        sent, out, t0 = 0, [], time.monotonic()
        try:
            for i in range(0, len(lines), BATCH):
                due = t0 + sent / rate
                if due - t0 > seconds:
                    break
                await asyncio.sleep(max(0.0, due - time.monotonic()))
                batch = lines[i:i + BATCH]
                sent_at = time.time()  # before the send: its round trip is part of the freshness
                await p.send_and_wait(topic, json.dumps({"site": SITE, "lines": batch}).encode(), key=SITE.encode())
                sent += len(batch)
                out.append((sent_at, sent))
        finally:
            await p.stop()
        return out

    return asyncio.run(run())


def sets_of(env: dict) -> list[dict]:
    """(broker time, lines, window seconds) of every candidate set of the site, in order."""
    out = []
    for m in read_topic(env["DUST_KAFKA_BOOTSTRAP"], env["DUST_TOPIC_PREFIX"] + "-candidates"):
        d = json.loads(m.value)
        if d["site"] == SITE:
            st = d["stats"]
            secs = sum(v for k, v in st.items() if k.endswith("_seconds") and isinstance(v, (int, float))
                       and k in WINDOW_PHASES)
            out.append({"t": m.timestamp / 1000.0, "lines": st["lines"], "urls": st.get("urls"),
                        "window_s": secs, "reused": st.get("reused")})
    return sorted(out, key=lambda s: s["t"])


#: a window's phases in a set's stats (state/partitions.py window, core/mining/mine.py)
WINDOW_PHASES = ("urllist_seconds", "detect_seconds", "eliminate_seconds", "param_seconds", "general_seconds",
                 "unsafe_seconds")


def freshness(messages: list[tuple[float, int]], sets: list[dict], base: int) -> list[float]:
    """Per message: seconds from its send to the first set whose lines cover it (``base``: the lines
    before the stream)."""
    out = []
    for sent_at, n in messages:
        cover = next((s["t"] for s in sets if s["lines"] >= base + n and s["t"] >= sent_at), None)
        if cover is not None:
            out.append(cover - sent_at)
    return out


def pct(values: list[float], q: float) -> float | None:
    return round(sorted(values)[min(len(values) - 1, int(q * len(values)))], 2) if values else None


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--cap", type=int, default=100_000, help="DUST_MAX_URLS_PER_SITE (default 100000)")
    ap.add_argument("--rate", type=float, default=2000.0, help="lines per second of the steady stream (default 2000)")
    ap.add_argument("--seconds", type=float, default=60.0, help="length of the steady stream (default 60)")
    ap.add_argument("--window", type=float, default=10.0, help="DUST_WINDOW_S (default 10)")
    ap.add_argument("--small", action="store_true", help="cap 2,000, 10 s at 500 lines/s, window 2 s: CI's check")
    ap.add_argument("--out", type=Path, default=ROOT / "bench" / "out" / "bench_capfresh.json", help="the JSON results")
    a = ap.parse_args()
    if a.small:
        a.cap, a.rate, a.seconds, a.window = 2000, 500.0, 10.0, 2.0
    from dustbuster.sim.forum import generate

    prefill = int(a.cap * LINES_PER_URL * 1.2)
    steady = list(generate(int(a.rate * a.seconds) + BATCH, seed=2))
    with kafka_bootstrap() as bootstrap, tempfile.TemporaryDirectory(prefix="dust-capfresh-") as tmp:
        env = stream_env(bootstrap, window=a.window, partitions=1) | {"DUST_MAX_URLS_PER_SITE": str(a.cap)}
        log = Path(tmp) / "prefill.log"
        log.write_text("\n".join(generate(prefill, seed=1)) + "\n")
        feed(env, log, SITE)
        w = Worker(env, Path(tmp) / "w", Path(tmp) / "w.log").start()
        try:
            t0 = time.perf_counter()
            rows = snapshots(env, SITE, prefill, timeout=900)
            filled_s = time.perf_counter() - t0
            messages = stream(bootstrap, env["DUST_TOPIC_PREFIX"] + "-raw", steady, a.rate, a.seconds)
            if not messages:
                raise SystemExit("no message of the stream was sent")
            snapshots(env, SITE, prefill + messages[-1][1], timeout=900)
        finally:
            w.stop()
        sets = sets_of(env)
    fresh = freshness(messages, sets, prefill)
    during = [s for s in sets if s["t"] >= messages[0][0] and not s["reused"]]
    windows = [s["window_s"] for s in during]
    out = {"when": time.strftime("%Y-%m-%d %H:%M"), "cap": a.cap, "urls": rows[-1][2], "prefill_lines": prefill,
           "prefill_to_candidates_s": round(filled_s, 1), "rate_lines_per_s": a.rate, "stream_s": a.seconds,
           "messages": len(messages), "window_interval_s": a.window, "windows_during_stream": len(windows),
           "window_s_median": round(statistics.median(windows), 2) if windows else None,
           "window_s_max": round(max(windows), 2) if windows else None,
           "freshness_s_median": round(statistics.median(fresh), 2) if fresh else None,
           "freshness_s_p90": pct(fresh, 0.9), "freshness_s_max": round(max(fresh), 2) if fresh else None,
           "messages_not_covered": len(messages) - len(fresh),
           "target_s": round(a.window + statistics.median(windows), 2) if windows else None}
    emit(out, a.out)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
