"""The HTTP API served by each worker (aiohttp).  docs/api.md has the reference.

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
import resource
from typing import Callable

from aiohttp import HttpVersion11, web

from dustbuster.core.errors import ParseError
from dustbuster.core.canon.rulebook import RuleBook
from dustbuster.core.strictjson import loads_strict
from dustbuster.agents.metrics import CONTENT_TYPE, Metrics
from dustbuster.stream.records import MAX_URL_CHARS, url_problem

from .context import WorkerContext
from .dashboard import add_routes as add_dashboard_routes, is_open as dashboard_open
from .dashboard_feed import CandidatesFollower
from .dashboard_state import DashboardState

log = logging.getLogger(__name__)

MAX_BODY = 16 * 1024 * 1024
#: ``POST /canonicalize`` bodies parsed and answered at once (a 16 MB body of long URLs costs
#: ~80 MB while it is parsed and answered, five times the body); the others wait their turn with
#: their body read (at most MAX_BODY each), so a slow sender holds no slot
MAX_CONCURRENT_BATCHES = 4
BODY_TIMEOUT_S = 30.0  #: a request body must arrive within this many seconds (else 408)
#: a body over MAX_BODY is read and dropped up to this many bytes, so its 413 reaches a client
#: still sending it (beyond, or declared beyond, the connection is closed after the 413)
DRAIN_MAX = 256 * 1024 * 1024
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


def _guard(metrics: Metrics, token: str, dashboard: DashboardState | None):
    """The middleware: the bearer token (when set), and every refusal or bug as a counted JSON error."""
    @web.middleware
    async def guard(request: web.Request, handler):
        if token and request.path not in OPEN_PATHS and not (dashboard is not None and dashboard_open(request.path)):
            auth = request.headers.get("Authorization", "")
            given = auth[7:] if auth.startswith("Bearer ") else ""
            if not hmac.compare_digest(given.encode("utf-8", "surrogateescape"), token.encode()):
                return _refuse(metrics, 401, "unauthorized", "a valid 'Authorization: Bearer <token>' header is required",
                               **{"WWW-Authenticate": 'Bearer realm="dustbuster"'})
        try:
            return await handler(request)
        except RequestError as exc:
            resp = _refuse(metrics, exc.status, exc.reason, exc.message)
            if exc.reason in ("bad_content_encoding", "body_timeout", "body_too_large"):
                resp.force_close()  # the rest of the body cannot be trusted or will not come: no keep-alive
            return resp
        except web.HTTPRequestEntityTooLarge:
            return _refuse(metrics, 413, "body_too_large", f"request body over {MAX_BODY} bytes")
        except web.HTTPException as exc:
            if exc.status >= 400:
                return _refuse(metrics, exc.status, f"http_{exc.status}", exc.reason)
            raise
        except asyncio.CancelledError:
            raise
        except Exception:
            log.exception("API request %s %s failed", request.method, request.path)
            return _refuse(metrics, 500, "internal_error", "internal error (logged by the worker)")

    return guard


def _refuse(metrics: Metrics, status: int, reason: str, message: str, **headers: str) -> web.Response:
    metrics.api_rejects.labels(reason).inc()
    return _error(status, message, reason, **headers)


async def read_body(request: web.Request, body_timeout_s: float, max_body: int = MAX_BODY) -> bytes:
    """The request body, within ``body_timeout_s`` seconds (else 408); 400 when it cannot be decoded.
    A body over ``max_body`` bytes is a readable 413: the rest of it is read and dropped (up to
    :data:`DRAIN_MAX` bytes, holding none of it), so the client that is still sending gets the
    answer, not a reset connection; one declared over :data:`DRAIN_MAX` is refused at once."""
    declared = request.content_length
    if declared is not None and declared > DRAIN_MAX:
        raise RequestError(413, "body_too_large", f"request body over {max_body} bytes ({declared} declared)")
    try:
        return await asyncio.wait_for(_read_within(request, max_body), body_timeout_s)
    except asyncio.TimeoutError:
        raise RequestError(408, "body_timeout", f"the request body did not arrive within {body_timeout_s:g} s") from None
    except (web.HTTPException, asyncio.CancelledError, RequestError):
        raise
    except Exception as exc:  # noqa: BLE001 - aiohttp's RequestPayloadError: bad gzip/deflate, a truncated chunk
        log.info("unreadable request body: %s", exc)
        raise RequestError(400, "bad_content_encoding", "the body could not be read: bad Content-Encoding "
                           "or transfer encoding") from None


async def _read_within(request: web.Request, max_body: int) -> bytes:
    """The body, or 413 once it passed ``max_body`` (the rest read and dropped, up to DRAIN_MAX)."""
    buf = bytearray()
    seen = 0
    async for chunk in request.content.iter_chunked(256 * 1024):
        seen += len(chunk)
        if seen > DRAIN_MAX:
            break
        if seen <= max_body:
            buf.extend(chunk)
        elif buf:
            buf = bytearray()  # over the limit: nothing more is kept
    if seen > max_body:
        raise RequestError(413, "body_too_large", f"request body over {max_body} bytes")
    return bytes(buf)


class Views:
    """The API's handlers, over one rule book."""

    def __init__(self, book: RuleBook, metrics: Metrics, ready: Callable[[], bool], max_batch: int,
                 body_timeout_s: float, health) -> None:
        self.book, self.metrics, self.ready, self.health = book, metrics, ready, health
        self.max_batch, self.body_timeout_s = max_batch, body_timeout_s
        self.batches = asyncio.Semaphore(MAX_CONCURRENT_BATCHES)

    async def expect(self, request: web.Request) -> web.StreamResponse | None:
        """``Expect: 100-continue`` (curl's way with bodies over 1 MB): a body declared over MAX_BODY
        gets its 413 before it is sent; any other goes on as aiohttp's default handler does."""
        if (request.version == HttpVersion11 and request.headers.get("Expect", "").lower() == "100-continue"
                and request.content_length is not None and request.content_length > MAX_BODY):
            resp = _refuse(self.metrics, 413, "body_too_large",
                           f"request body over {MAX_BODY} bytes ({request.content_length} declared)")
            resp.force_close()
            return resp
        if request.version == HttpVersion11 and request.headers.get("Expect", "").lower() == "100-continue":
            await request.writer.write(b"HTTP/1.1 100 Continue\r\n\r\n")  # as aiohttp's default handler
            request.writer.output_size = 0  # the answer's own bytes start now
        return None

    async def canonicalize(self, request: web.Request) -> web.Response:
        raw = await read_body(request, self.body_timeout_s)  # a slow sender holds no batch slot
        async with self.batches:  # parsing and answering: at most MAX_CONCURRENT_BATCHES at once
            return await self.answer(raw)

    async def answer(self, raw: bytes) -> web.Response:
        """The answer to one ``POST /canonicalize`` body (read already)."""
        urls, site, norm = parse_canonicalize_body(raw, self.max_batch)
        results = []
        for k, u in enumerate(urls):
            results.append(self.book.canonize(u, site, norm).to_json())
            if k % 2000 == 1999:
                await asyncio.sleep(0)  # long batches let the worker breathe
        self.metrics.canonizations.labels("api").inc(len(results))
        versions = {r["site"]: r["version"] for r in results if r["version"] is not None}
        return web.json_response({"count": len(results), "versions": versions, "results": results})

    async def sites(self, request: web.Request) -> web.Response:
        out = [{"site": s, "version": sr.version, "rules": len(sr.rules), "created": sr.doc.get("created")}
               for s, sr in sorted(self.book.sites.items())]
        return web.json_response({"sites": out, "count": len(out)})

    async def site_rules(self, request: web.Request) -> web.Response:
        site = request.match_info["site"].lower()
        sr = self.book.sites.get(site)
        if sr is None:
            return _error(404, f"no rule set for site {site!r} (GET /sites lists them)")
        # the document as published: its signature (dustbuster.core.model.signing) covers every field, so
        # "site" and "version" are only added where the document has none
        return web.json_response({"site": site, "version": sr.version} | dict(sr.doc))

    async def healthz(self, request: web.Request) -> web.Response:
        rules_ready = self.ready()
        extra = self.health.details() if self.health is not None else {}  # problems, agents, rebuilding
        ok = rules_ready and not extra.get("problems")
        return web.json_response({"status": "ok" if ok else "unhealthy" if rules_ready else "starting",
                                  "rules_ready": rules_ready, "sites": len(self.book.sites)} | extra,
                                 status=200 if ok else 503)

    async def metrics_view(self, request: web.Request) -> web.Response:
        self.metrics.rule_sets.set(len(self.book.sites))
        return web.Response(body=self.metrics.exposition(), headers={"Content-Type": CONTENT_TYPE})


