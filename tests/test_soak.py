"""Soak (slow, not in `make test`): one worker on the real broker for DUST_SOAK_S seconds (default
600) under a mixed stream — good log lines (mostly known URLs, some new), junk lines inside good
messages, junk messages, a site flooding distinct URLs past the per-site cap, poison and harmful
rule sets, frontier messages and API load (good and hostile bodies).  Every load loop is bounded in
time and count, loopback only.  Asserts: no crash, /healthz healthy at the end, every good line
counted (records = good lines sent, rejected = junk lines sent), the flood site stays at its cap,
API answers within 5 s each.  A table of RSS, disk and API latency per minute is written to
bench/out/soak.md (run: `.venv/bin/python -m pytest -m slow tests/test_soak.py -s`; DUST_SOAK_S=60 for a short one)."""

from __future__ import annotations

import asyncio
import json
import os
import random
import time
from pathlib import Path

import pytest

from dustbuster.broker import free_port
from tests.conftest import ROOT
from tests.streamtools import Worker, latest_candidates, stream_env
from tests.test_admission import GOOD as GOOD_SET
from tests.test_admission import HARMFUL
from tests.test_canonizer_stream import http, wait_for
from tests.test_poison_records import POISON_RULES

SITE, FLOOD = "soak.test", "flood.test"
LINE = '10.0.0.{ip} - - [26/Nov/2026:10:00:00 +0000] "GET {path} HTTP/1.1" 200 {size} "-" "soak"'
JUNK = ["", "garbage", "\x00\x01\x02", '{"url":"/x","sketch":[1e400]}', "[" * 5000, "GET / HTTP/1.1",
        '1.2.3.4 - - [bad date] "GET /a HTTP/1.1" 200 x', "é" * 300, "\ud800 surrogate"]
CAP = 20_000  #: DUST_MAX_URLS_PER_SITE: the flood site passes it, the soak site (≤ 18,000 URLs) never does
KNOWN_MAX = 6_000  #: story ids; three URL forms each: at most 18,000 distinct URLs


def rss_mb(pid: int) -> float:
    for ln in Path(f"/proc/{pid}/status").read_text().splitlines():
        if ln.startswith("VmRSS:"):
            return int(ln.split()[1]) / 1024
    return 0.0


def disk_mb(path: Path) -> float:
    return sum(f.stat().st_size for f in path.rglob("*") if f.is_file()) / 1e6


def good_path(rnd: random.Random, known: int) -> tuple[str, int, bool]:
    """A path of the soak site: 90 % a known one, 10 % new (up to KNOWN_MAX); aliases share sizes."""
    new = (rnd.random() < 0.1 or known == 0) and known < KNOWN_MAX
    n = known if new else rnd.randrange(known)
    form = rnd.randrange(3)
    path = (f"/story?id={n}", f"/story_{n}", f"/story?id={n}&sid={n % 7}")[form]
    return path, 1000 + n % 997, new


