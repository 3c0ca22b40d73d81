"""The live dashboard served by every worker on the API port (docs/dashboard.md).

| route | what | token |
|---|---|---|
| ``GET /`` | the page (``agents/dashboard_static/index.html``) | no: it holds no data |
| ``GET /dashboard/static/{name}`` | its script and style sheet | no |
| ``GET /dashboard/state.json?site=S`` | every site in a row and site S in detail (agents/dashboard_view.py) | yes |

No build step and no third-party script: plain HTML, CSS and JavaScript files shipped in the
package, which poll ``state.json`` every two seconds with ``fetch`` (so the bearer token of
``DUST_API_TOKEN`` goes in a header: the page asks for it once and keeps it for the tab).
"""

from __future__ import annotations

import os
import socket
from importlib import resources

from aiohttp import web

from dustbuster.core.canon.rulebook import RuleBook

from .dashboard_state import DashboardState
from .dashboard_view import ViewCache, snapshot

STATIC_PREFIX = "/dashboard/static/"
OPEN_PATHS = frozenset({"/"})
_TYPES = {".html": "text/html", ".js": "text/javascript", ".css": "text/css", ".svg": "image/svg+xml"}
#: the page loads nothing from anywhere else; links to the site's pages are plain navigation
CSP = ("default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; "
       "base-uri 'none'; form-action 'none'; frame-ancestors 'none'")


def is_open(path: str) -> bool:
    """Paths served without the token: the page and its static files (no data in them)."""
    return path in OPEN_PATHS or path.startswith(STATIC_PREFIX)


def _static_files() -> dict[str, tuple[bytes, str]]:
    root = resources.files("dustbuster.agents") / "dashboard_static"
    out = {}
    for entry in root.iterdir():
        ext = os.path.splitext(entry.name)[1]
        if entry.is_file() and ext in _TYPES:
            out[entry.name] = (entry.read_bytes(), _TYPES[ext])
    return out


def add_routes(api: web.Application, state: DashboardState, book: RuleBook) -> None:
    files = _static_files()
    cache = ViewCache()
    worker = f"{socket.gethostname()}:{os.getpid()}"
    headers = {"Content-Security-Policy": CSP, "X-Content-Type-Options": "nosniff", "Referrer-Policy": "no-referrer",
               "Cache-Control": "no-cache"}

    def serve(name: str) -> web.Response:
        got = files.get(name)
        if got is None:
            raise web.HTTPNotFound(reason=f"no such file {name!r}")
        body, ctype = got
        return web.Response(body=body, content_type=ctype, charset="utf-8", headers=headers)

    async def page(request: web.Request) -> web.Response:
        return serve("index.html")

    async def static(request: web.Request) -> web.Response:
        return serve(request.match_info["name"])

    async def state_json(request: web.Request) -> web.Response:
        site = request.query.get("site", "").strip().lower() or None
        body = snapshot(state, book, site, cache, worker)
        return web.json_response(body, headers={"Cache-Control": "no-store", "X-Content-Type-Options": "nosniff"})

    api.router.add_get("/", page)
    api.router.add_get(STATIC_PREFIX + "{name}", static)
    api.router.add_get("/dashboard/state.json", state_json)