def make_api(book: RuleBook, metrics: Metrics, *, ready: Callable[[], bool] = lambda: True, token: str = "",
             max_batch: int = 10000, body_timeout_s: float = BODY_TIMEOUT_S, health=None,
             dashboard: DashboardState | None = None) -> web.Application:
    """The API's aiohttp application: its routes, and the dashboard's when ``dashboard`` is given."""
    views = Views(book, metrics, ready, max_batch, body_timeout_s, health)
    app = web.Application(middlewares=[_guard(metrics, token, dashboard)], client_max_size=MAX_BODY)
    app.router.add_post("/canonicalize", views.canonicalize, expect_handler=views.expect)
    app.router.add_get("/sites", views.sites)
    app.router.add_get("/sites/{site}/rules", views.site_rules)
    app.router.add_get("/healthz", views.healthz)
    app.router.add_get("/metrics", views.metrics_view)
    if dashboard is not None:
        add_dashboard_routes(app, dashboard, book)
    return app


def register(ctx: WorkerContext) -> None:
    """Serve the API and the dashboard from the worker (``DUST_API_PORT``; 0 = off)."""
    settings, dashboard = ctx.settings, ctx.dashboard
    if not settings.api_port or dashboard is None:
        return

    @ctx.app.task
    async def follow_candidates() -> None:
        await CandidatesFollower(settings.kafka_bootstrap, settings.candidates_topic, dashboard).run()

    @ctx.app.task
    async def serve_api() -> None:
        await serve(ctx)


