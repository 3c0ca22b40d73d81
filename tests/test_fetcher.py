"""The validator's fetcher against a real HTTP server on loopback: policy refusals are counted."""

from __future__ import annotations

import asyncio
import time
from collections import Counter

from aiohttp import web

from tests.loopback import serve as serve_app

from dustbuster.fetch.client import FetchPolicy, Fetcher

PAGE = "<html><body><p>" + " ".join(f"word{i}" for i in range(300)) + "</p></body></html>"


def app(hits: Counter) -> web.Application:
    flaky = {"n": 0}

    async def page(req):
        hits[req.path] += 1
        return web.Response(text=PAGE, content_type="text/html")

    async def robots(req):
        hits[req.path] += 1
        return web.Response(text="User-agent: *\nDisallow: /private/\n")

    async def redirect_in(req):
        hits[req.path] += 1
        raise web.HTTPFound("/page")

    async def redirect_out(req):
        hits[req.path] += 1
        raise web.HTTPFound("http://evil.example/steal")

    async def loop(req):
        hits[req.path] += 1
        raise web.HTTPFound("/loop")

    async def huge(req):
        hits[req.path] += 1
        resp = web.StreamResponse()
        await resp.prepare(req)
        try:
            for _ in range(100000):  # never-ending for any sane cap
                await resp.write(b"x" * 65536)
        except (ConnectionResetError, RuntimeError):
            pass
        return resp

    async def slow(req):
        hits[req.path] += 1
        await asyncio.sleep(5)
        return web.Response(text=PAGE, content_type="text/html")

    async def flaky_page(req):
        hits[req.path] += 1
        flaky["n"] += 1
        if flaky["n"] == 1:
            return web.Response(status=503)
        return web.Response(text=PAGE, content_type="text/html")

    async def gone(req):
        hits[req.path] += 1
        return web.Response(status=404)

    async def long_page(req):
        words = " ".join(f"word{i}" for i in range(12_000))
        return web.Response(text=f"<html><head><title>A long page</title><link rel=canonical href=/page></head>"
                                 f"<body><p>{words}</p></body></html>", content_type="text/html")

    a = web.Application()
    a.router.add_get("/page", page)
    a.router.add_get("/long", long_page)
    a.router.add_get("/private/x", page)
    a.router.add_get("/robots.txt", robots)
    a.router.add_get("/in", redirect_in)
    a.router.add_get("/out", redirect_out)
    a.router.add_get("/loop", loop)
    a.router.add_get("/huge", huge)
    a.router.add_get("/slow", slow)
    a.router.add_get("/flaky", flaky_page)
    a.router.add_get("/gone", gone)
    return a


async def serve(hits):
    return await serve_app(app(hits))


def run(coro):
    return asyncio.run(coro)


def test_fetch_policy_end_to_end():
    async def go():
        hits = Counter()
        runner, port = await serve(hits)
        base = f"http://site.test:{port}"
        policy = FetchPolicy(origins=frozenset({base}), allow_private=True, resolve={"site.test": "127.0.0.1"},
                             max_bytes=200_000, timeout_s=1.0, retries=1, backoff_s=0.05, rate_per_s=1000)
        out = {}
        async with Fetcher(policy) as f:
            for path in ["/page", "/in", "/out", "/loop", "/huge", "/slow", "/flaky", "/gone", "/private/x"]:
                t0 = time.monotonic()
                out[path] = (await f.fetch(base + path), time.monotonic() - t0)
            out["offsite"] = (await f.fetch(f"http://127.0.0.1:{port}/page"), 0)
            out["scheme"] = (await f.fetch("file:///etc/passwd"), 0)
            counts = dict(f.counts)
        await runner.cleanup()
        return out, hits, counts

    out, hits, counts = run(go())
    assert out["/page"][0].ok and out["/page"][0].sketch.kind == "text"
    assert out["/in"][0].ok  # redirect within the site is followed
    assert out["/out"][0].reason == "refused_redirect_off_site"
    assert out["/loop"][0].reason == "redirect_loop"
    assert out["/huge"][0].reason == "too_large" and out["/huge"][1] < 5
    assert out["/slow"][0].reason == "timeout" and out["/slow"][1] < 4
    assert out["/flaky"][0].ok and hits["/flaky"] == 2  # 503 retried once
    assert out["/gone"][0].reason == "status_404" and hits["/gone"] == 1  # 4xx not retried
    assert out["/private/x"][0].reason == "refused_robots" and hits["/private/x"] == 0
    assert out["offsite"][0].reason == "refused_off_site"
    assert out["scheme"][0].reason == "refused_scheme"
    assert hits["/robots.txt"] == 1  # once per origin
    assert counts["refused_robots"] == 1 and counts["too_large"] == 1 and counts["ok"] == 3


