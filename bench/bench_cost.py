"""What one URL costs the streaming state ("bounded cost", docs/cost.md): seconds, resident memory and
bytes on disk, in-process (the worker's own code: dustbuster.state.partitions.PartitionState over RocksDB,
one message = ``--batch`` records, staged and committed as the ingest agent does; no broker).

    .venv/bin/python bench/bench_cost.py                       # all scenarios, JSON on stdout
    .venv/bin/python bench/bench_cost.py --only long --long 2000

Scenarios, each in a fresh subprocess and a fresh data directory, one site:

* ``typical``: the distinct URLs of the synthetic forum log (dustbuster.sim.forum), in log order;
* ``long``: distinct URLs of 253 tokens (just under the decoders' 256-token cap): a path of
  random 4-letter words separated by ``/``;
* ``junk``: distinct random URLs (random path segments and query parameters, ~22 tokens);
* ``capped``: ``junk`` again with ``DUST_MAX_URLS_PER_SITE``-style cap of ``--cap`` URLs per site
  (what the URLs beyond the cap still cost);
* ``hostile``: ``--hostile`` distinct junk URLs (a million by default) against the default cap of
  100,000 URLs per site: the state and the window stay bounded by the cap;
* ``loop``: one message of ``--long`` URLs of 253 tokens staged and committed twice, first on the
  event loop (as the ingest agent once did), then through ``Stores.run`` (the state
  thread, as it does now), while a 10 ms ticker on the loop records its largest delay;
* ``rebuild``: a partition rebuilt from a changelog image of ``--typical`` forum URLs through
  ``Stores.run`` (what a worker does when a partition moves to it): seconds, URLs/s, progress
  callbacks, largest event-loop delay.

For each: URLs, seconds (and per 1,000 URLs), envelopes per URL, RSS growth (VmRSS after minus
before), the window (``PartitionState.window``: Figure 1 on the site's URLs, phases 2 and 3) in
seconds, the peak RSS (VmHWM, the window included), bytes on disk after the last commit and after a
full compaction, per URL.
docs/cost.md has the figures and the command lines that produced them.
"""

from __future__ import annotations

import argparse
import json
import random
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from dustdev.benchout import emit  # noqa: E402

SITE = "www.example.com"


def _proc_kb(field: str) -> int:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1])
    return 0


def _du(path: Path) -> int:
    return sum(f.stat().st_size for f in path.rglob("*") if f.is_file())


def long_urls(n: int, tokens: int = 253, seed: int = 7) -> list[str]:
    from dustbuster.core.urls.tokens import token_count

    rnd = random.Random(seed)
    out = []
    letters = "abcdefghijklmnopqrstuvwxyz"
    base = f"http://{SITE}"
    for _ in range(n):
        words = []
        url = base
        while token_count(url) + 2 <= tokens:  # "/" and a word: two tokens
            words.append("".join(rnd.choice(letters) for _ in range(4)))
            url = base + "/" + "/".join(words)
        if token_count(url) > tokens:
            url = url[:url.rfind("/")]
        out.append(url)
    return out


def junk_urls(n: int, seed: int = 11) -> list[str]:
    rnd = random.Random(seed)
    alnum = "abcdefghijklmnopqrstuvwxyz0123456789"

    def w(k: int) -> str:
        return "".join(rnd.choice(alnum) for _ in range(k))

    return [f"http://{SITE}/{w(8)}/{w(8)}?{w(4)}={w(8)}&{w(4)}={w(8)}" for _ in range(n)]


def typical_urls(n: int) -> list[tuple]:
    from dustbuster.sim.forum import generate
    from dustbuster.logs.reader import parse_lines

    lines = list(generate(max(1000, n * 3), seed=1))
    res = parse_lines(lines, SITE.replace("www.example.com", "www.forum.co.il"))
    seen: dict[str, tuple] = {}
    for rec in res.records:
        if rec[0] not in seen:
            seen[rec[0]] = rec
    return list(seen.values())[:n]