class Load:
    def __init__(self, env: dict, api_port: int, seconds: float) -> None:
        self.env, self.port, self.seconds = env, api_port, seconds
        self.rnd = random.Random(16)
        self.good = self.junk = self.flood = self.known = 0
        self.latencies: list[tuple[float, float]] = []  # (t, seconds)
        self.api_errors: dict[int, int] = {}

    async def run(self, samples: list, worker: Worker, data_dir: Path) -> None:
        from aiokafka import AIOKafkaProducer

        p = AIOKafkaProducer(bootstrap_servers=self.env["DUST_KAFKA_BOOTSTRAP"], acks="all",
                             max_request_size=2_000_000)
        await p.start()
        t0 = time.monotonic()
        try:
            await asyncio.gather(self.lines(p, t0), self.rules(p, t0), self.frontier(p, t0), self.api(t0),
                                 self.sample(samples, worker, data_dir, t0))
        finally:
            await p.stop()

    def topic(self, suffix: str) -> str:
        return self.env["DUST_TOPIC_PREFIX"] + suffix

    async def lines(self, p, t0: float) -> None:
        k = 0
        while time.monotonic() - t0 < self.seconds and k < 100_000:
            k += 1
            batch = []
            for _ in range(400):
                path, size, new = good_path(self.rnd, self.known)
                self.known += new
                batch.append(LINE.format(ip=k % 250, path=path, size=size))
            for _ in range(self.rnd.randrange(0, 6)):
                batch.insert(self.rnd.randrange(len(batch)), self.rnd.choice(JUNK))
                self.junk += 1
            self.good += len(batch) - sum(1 for x in batch if x in JUNK)
            await p.send_and_wait(self.topic("-raw"), json.dumps({"site": SITE, "lines": batch, "format": "combined"})
                                  .encode(), key=SITE.encode())
            if k % 5 == 0:  # a flood of distinct junk URLs for another site, past its cap
                flood = [LINE.format(ip=1, path=f"/{self.rnd.getrandbits(64):x}/{k}/{i}", size=7) for i in range(300)]
                self.flood += len(flood)
                await p.send_and_wait(self.topic("-raw"), json.dumps({"site": FLOOD, "lines": flood}).encode(),
                                      key=FLOOD.encode())
            if k % 20 == 0:  # junk messages: not JSON, not UTF-8, wrong types
                for junk in (b"\xff\xfe", b"{not json", json.dumps({"site": SITE, "lines": 5}).encode()):
                    await p.send_and_wait(self.topic("-raw"), junk, key=SITE.encode())
            await asyncio.sleep(0.25)

    async def rules(self, p, t0: float) -> None:
        version, k = 3, 0
        doc = dict(GOOD_SET, site=SITE)
        await p.send_and_wait(self.topic("-rules"), json.dumps(doc).encode(), key=SITE.encode())
        while time.monotonic() - t0 < self.seconds and k < 10_000:
            k += 1
            bad = POISON_RULES[k % len(POISON_RULES)] if k % 2 else json.dumps(HARMFUL[k % len(HARMFUL)][1]).encode()
            await p.send_and_wait(self.topic("-rules"), bad, key=SITE.encode())
            if k % 10 == 0:
                version += 1
                await p.send_and_wait(self.topic("-rules"), json.dumps(doc | {"version": version}).encode(),
                                      key=SITE.encode())
            await asyncio.sleep(3)

    async def frontier(self, p, t0: float) -> None:
        k = 0
        while time.monotonic() - t0 < self.seconds and k < 100_000:
            k += 1
            urls = [f"http://www.{SITE}/story?id={self.rnd.randrange(1000)}&sid=1" for _ in range(50)]
            value = json.dumps({"urls": urls}).encode() if k % 10 else b'{"urls": [1, 2]}'
            await p.send_and_wait(self.topic("-frontier"), value, key=SITE.encode())
            await asyncio.sleep(0.5)

    async def api(self, t0: float) -> None:
        import aiohttp

        url = f"http://127.0.0.1:{self.port}/canonicalize"
        bodies = [json.dumps({"urls": [f"http://www.{SITE}/story?id={i}&sid=2" for i in range(100)]}).encode(),
                  b"[" * 10000, b'{"urls": [NaN]}', b'{"urls": ["http://a/\\r\\n"]}']
        k = 0
        async with aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=30)) as s:
            while time.monotonic() - t0 < self.seconds and k < 1_000_000:
                k += 1
                body = bodies[0] if k % 10 else bodies[k // 10 % 3 + 1]
                t = time.monotonic()
                try:
                    async with s.post(url, data=body) as r:
                        await r.read()
                        self.api_errors[r.status] = self.api_errors.get(r.status, 0) + (r.status != 200)
                except aiohttp.ClientError:
                    self.api_errors[0] = self.api_errors.get(0, 0) + 1
                self.latencies.append((t - t0, time.monotonic() - t))
                await asyncio.sleep(0.05)

    async def sample(self, samples: list, worker: Worker, data_dir: Path, t0: float) -> None:
        while time.monotonic() - t0 < self.seconds:
            assert worker.alive(), worker.log.read_text()[-3000:]
            samples.append((time.monotonic() - t0, rss_mb(worker.proc.pid), disk_mb(data_dir)))
            await asyncio.sleep(10)


def table(samples: list, latencies: list, minutes: int) -> str:
    rows = ["| minute | worker RSS (MB) | data dir (MB) | API requests | p50 (ms) | p99 (ms) | max (ms) |",
            "|---:|---:|---:|---:|---:|---:|---:|"]
    for m in range(minutes):
        s = [x for x in samples if m * 60 <= x[0] < (m + 1) * 60] or samples[-1:]
        lat = sorted(d for t, d in latencies if m * 60 <= t < (m + 1) * 60) or [0.0]
        q = lambda f: lat[min(len(lat) - 1, int(f * len(lat)))] * 1000
        rows.append(f"| {m + 1} | {max(x[1] for x in s):.0f} | {max(x[2] for x in s):.0f} | {len(lat)} | "
                    f"{q(0.5):.1f} | {q(0.99):.1f} | {lat[-1] * 1000:.1f} |")
    return "\n".join(rows) + "\n"


@pytest.mark.slow
def test_worker_soak(kafka, tmp_path):
    seconds = float(os.environ.get("DUST_SOAK_S", "600"))
    env = stream_env(kafka, window=10.0)
    port = free_port()
    env.update({"DUST_API_PORT": str(port), "DUST_VALIDATE": "false", "DUST_MAX_URLS_PER_SITE": str(CAP)})
    data = tmp_path / "w"
    w = Worker(env, data, tmp_path / "w.log").start()
    samples: list = []
    try:
        wait_for(lambda: http(port, "/healthz", token="")[0] == 200, timeout=120, what="worker healthy", worker=w)
        load = Load(env, port, seconds)
        asyncio.run(load.run(samples, w, data))
        want = {SITE: load.good + load.junk}
        final = latest_candidates(env, want, timeout=600, workers=[w])
        st = final[SITE]["stats"]
        flood = latest_candidates(env, {FLOOD: load.flood}, timeout=600, workers=[w])[FLOOD]["stats"]
        health = http(port, "/healthz", token="")
        assert w.alive()
    finally:
        w.stop()
    log = w.log.read_text()
    assert "Crashed" not in log and "Traceback" not in log, log[-3000:]
    assert st["lines"] == load.good + load.junk and st["records"] == load.good, (st, load.good, load.junk)
    assert st["rejected"] + st["skipped"] == load.junk  # an empty line is skipped, the others rejected
    assert flood["urls"] == CAP and flood["over_cap"] > 0 and st.get("over_cap", 0) == 0
    assert health[0] == 200, health
    assert max(d for _, d in load.latencies) < 5.0
    report = (f"soak: {seconds:.0f} s, {load.good:,} good lines ({load.known:,} distinct URLs), {load.junk:,} junk "
              f"lines, {load.flood:,} flood lines ({flood['over_cap']:,} over the cap of {CAP:,}), "
              f"{len(load.latencies):,} API requests (non-200 by status: {load.api_errors})\n\n"
              + table(samples, load.latencies, max(1, int(seconds // 60))))
    out = ROOT / "bench" / "out"
    out.mkdir(parents=True, exist_ok=True)
    (out / "soak.md").write_text(report)
    print(report)