def test_private_addresses_refused_unless_allowed():
    async def go():
        hits = Counter()
        runner, port = await serve(hits)
        res = []
        for allow in (False, True):
            for host in ("127.0.0.1", "localhost"):
                base = f"http://{host}:{port}"
                async with Fetcher(FetchPolicy(origins=frozenset({base}), allow_private=allow, robots=False,
                                               timeout_s=2, retries=0)) as f:
                    res.append((allow, host, (await f.fetch(base + "/page")).reason or "ok"))
        await runner.cleanup()
        return res, hits

    res, hits = run(go())
    assert [r for a, h, r in res if not a] == ["refused_private_address"] * 2
    assert [r for a, h, r in res if a] == ["ok", "ok"]
    assert hits["/page"] == 2  # the refused ones never reached the server


def test_politeness_rate_limit():
    async def go():
        hits = Counter()
        runner, port = await serve(hits)
        base = f"http://127.0.0.1:{port}"
        async with Fetcher(FetchPolicy(origins=frozenset({base}), allow_private=True, robots=False, rate_per_s=20)) as f:
            t0 = time.monotonic()
            await asyncio.gather(*(f.fetch(base + "/page") for _ in range(10)))
            dt = time.monotonic() - t0
        await runner.cleanup()
        return dt

    assert run(go()) >= 0.4  # 10 requests at 20/s: at least 9 gaps of 50 ms


def test_site_down_mid_round_fails_fast():
    """An origin whose fetches keep failing at the connection is counted down (reason site_down)."""
    from dustbuster.broker import free_port

    async def go():
        base = f"http://127.0.0.1:{free_port()}"  # nothing listens there
        async with Fetcher(FetchPolicy(origins=frozenset({base}), allow_private=True, robots=False, retries=1,
                                       backoff_s=0.05, rate_per_s=0, breaker_after=3)) as f:
            t0 = time.monotonic()
            got = [(await f.fetch(f"{base}/p{i}")).reason for i in range(50)]
            return got, time.monotonic() - t0, dict(f.counts)

    got, dt, counts = run(go())
    assert got[:3] == ["connection_failed"] * 3 and set(got[3:]) == {"site_down"}
    assert counts == {"connection_failed": 3, "site_down": 47}


def test_a_long_page_is_identified_off_the_event_loop():
    """A body of at least OFF_LOOP_BODY bytes is sketched and parsed in a thread (the review of
    issue 23: the HTML parser over up to max_bytes held the loop); the identity is the same."""
    from dustbuster.fetch.client import OFF_LOOP_BODY

    async def go():
        runner, port = await serve(Counter())
        base = f"http://site.test:{port}"
        policy = FetchPolicy(origins=frozenset({base}), allow_private=True, resolve={"site.test": "127.0.0.1"},
                             robots=False, max_bytes=400_000, timeout_s=5, retries=0, rate_per_s=1000)
        async with Fetcher(policy) as f:
            got = await f.fetch(base + "/long")
        await runner.cleanup()
        return got

    got = run(go())
    assert got.ok and got.identity is not None and OFF_LOOP_BODY < 100_000
    assert got.identity.title == "A long page" and got.identity.canonical.endswith("/page")
    assert got.sketch is not None and got.sketch.words > 10_000


def test_no_cookies_a_page_does_not_depend_on_what_was_fetched_before():
    """A site that keeps a visitor's preference in a session cookie (Trac's timeline daysback): the
    fetcher sends no cookie back, so the same URL gives the same page whatever came before it."""
    async def prefs(req):
        resp = web.Response(text="<html><title>set</title><body>ok</body></html>", content_type="text/html")
        resp.set_cookie("session", "days=90")
        return resp

    async def listing(req):
        long = req.cookies.get("session") == "days=90"
        body = " ".join(f"event{i}" for i in range(900 if long else 30))
        return web.Response(text=f"<html><title>Timeline</title><body>{body}</body></html>", content_type="text/html")

    async def go():
        a = web.Application()
        a.router.add_get("/prefs", prefs)
        a.router.add_get("/timeline", listing)
        runner, port = await serve_app(a)
        base = f"http://site.test:{port}"
        policy = FetchPolicy(origins=frozenset({base}), allow_private=True, resolve={"site.test": "127.0.0.1"},
                             robots=False, rate_per_s=1000)
        async with Fetcher(policy) as f:
            before = await f.fetch(base + "/timeline")
            await f.fetch(base + "/prefs")
            after = await f.fetch(base + "/timeline")
        await runner.cleanup()
        return before, after

    before, after = run(go())
    assert before.ok and after.ok
    assert before.sketch == after.sketch  # without the fix: 30 words, then 900


def test_a_redirect_without_location_keeps_its_status_and_no_sketch():
    """A 302 with no Location header: a failure that says its status (it was once stored as the
    page's sketch, leaving the status unknown)."""
    async def go():
        async def no_location(request):
            return web.Response(status=302)

        a = web.Application()
        a.router.add_get("/r", no_location)
        runner, port = await serve_app(a)
        base = f"http://site.test:{port}"
        policy = FetchPolicy(origins=frozenset({base}), allow_private=True, resolve={"site.test": "127.0.0.1"},
                             robots=False, timeout_s=2, retries=0)
        async with Fetcher(policy) as f:
            got = await f.fetch(base + "/r")
        await runner.cleanup()
        return got

    got = run(go())
    assert (got.ok, got.status, got.sketch, got.reason) == (False, 302, None, "redirect_without_location")