def run_one(kind: str, n: int, batch: int, cap: int | None) -> dict:
    """One scenario in this process."""
    from dustbuster.core.params import DustParams
    from dustbuster.core.urls.tokens import token_count
    from dustbuster.core.mining.detect import _positions
    from dustbuster.state.partitions import PartitionState

    if kind == "typical":
        recs = typical_urls(n)
        site = "www.forum.co.il"
    else:
        urls = long_urls(n) if kind == "long" else junk_urls(n)
        recs = [(u, 200, 1000 + k % 7, None, None) for k, u in enumerate(urls)]
        site = SITE
    params = DustParams()
    envs = [len(_positions(token_count(r[0]) + 2, params.S)[0]) for r in recs[:200]]
    envs_capped = [len(_positions(token_count(r[0]) + 2, params.S, params.max_envelopes)[0]) for r in recs[:200]]
    tmp = Path(tempfile.mkdtemp(prefix="dust-cost-"))
    kw = {} if cap is None else {"max_urls_per_site": cap}
    st = PartitionState(tmp, 0, params, **kw)
    rss0 = _proc_kb("VmRSS")
    t0 = time.perf_counter()
    offset = 0
    for at in range(0, len(recs), batch):
        chunk = recs[at:at + batch]
        staged = st.stage("raw", offset, site, chunk, {"lines": len(chunk), "records": len(chunk)})
        st.commit(staged)
        offset += 1
    secs = time.perf_counter() - t0
    rss1 = _proc_kb("VmRSS")
    t0 = time.perf_counter()
    result = st.window(site)  # what the window timer runs: Figure 1 on the site's URLs, phases 2-3
    window_s = time.perf_counter() - t0
    disk = _du(tmp)
    st.kv.compact()
    disk_compact = _du(tmp)
    tracked = len(st.site(site).urllist())
    counters = st.counters(site)
    st.close()
    shutil.rmtree(tmp, ignore_errors=True)
    return {
        "scenario": kind, "urls_in": len(recs), "urls_tracked": tracked, "batch": batch, "cap": cap,
        "tokens_per_url_mean": round(sum(token_count(r[0]) for r in recs) / max(1, len(recs)), 1),
        "envelopes_per_url_uncapped_mean": round(sum(envs) / max(1, len(envs)), 1),
        "envelopes_per_url_mean": round(sum(envs_capped) / max(1, len(envs_capped)), 1),
        "max_envelopes": params.max_envelopes,
        "seconds": round(secs, 2), "seconds_per_1000_urls": round(secs / max(1, len(recs)) * 1000, 3),
        "window_seconds": round(window_s, 2), "window_candidates": len(result.kept) + len(result.general),
        "rss_growth_mb": round((rss1 - rss0) / 1024, 1), "rss_peak_mb": round(_proc_kb("VmHWM") / 1024, 1),
        "disk_mb": round(disk / 1e6, 1), "disk_mb_compacted": round(disk_compact / 1e6, 1),
        "disk_bytes_per_url": round(disk / max(1, len(recs))),
        "disk_bytes_per_url_compacted": round(disk_compact / max(1, len(recs))),
        "counters": {k: v for k, v in counters.items() if not k.startswith("ingest_")},
    }


def run_loop(n: int) -> dict:
    """Largest event-loop delay while one message of n long URLs is applied, on the loop and off it."""
    import asyncio

    from dustbuster.core.params import DustParams
    from dustbuster.state.partitions import Stores

    recs = [(u, 200, 1000, None, None) for u in long_urls(n)]
    out = {"scenario": "loop", "urls_in_message": n}

    async def measure(off_loop: bool) -> tuple[float, float]:
        tmp = Path(tempfile.mkdtemp(prefix="dust-loop-"))
        stores = Stores(tmp, DustParams())
        worst = [0.0]
        done = asyncio.Event()

        async def ticker() -> None:
            loop = asyncio.get_running_loop()
            while not done.is_set():
                t = loop.time()
                await asyncio.sleep(0.01)
                worst[0] = max(worst[0], loop.time() - t - 0.01)

        tick = asyncio.ensure_future(ticker())
        await asyncio.sleep(0.05)
        t0 = time.perf_counter()
        state = stores.get(0)
        if off_loop:
            staged = await stores.run(state.stage, "raw", 0, SITE, recs, {"lines": n})
            await stores.run(state.commit, staged)
        else:
            state.commit(state.stage("raw", 0, SITE, recs, {"lines": n}))
        secs = time.perf_counter() - t0
        done.set()
        await tick
        stores.close()
        shutil.rmtree(tmp, ignore_errors=True)
        return secs, worst[0]

    for name, off in (("on_loop", False), ("state_thread", True)):
        secs, worst = asyncio.run(measure(off))
        out[name] = {"seconds": round(secs, 2), "max_loop_delay_s": round(worst, 3)}
    return out


