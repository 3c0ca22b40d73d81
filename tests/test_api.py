"""The HTTP API (agents/api.py) in-process over real HTTP on loopback: results, errors, limits, token."""

from __future__ import annotations

import asyncio
import json

import pytest
from aiohttp.test_utils import TestClient, TestServer

from dustbuster.agents.api import make_api
from dustbuster.core import ParamRule, SubstringRule
from dustbuster.core.canon.rulebook import RuleBook
from dustbuster.agents.metrics import Metrics

R = SubstringRule.from_parts
DOC = {"site": "forum.test", "version": 4, "created": 1795650000.5, "schema": "dustbuster/ruleset@1", "rules": [
    ParamRule("sid", "remove", status="valid").to_json(),
    R("http://www.", "http://", True, status="valid").to_json(),
    R("/story?id=", "/story_", status="valid").to_json(),
]}


def run(token: str = "", max_batch: int = 100, ready=lambda: True):
    book = RuleBook()
    book.update("forum.test", DOC)
    metrics = Metrics()
    app = make_api(book, metrics, ready=ready, token=token, max_batch=max_batch)

    def deco(fn):
        async def go():
            async with TestClient(TestServer(app, host="127.0.0.1")) as client:
                await fn(client)
        asyncio.run(go())
    return deco


def test_canonicalize_batch():
    @run()
    async def _(c):
        r = await c.post("/canonicalize", json={"urls": ["HTTP://WWW.forum.test:80/story?id=5&sid=9#x", "http://other.test/a/../b"]})
        assert r.status == 200
        body = await r.json()
        assert body["count"] == 2 and body["versions"] == {"forum.test": 4}
        a, b = body["results"]
        assert a["canonical"] == "http://forum.test/story_5" and a["version"] == 4 and a["site"] == "forum.test"
        assert a["rules"] == ["remove sid=*", '"^http://www." → "^http://"', '"/story?id=" → "/story_"']
        assert b == {"url": "http://other.test/a/../b", "canonical": "http://other.test/b", "site": None, "rules": [],
                     "version": None, "normalized": True, "converged": True}
        r = await c.post("/canonicalize", json={"urls": ["http://x.test/story?id=1"], "site": "forum.test", "normalize": False})
        assert (await r.json())["results"][0]["canonical"] == "http://x.test/story_1"
        m = await (await c.get("/metrics")).text()
        assert 'dust_canonizations_total{source="api"} 3.0' in m and "dust_rule_sets 1.0" in m


@pytest.mark.parametrize("body, status, words", [
    (b"not json", 400, "must be JSON"),
    (b"[1,2]", 400, "JSON object"),
    (b'{"url": "x"}', 400, '"urls" must be a list'),
    (b'{"urls": [1]}', 400, "urls[0] is not a string"),
    (b'{"urls": ["' + b"a" * 9000 + b'"]}', 400, "longer than"),
    (b'{"urls": [], "site": 3}', 400, '"site"'),
    (b'{"urls": [], "normalize": "yes"}', 400, '"normalize"'),
    (json.dumps({"urls": ["http://h/"] * 101}).encode(), 413, "at most 100"),
])
def test_bad_requests_get_clear_4xx(body, status, words):
    @run()
    async def _(c):
        r = await c.post("/canonicalize", data=body)
        assert r.status == status
        assert words in (await r.json())["error"]


def test_oversized_body_refused():
    @run(max_batch=10**9)
    async def _(c):
        r = await c.post("/canonicalize", data=b'{"urls": ["' + b"a" * (17 * 1024 * 1024) + b'"]}')
        assert r.status == 413 and "request body over" in (await r.json())["error"]


