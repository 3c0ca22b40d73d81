"""A hostile URL list against the validator: nothing is fetched outside policy, nothing hangs, and
the refusals are counted."""

from __future__ import annotations

import asyncio

from dustbuster.core.validation.round import Round
from dustbuster.core import ParamRule
from dustbuster.core.model.pair import Pair
from dustbuster.core.validation.validate import RoundFetcher, validate
from dustbuster.sim.site import SimSite, start
from dustbuster.fetch.client import FetchPolicy, Fetcher


def test_hostile_log_fetches_nothing_outside_policy():
    async def go():
        site = SimSite(slow_s=5.0)
        runner, port = await start(site)
        base = f"http://www.forum.test:{port}"
        policy = FetchPolicy(origins=frozenset({base}), allow_private=True, resolve={"www.forum.test": "127.0.0.1"},
                             max_bytes=300_000, timeout_s=1.0, retries=1, backoff_s=0.05, rate_per_s=1000)
        tests = (
            [f"http://evil.example/story_{i}" for i in range(20)]          # other hosts
            + [f"http://127.0.0.1:{port}/admin/story_{i}" for i in range(20)]  # loopback admin paths
            + [f"{base}/huge/story_{i}" for i in range(5)]                  # never-ending responses
            + [f"{base}/slow/story_{i}" for i in range(3)]                  # timeouts
            + [f"{base}/loop/story_{i}" for i in range(5)]                  # redirect loops
            + [f"{base}/story_{i}" for i in range(40)]
        )
        pairs = [
            Pair("/story_", "/admin/story_", 40, 40),  # rewrites into the admin area: same origin, but soft
            Pair("http://evil.example/", f"http://www.forum.test:{port}/", 20, 20),
            Pair(f"http://127.0.0.1:{port}/", f"http://www.forum.test:{port}/", 20, 20),
        ]
        async with Fetcher(policy) as f:
            res = await asyncio.wait_for(
                validate(Round.of(tests, RoundFetcher(f.fetch)), pairs, [ParamRule("x", "remove")]), timeout=120)
            counts = dict(f.counts)
        await runner.cleanup()
        return res, counts, site

    res, counts, site = asyncio.run(go())
    assert counts.get("refused_off_site", 0) > 0
    assert site.admin_hits == 0  # robots.txt keeps /admin/ out; 127.0.0.1 is not an origin
    assert all(not v.valid for v in res.verdicts if "evil" in v.rule.text or "127.0.0.1" in v.rule.text)
    assert set(counts) <= {"ok", "refused_off_site", "too_large", "timeout", "redirect_loop", "status_500",
                           "refused_robots", "refused_private_address"}


def test_huge_slow_and_looping_pages_fail_cleanly():
    async def go():
        site = SimSite(slow_s=5.0)
        runner, port = await start(site)
        base = f"http://www.forum.test:{port}"
        policy = FetchPolicy(origins=frozenset({base}), allow_private=True, resolve={"www.forum.test": "127.0.0.1"},
                             max_bytes=300_000, timeout_s=1.0, retries=0, rate_per_s=1000)
        async with Fetcher(policy) as f:
            out = await asyncio.wait_for(asyncio.gather(
                f.fetch(f"{base}/huge/a"), f.fetch(f"{base}/slow/a"), f.fetch(f"{base}/loop/a"),
                f.fetch(f"{base}/fail/a"), f.fetch(f"{base}/old/story_3"), f.fetch(f"{base}/admin/x")), 60)
            counts = dict(f.counts)
        await runner.cleanup()
        return [o.reason or "ok" for o in out], counts

    reasons, counts = asyncio.run(go())
    assert reasons[:4] == ["too_large", "timeout", "redirect_loop", "status_500"]
    assert reasons[4] == "ok"  # /old/story_3 → 301 → /story_3, same origin
    assert reasons[5] == "refused_robots"  # the simulator's robots.txt disallows /admin/
    assert counts["too_large"] == 1 and counts["timeout"] == 1