def run_rebuild(n: int) -> dict:
    import asyncio

    from dustbuster.core.urls.urlrecord import info_to_json
    from dustbuster.core.params import DustParams
    from dustbuster.core.urls.urllist import URLInfo
    from dustbuster.state.partitions import Stores

    image: dict[str, dict] = {}
    for url, status, size, digest, sketch in typical_urls(n):
        info = URLInfo()
        info.observe(status, size, digest, sketch, 1)
        image[url] = info_to_json(info)
    calls: list[tuple[int, int]] = []

    async def go() -> tuple[float, float]:
        tmp = Path(tempfile.mkdtemp(prefix="dust-rebuild-"))
        stores = Stores(tmp, DustParams())
        worst = [0.0]
        done = asyncio.Event()

        async def ticker() -> None:
            loop = asyncio.get_running_loop()
            while not done.is_set():
                t = loop.time()
                await asyncio.sleep(0.01)
                worst[0] = max(worst[0], loop.time() - t - 0.01)

        tick = asyncio.ensure_future(ticker())
        state = stores.get(0)
        t0 = time.perf_counter()
        await stores.run(state.rebuild, "raw", 0, {"www.forum.co.il": image}, {},
                         lambda a, b: calls.append((a, b)))
        secs = time.perf_counter() - t0
        done.set()
        await tick
        stores.close()
        shutil.rmtree(tmp, ignore_errors=True)
        return secs, worst[0]

    secs, worst = asyncio.run(go())
    return {"scenario": "rebuild", "urls": len(image), "seconds": round(secs, 2),
            "urls_per_s": round(len(image) / secs), "progress_calls": len(calls), "max_loop_delay_s": round(worst, 3)}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--only", choices=["typical", "long", "junk", "capped", "hostile", "loop", "rebuild"], action="append")
    ap.add_argument("--typical", type=int, default=10000, help="typical URLs (forum log)")
    ap.add_argument("--long", type=int, default=2000, help="URLs of 253 tokens")
    ap.add_argument("--junk", type=int, default=20000, help="distinct junk URLs")
    ap.add_argument("--cap", type=int, default=5000, help="per-site cap for the 'capped' scenario")
    ap.add_argument("--hostile", type=int, default=1_000_000, help="distinct junk URLs against the default cap")
    ap.add_argument("--batch", type=int, default=100, help="records per message")
    ap.add_argument("--small", action="store_true", help="a few hundred URLs a scenario: CI's check that it runs")
    ap.add_argument("--out", type=Path, default=Path(__file__).resolve().parent / "out" / "bench_cost.json",
                    help="the JSON results (default bench/out/bench_cost.json; also printed)")
    ap.add_argument("--child", help=argparse.SUPPRESS)
    a = ap.parse_args()
    if a.small:
        a.typical, a.long, a.junk, a.cap, a.hostile = 500, 60, 500, 200, 1000
    if a.child:
        kind, n, cap = a.child.split(":")
        if kind == "loop":
            print(json.dumps(run_loop(int(n))))
        elif kind == "rebuild":
            print(json.dumps(run_rebuild(int(n))))
        else:
            print(json.dumps(run_one(kind, int(n), a.batch, int(cap) if cap != "-" else None)))
        return 0
    plan = {"typical": (a.typical, "-"), "long": (a.long, "-"), "junk": (a.junk, "-"), "capped": (a.junk, str(a.cap)),
            "hostile": (a.hostile, "100000"), "loop": (a.long, "-"), "rebuild": (a.typical, "-")}
    out = []
    for kind in a.only or list(plan):
        n, cap = plan[kind]
        real = "junk" if kind in ("capped", "hostile") else kind
        got = subprocess.run([sys.executable, __file__, "--child", f"{real}:{n}:{cap}", "--batch", str(a.batch)],
                             check=True, capture_output=True, text=True)
        row = json.loads(got.stdout.strip().splitlines()[-1])
        row["scenario"] = kind
        out.append(row)
        sys.stderr.write(json.dumps(row) + "\n")
    emit(out, a.out)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