async def serve(ctx: WorkerContext) -> None:
    """Listen on DUST_API_HOST:DUST_API_PORT until the worker stops (see :func:`listen` for the
    limits that keep idle and half-open connections from starving the worker)."""
    settings, follower = ctx.settings, ctx.follower
    api = make_api(ctx.book, ctx.metrics, ready=follower.ready.is_set if follower else (lambda: True),
                   token=settings.api_token, max_batch=settings.api_max_batch, health=ctx.health,
                   dashboard=ctx.dashboard)
    # lingering_time=0: a request whose body was refused unread (bad Content-Encoding, 408) has its
    # connection closed after the JSON answer instead of aiohttp reading on (and logging the error)
    runner = web.AppRunner(api, access_log=None, lingering_time=0, keepalive_timeout=settings.api_idle_timeout_s,
                           shutdown_timeout=SHUTDOWN_S)
    await runner.setup()
    assert runner.server is not None  # made by setup()
    cap = max_connections(settings.api_max_connections)
    try:
        server = await listen(runner.server, settings.api_host, settings.api_port, cap,
                              lambda: ctx.metrics.api_rejects.labels("too_many_connections").inc())
    except OSError as exc:
        log.error("HTTP API not served: cannot listen on %s:%s: %s", settings.api_host, settings.api_port, exc)
        await runner.cleanup()
        return
    log.info("HTTP API and dashboard on http://%s:%s/ (at most %s connections, idle ones closed after %gs)",
             settings.api_host, settings.api_port, cap, settings.api_idle_timeout_s)
    try:
        await asyncio.Event().wait()
    finally:
        server.close()
        await runner.cleanup()


#: seconds the API waits for its requests in flight when the worker stops
SHUTDOWN_S = 2.0
#: the share of the process's file descriptors the API's connections may hold; the rest is for
#: RocksDB (at most ``state.rocks.MAX_OPEN_FILES`` per store) and the Kafka clients
API_FD_SHARE = 4
#: the listening socket's backlog (see :func:`listen`)
ACCEPT_BURST = 32
#: what a connection over the cap is told before it is closed
_BUSY_BODY = b'{"error": "too many connections", "reason": "too_many_connections"}'
BUSY = (b"HTTP/1.1 503 Service Unavailable\r\nContent-Type: application/json\r\nConnection: close\r\n"
        b"Retry-After: 1\r\nContent-Length: %d\r\n\r\n%s" % (len(_BUSY_BODY), _BUSY_BODY))


def max_connections(configured: int) -> int:
    """The API's connection cap: ``configured`` (DUST_API_MAX_CONNECTIONS), and never more than a
    quarter of this process's file-descriptor limit (at least 16)."""
    soft, _ = resource.getrlimit(resource.RLIMIT_NOFILE)
    share = soft // API_FD_SHARE if soft != resource.RLIM_INFINITY else configured
    return max(16, min(configured, share))


class _Busy(asyncio.Protocol):
    """A connection over the cap: a 503 and closed at once (its descriptor freed)."""

    def connection_made(self, transport) -> None:
        transport.write(BUSY)
        transport.close()


async def listen(server: web.Server, host: str, port: int, cap: int, on_refuse: Callable[[], None]):
    """An asyncio server for ``server``'s requests that holds at most ``cap`` connections: each one
    past it is answered 503 and closed at once, and counted (``on_refuse``)."""
    def factory() -> asyncio.Protocol:
        if len(server.connections) >= cap:
            on_refuse()
            return _Busy()
        return server()

    # backlog: also the most connections asyncio accepts in one go before any is handed to the
    # factory (and refused): the burst a flood adds over the cap
    return await asyncio.get_running_loop().create_server(factory, host, port, reuse_address=True, backlog=ACCEPT_BURST)