def test_sites_rules_health_and_404():
    @run()
    async def _(c):
        s = await (await c.get("/sites")).json()
        assert s == {"sites": [{"site": "forum.test", "version": 4, "rules": 3, "created": 1795650000.5}], "count": 1}
        doc = await (await c.get("/sites/Forum.Test/rules")).json()
        assert doc["version"] == 4 and len(doc["rules"]) == 3
        r = await c.get("/sites/nope.test/rules")
        assert r.status == 404 and "GET /sites" in (await r.json())["error"]
        assert (await c.get("/healthz")).status == 200
        r = await c.get("/nothing")
        assert r.status == 404 and "error" in await r.json()
        assert (await c.get("/canonicalize")).status == 405


def test_health_503_until_rules_read():
    @run(ready=lambda: False)
    async def _(c):
        r = await c.get("/healthz")
        assert r.status == 503 and (await r.json())["status"] == "starting"


def test_bearer_token():
    @run(token="s3cret")
    async def _(c):
        r = await c.post("/canonicalize", json={"urls": []})
        assert r.status == 401 and r.headers["WWW-Authenticate"].startswith("Bearer")
        r = await c.get("/metrics", headers={"Authorization": "Bearer wrong"})
        assert r.status == 401
        r = await c.get("/sites", headers={"Authorization": "Bearer s3cret"})
        assert r.status == 200
        assert (await c.get("/healthz")).status == 200  # probes need no token


def test_concurrent_batches_are_bounded_so_memory_is(monkeypatch):
    """Many clients posting big batches at once: at most MAX_CONCURRENT_BATCHES bodies are read,
    parsed and answered together (each costs memory a few times its size); the others wait their
    turn, and every one is answered."""
    from dustbuster.agents import api

    inside, most = 0, 0
    real = api.Views.answer

    async def counting(self, raw):
        nonlocal inside, most
        inside += 1
        most = max(most, inside)
        try:
            await asyncio.sleep(0.05)  # a slow answer: the others pile up behind the bound
            return await real(self, raw)
        finally:
            inside -= 1

    monkeypatch.setattr(api.Views, "answer", counting)

    @run()
    async def _(c):
        body = {"urls": [f"http://www.forum.test/story?id={i}&sid=1" for i in range(50)]}
        got = await asyncio.gather(*(c.post("/canonicalize", json=body) for _ in range(4 * api.MAX_CONCURRENT_BATCHES)))
        assert [r.status for r in got] == [200] * (4 * api.MAX_CONCURRENT_BATCHES)
        assert (await got[-1].json())["count"] == 50

    assert 1 <= most <= api.MAX_CONCURRENT_BATCHES  # never more at once (no timing asserted)


def test_a_body_far_over_the_limit_gets_a_readable_413_not_a_reset():
    """82 MB sent as one Content-Length body, chunked, and announced with ``Expect: 100-continue``
    (curl's way): each client reads a 413 with its JSON reason (the body is read and dropped, never
    kept), where it got a reset connection."""
    import socket

    big = b'{"urls": ["' + b"a" * (82 * 1024 * 1024) + b'"]}'

    async def chunks():
        for k in range(0, len(big), 1 << 20):
            yield big[k:k + (1 << 20)]

    @run(max_batch=10**9)
    async def _(c):
        r = await c.post("/canonicalize", data=big)
        assert r.status == 413 and (await r.json())["reason"] == "body_too_large"
        r = await c.post("/canonicalize", data=chunks())
        assert r.status == 413 and "request body over" in (await r.json())["error"]
        port = c.server.port

        def expect_continue() -> bytes:
            with socket.create_connection(("127.0.0.1", port), timeout=10) as s:
                s.sendall(b"POST /canonicalize HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                          b"Content-Length: 86000000\r\nExpect: 100-continue\r\n\r\n")
                return s.recv(65536)

        head = await asyncio.get_running_loop().run_in_executor(None, expect_continue)
        assert head.startswith(b"HTTP/1.1 413") and b"body_too_large" in head
        m = await (await c.get("/metrics")).text()
        assert 'dust_api_rejects_total{reason="body_too_large"} 3.0' in m
