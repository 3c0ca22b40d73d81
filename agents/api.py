"""The HTTP API served by each worker (aiohttp; issue 5).  docs/api.md has the reference.

| route | what |
|---|---|
| ``POST /canonicalize`` | ``{"urls": [...], "site"?: str, "normalize"?: bool}`` → each URL's canonical URL, the rules applied, the rule-set version |
| ``GET /sites`` | every site this worker holds a rule set for, with its version |
| ``GET /sites/{site}/rules`` | the site's current RuleSet document |
| ``GET /healthz`` | 200 once the rules topic has been read to its end and the worker is healthy (agents/health.py), else 503 (never needs the token) |
| ``GET /metrics`` | Prometheus text format (agents/metrics.py) |
| ``GET /``, ``GET /dashboard/...`` | the live dashboard (agents/dashboard.py, docs/dashboard.md) |

Errors are JSON ``{"error": "...", "reason": "..."}`` with a 4xx/5xx status: 400 malformed body
(not UTF-8, not strict JSON, nested too deep, NaN/Infinity/1e400, a URL with a control character or
a lone surrogate, a body whose ``Content-Encoding`` does not decode), 401 missing or wrong bearer
token (when ``DUST_API_TOKEN`` is set), 404 unknown site or route, 405 wrong method, 408 a body not
received within ``body_timeout_s``, 413 a batch over ``DUST_API_MAX_BATCH`` URLs or a body over
16 MiB, 500 a bug (logged).  Every rejection is counted in ``dust_api_rejects_total{reason}``.
"""

from __future__ import annotations

import asyncio
import hmac
import logging
from typing import Callable

from aiohttp import web

from dustbuster.core.errors import ParseError
from dustbuster.core.rulebook import RuleBook
from dustbuster.logs.formats import loads_strict
from dustbuster.agents.metrics import CONTENT_TYPE, Metrics
from dustbuster.stream.records import MAX_URL_CHARS, url_problem

from .dashboard import add_routes as add_dashboard_routes, is_open as dashboard_open
from .dashboard_feed import CandidatesFollower, record_versions
from .dashboard_state import DashboardState

log = logging.getLogger(__name__)

MAX_BODY = 16 * 1024 * 1024
BODY_TIMEOUT_S = 30.0  #: a request body must arrive within this many seconds (else 408)
OPEN_PATHS = frozenset({"/healthz"})


class RequestError(ParseError):
    """A request the API refuses: an HTTP status, a reason (the metrics label) and a message."""

    def __init__(self, status: int, reason: str, message: str) -> None:
        super().__init__(reason, message)
        self.status = status
        self.message = message


def _error(status: int, message: str, reason: str = "", **headers: str) -> web.Response:
    body = {"error": message} | ({"reason": reason} if reason else {})
    return web.json_response(body, status=status, headers=headers or None)


_URL_PROBLEMS = {"url_too_long": f"is longer than {MAX_URL_CHARS} characters",
                 "bad_url_char": "holds a control character (CR, LF, TAB, NUL...)",
                 "bad_url_surrogate": "holds a lone surrogate (not text)"}


def parse_canonicalize_body(raw: bytes, max_batch: int) -> tuple[list[str], str | None, bool | None]:
    """``(urls, site, normalize)`` of a ``POST /canonicalize`` body; raises RequestError (and
    nothing else) for a body the API refuses."""
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        raise RequestError(400, "bad_encoding", "the body is not UTF-8") from None
    try:
        body = loads_strict(text.removeprefix("\ufeff"))
    except ParseError as exc:
        what = {"too_deep": "is nested too deeply", "non_finite_number": "holds NaN, Infinity or a number out of range",
                "number_out_of_range": "holds an integer of more than 64 bits"}.get(exc.reason)
        if what is None:
            raise RequestError(400, "bad_json", 'the body must be JSON: {"urls": ["http://..."], "site": optional}') from None
        raise RequestError(400, exc.reason, f"the body {what}") from None
    if not isinstance(body, dict):
        raise RequestError(400, "bad_request", 'the body must be a JSON object with a "urls" list')
    urls = body.get("urls")
    if not isinstance(urls, list):
        raise RequestError(400, "bad_request", '"urls" must be a list of URL strings')
    if len(urls) > max_batch:
        raise RequestError(413, "batch_too_large", f"{len(urls)} URLs in one batch; at most {max_batch}")
    for i, u in enumerate(urls):
        if not isinstance(u, str):
            raise RequestError(400, "bad_request", f"urls[{i}] is not a string")
        problem = url_problem(u)
        if problem is not None:
            raise RequestError(400, problem, f"urls[{i}] {_URL_PROBLEMS[problem]}")
    site = body.get("site")
    if site is not None and (not isinstance(site, str) or not site.strip() or not site.isprintable()):
        raise RequestError(400, "bad_request", '"site" must be a non-empty string')
    norm = body.get("normalize")
    if norm is not None and not isinstance(norm, bool):
        raise RequestError(400, "bad_request", '"normalize" must be true or false')
    return urls, site, norm


