"""The HTTP API served by each worker (aiohttp; issue 5).  docs/api.md has the reference.

| route | what |
|---|---|
| ``POST /canonicalize`` | ``{"urls": [...], "site"?: str, "normalize"?: bool}`` → each URL's canonical URL, the rules applied, the rule-set version |
| ``GET /sites`` | every site this worker holds a rule set for, with its version |
| ``GET /sites/{site}/rules`` | the site's current RuleSet document |
| ``GET /healthz`` | 200 once the rules topic has been read to its end, else 503 (never needs the token) |
| ``GET /metrics`` | Prometheus text format (stream/metrics.py) |

Errors are JSON ``{"error": "..."}`` with a 4xx status: 400 malformed body, 401 missing or wrong
bearer token (when ``DUST_API_TOKEN`` is set), 404 unknown site or route, 405 wrong method, 413 a
batch over ``DUST_API_MAX_BATCH`` URLs or a body over 16 MiB.
"""

from __future__ import annotations

import asyncio
import hmac
import json
import logging
from typing import Callable

from aiohttp import web

from dust.rulebook import RuleBook
from stream.metrics import CONTENT_TYPE, Metrics
from stream.records import MAX_URL_CHARS

log = logging.getLogger(__name__)

MAX_BODY = 16 * 1024 * 1024
OPEN_PATHS = frozenset({"/healthz"})


def _error(status: int, message: str, **headers: str) -> web.Response:
    return web.json_response({"error": message}, status=status, headers=headers or None)


def make_api(book: RuleBook, metrics: Metrics, *, ready: Callable[[], bool] = lambda: True, token: str = "",
             max_batch: int = 10000) -> web.Application:
    @web.middleware
    async def guard(request: web.Request, handler):
        if token and request.path not in OPEN_PATHS:
            auth = request.headers.get("Authorization", "")
            given = auth[7:] if auth.startswith("Bearer ") else ""
            if not hmac.compare_digest(given.encode(), token.encode()):
                return _error(401, "a valid 'Authorization: Bearer <token>' header is required",
                              **{"WWW-Authenticate": 'Bearer realm="dustbuster"'})
        try:
            return await handler(request)
        except web.HTTPRequestEntityTooLarge:
            return _error(413, f"request body over {MAX_BODY} bytes")
        except web.HTTPException as exc:
            if exc.status >= 400:
                return _error(exc.status, exc.reason)
            raise

    async def canonicalize(request: web.Request) -> web.Response:
        raw = await request.read()
        try:
            body = json.loads(raw)
        except ValueError:
            return _error(400, 'the body must be JSON: {"urls": ["http://..."], "site": optional}')
        if not isinstance(body, dict):
            return _error(400, 'the body must be a JSON object with a "urls" list')
        urls = body.get("urls")
        if not isinstance(urls, list):
            return _error(400, '"urls" must be a list of URL strings')
        if len(urls) > max_batch:
            return _error(413, f"{len(urls)} URLs in one batch; at most {max_batch}")
        for i, u in enumerate(urls):
            if not isinstance(u, str):
                return _error(400, f"urls[{i}] is not a string")
            if len(u) > MAX_URL_CHARS:
                return _error(400, f"urls[{i}] is longer than {MAX_URL_CHARS} characters")
        site = body.get("site")
        if site is not None and (not isinstance(site, str) or not site.strip()):
            return _error(400, '"site" must be a non-empty string')
        norm = body.get("normalize")
        if norm is not None and not isinstance(norm, bool):
            return _error(400, '"normalize" must be true or false')
        results = []
        for k, u in enumerate(urls):
            results.append(book.canonicalize(u, site, norm).to_json())
            if k % 2000 == 1999:
                await asyncio.sleep(0)  # long batches let the worker breathe
        metrics.canonizations.labels("api").inc(len(results))
        versions = {r["site"]: r["version"] for r in results if r["version"] is not None}
        return web.json_response({"count": len(results), "versions": versions, "results": results})

    async def sites(request: web.Request) -> web.Response:
        out = [{"site": s, "version": sr.version, "rules": len(sr.rules), "created": sr.doc.get("created")}
               for s, sr in sorted(book.sites.items())]
        return web.json_response({"sites": out, "count": len(out)})

    async def site_rules(request: web.Request) -> web.Response:
        site = request.match_info["site"].lower()
        sr = book.sites.get(site)
        if sr is None:
            return _error(404, f"no rule set for site {site!r} (GET /sites lists them)")
        return web.json_response(dict(sr.doc) | {"site": site, "version": sr.version})

    async def healthz(request: web.Request) -> web.Response:
        ok = ready()
        return web.json_response({"status": "ok" if ok else "starting", "rules_ready": ok, "sites": len(book.sites)},
                                 status=200 if ok else 503)

    async def metrics_view(request: web.Request) -> web.Response:
        metrics.rule_sets.set(len(book.sites))
        return web.Response(body=metrics.exposition(), headers={"Content-Type": CONTENT_TYPE})

    app = web.Application(middlewares=[guard], client_max_size=MAX_BODY)
    app.router.add_post("/canonicalize", canonicalize)
    app.router.add_get("/sites", sites)
    app.router.add_get("/sites/{site}/rules", site_rules)
    app.router.add_get("/healthz", healthz)
    app.router.add_get("/metrics", metrics_view)
    return app


def register(app, settings, book: RuleBook, follower, metrics: Metrics) -> None:
    """Serve the API from the worker (``DUST_API_PORT``; 0 = off)."""
    if not settings.api_port:
        return

    @app.task
    async def serve_api() -> None:
        api = make_api(book, metrics, ready=follower.ready.is_set if follower else (lambda: True), token=settings.api_token,
                       max_batch=settings.api_max_batch)
        runner = web.AppRunner(api, access_log=None)
        await runner.setup()
        try:
            await web.TCPSite(runner, settings.api_host, settings.api_port).start()
        except OSError as exc:
            log.error("HTTP API not served: cannot listen on %s:%s: %s", settings.api_host, settings.api_port, exc)
            await runner.cleanup()
            return
        log.warning("HTTP API on http://%s:%s/", settings.api_host, settings.api_port)
        try:
            await asyncio.Event().wait()
        finally:
            await runner.cleanup()