def make_api(book: RuleBook, metrics: Metrics, *, ready: Callable[[], bool] = lambda: True, token: str = "",
             max_batch: int = 10000, body_timeout_s: float = BODY_TIMEOUT_S, health=None,
             dashboard: DashboardState | None = None) -> web.Application:
    def refuse(status: int, reason: str, message: str, **headers: str) -> web.Response:
        metrics.api_rejects.labels(reason).inc()
        return _error(status, message, reason, **headers)

    @web.middleware
    async def guard(request: web.Request, handler):
        if token and request.path not in OPEN_PATHS and not (dashboard is not None and dashboard_open(request.path)):
            auth = request.headers.get("Authorization", "")
            given = auth[7:] if auth.startswith("Bearer ") else ""
            if not hmac.compare_digest(given.encode("utf-8", "surrogateescape"), token.encode()):
                return refuse(401, "unauthorized", "a valid 'Authorization: Bearer <token>' header is required",
                              **{"WWW-Authenticate": 'Bearer realm="dustbuster"'})
        try:
            return await handler(request)
        except RequestError as exc:
            resp = refuse(exc.status, exc.reason, exc.message)
            if exc.reason in ("bad_content_encoding", "body_timeout"):
                resp.force_close()  # the rest of the body cannot be trusted or will not come: no keep-alive
            return resp
        except web.HTTPRequestEntityTooLarge:
            return refuse(413, "body_too_large", f"request body over {MAX_BODY} bytes")
        except web.HTTPException as exc:
            if exc.status >= 400:
                return refuse(exc.status, f"http_{exc.status}", exc.reason)
            raise
        except asyncio.CancelledError:
            raise
        except Exception:
            log.exception("API request %s %s failed", request.method, request.path)
            return refuse(500, "internal_error", "internal error (logged by the worker)")

    async def read_body(request: web.Request) -> bytes:
        try:
            return await asyncio.wait_for(request.read(), body_timeout_s)
        except asyncio.TimeoutError:
            raise RequestError(408, "body_timeout", f"the request body did not arrive within {body_timeout_s:g} s") from None
        except (web.HTTPException, asyncio.CancelledError):
            raise
        except Exception as exc:  # aiohttp's RequestPayloadError: bad gzip/deflate, a truncated chunk
            log.info("unreadable request body: %s", exc)
            raise RequestError(400, "bad_content_encoding", "the body could not be read: bad Content-Encoding "
                               "or transfer encoding") from None

    async def canonicalize(request: web.Request) -> web.Response:
        urls, site, norm = parse_canonicalize_body(await read_body(request), max_batch)
        results = []
        for k, u in enumerate(urls):
            results.append(book.canonize(u, site, norm).to_json())
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
        rules_ready = ready()
        extra = health.details() if health is not None else {}  # problems, agents, rebuilding
        ok = rules_ready and not extra.get("problems")
        return web.json_response({"status": "ok" if ok else "unhealthy" if rules_ready else "starting",
                                  "rules_ready": rules_ready, "sites": len(book.sites)} | extra, status=200 if ok else 503)

    async def metrics_view(request: web.Request) -> web.Response:
        metrics.rule_sets.set(len(book.sites))
        return web.Response(body=metrics.exposition(), headers={"Content-Type": CONTENT_TYPE})

    app = web.Application(middlewares=[guard], client_max_size=MAX_BODY)
    app.router.add_post("/canonicalize", canonicalize)
    app.router.add_get("/sites", sites)
    app.router.add_get("/sites/{site}/rules", site_rules)
    app.router.add_get("/healthz", healthz)
    app.router.add_get("/metrics", metrics_view)
    if dashboard is not None:
        add_dashboard_routes(app, dashboard, book)
    return app


def register(app, settings, book: RuleBook, follower, metrics: Metrics) -> None:
    """Serve the API from the worker (``DUST_API_PORT``; 0 = off).  Rule-set records the follower
    skips are counted in ``dust_rule_sets_rejected_total{reason}`` whether or not the API is on."""
    if follower is not None and follower.on_reject is None:
        follower.on_reject = lambda reason, site: metrics.rule_sets_rejected.labels(reason).inc()
    if not settings.api_port:
        return
    dashboard = app.dust_dashboard = DashboardState()
    app.dust_rounds = dashboard.rounds  # the validator agent reports its rounds here
    if follower is not None:
        record_versions(follower, book, dashboard.versions)

    @app.task
    async def follow_candidates() -> None:
        await CandidatesFollower(settings.kafka_bootstrap, settings.candidates_topic, dashboard).run()

    @app.task
    async def serve_api() -> None:
        api = make_api(book, metrics, ready=follower.ready.is_set if follower else (lambda: True), token=settings.api_token,
                       max_batch=settings.api_max_batch, health=getattr(app, "dust_health", None), dashboard=dashboard)
        # lingering_time=0: a request whose body was refused unread (bad Content-Encoding, 408) has its
        # connection closed after the JSON answer instead of aiohttp reading on (and logging the error)
        runner = web.AppRunner(api, access_log=None, lingering_time=0)
        await runner.setup()
        try:
            await web.TCPSite(runner, settings.api_host, settings.api_port).start()
        except OSError as exc:
            log.error("HTTP API not served: cannot listen on %s:%s: %s", settings.api_host, settings.api_port, exc)
            await runner.cleanup()
            return
        log.info("HTTP API and dashboard on http://%s:%s/", settings.api_host, settings.api_port)
        try:
            await asyncio.Event().wait()
        finally:
            await runner.cleanup()
