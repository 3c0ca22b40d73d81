"""A simulated forum site with DUST and ground truth, served by aiohttp on loopback.

In the spirit of the papers' forum (WWW 2007 §6, Figure 7): several host names for one site,
aliases, parameters that do not change content and ones that do, print versions with extra
chrome, pages that grow as comments arrive, look-alike URLs with different content, redirects,
soft-error pages (unknown paths answer 200 with a generic page), slow and failing pages.

Its host names, URL families and truth are :mod:`dustbuster.sim.forum`'s: ``SimSite.truth()`` lists
the rules that are valid (and some that look valid but are not); ``SimSite.log_lines(n)`` writes an
access log of simulated traffic whose sizes are the real sizes the server returns, so mining,
validation and canonization can be scored against the truth.
"""

from __future__ import annotations

import asyncio
import random
import re
from dataclasses import dataclass, field

from aiohttp import web

from . import forum
from .forum import IGNORED_PARAMS, SITE_HOSTS, STORY
from .traps import Traps
from .wiki import Wiki

WORDS = ("market election river concert festival bridge harbor season council rally orchestra "
         "theater museum library stadium parliament budget forecast storm drought harvest "
         "vaccine hospital school teacher student archive scandal verdict treaty summit").split()


@dataclass
class SimSite:
    hosts: tuple[str, ...] = SITE_HOSTS
    stories: int = 300
    seed: int = 7
    slow_s: float = 3.0
    admin_hits: int = 0
    comment_every: int = 25  #: the server appends a comment to a story every N requests of it
    broken: set[str] = field(default_factory=set)  #: "story_alias", "distinct" (no DUST), "all" (500s)
    traps: bool = False  #: the identity traps of sim/traps.py (soft errors, look-alikes, a hidden revision, canonicals)
    wiki: bool = False  #: the one-page families of sim/wiki.py (a login page's no-op returnto, a listing's page=)
    #: every page served links to a URL made for that answer (``/s0?from=<n>``, n counting the pages
    #: served), as real sites' "from" views, tokens and timestamps do: each fetch shows links never seen
    fresh_links: bool = False
    _served: int = 0
    _requests: dict[tuple[str, int], int] = field(default_factory=dict)
    comments: dict[tuple[str, int], int] = field(default_factory=dict)

    # ------------------------------------------------------------------ content
    def _section(self, host: str) -> str:
        return "movies" if host.startswith("movies.") else "politics" if host.startswith("politics.") else "main"

    def story_text(self, host: str, n: int, salt: str = "") -> str:
        rnd = random.Random(f"{self.seed}:{self._section(host)}:{n}:{salt}")
        body = " ".join(rnd.choice(WORDS) + str(rnd.randrange(100)) for _ in range(rnd.randrange(120, 900)))
        k = self.comments.get((self._section(host), n), 0)
        notes = " ".join(f"comment{j} reader{j} agrees" for j in range(k))
        return f"story {n} {body} {notes}"

    def page(self, title: str, text: str, chrome: str = "", canonical: str | None = None) -> str:
        nav = " ".join(f'<a href="/s{i}">section{i}</a>' for i in range(5))
        if self.fresh_links:
            self._served += 1
            nav += f' <a href="/s0?from={self._served}">recent</a>'
        link = f'<link rel="canonical" href="{canonical}">' if canonical else ""
        return (f"<html><head><title>{title}</title>{link}</head><body><nav>{nav}{chrome}</nav><p>{text}</p>"
                "</body></html>")

    def render(self, host: str, path: str, query: dict[str, str], serving: bool = False) -> tuple[int, str, str | None]:
        """(status, html, redirect location) for a request; the single source of the site's truth."""
        raw_host, host = host, host.split(":")[0].lower()
        if "all" in self.broken:
            return 500, "", None
        if "distinct" in self.broken:  # every URL its own page: no DUST at all any more
            salt = host + path + "?" + "&".join(f"{k}={v}" for k, v in sorted(query.items()))
            return 200, self.page("x", self.story_text(host, 0, salt=salt)), None
        if host not in self.hosts:
            return 404, self.page("no such host", "unknown host"), None
        for drop in IGNORED_PARAMS:
            query.pop(drop, None)
        trap = Traps(self).render(raw_host, path, query) if self.traps else None
        if trap is None and self.wiki:
            trap = Wiki(self).render(host, path, query)
        if trap is not None:
            return trap
        if path.startswith("/old/"):
            return 301, "", path[4:]
        if path in ("/", "/index.html"):
            return 200, self.page("home", f"front page of {self._section(host)} " + " ".join(WORDS * 8)), None
        n = None
        if path.startswith("/story_") and "story_alias" in self.broken:
            pass  # the site changed: story_N is gone (a soft error below)
        elif path.startswith("/story_"):
            # lenient, like many real servers: "/story_5&sid=x" is story 5 with sid=x
            head, *rest = path[7:].split("&")
            for kv in rest:
                k, _, v = kv.partition("=")
                query.setdefault(k, v)
            for drop in IGNORED_PARAMS:
                query.pop(drop, None)
            n = int(head) if head.isdigit() else None
        elif path in ("/story", "/story.php3"):
            digits = re.match(r"\d+", query.get("id", ""))
            n = int(digits.group()) if digits else None
        if n is not None and n < self.stories:
            if serving and self.comment_every:
                key = (self._section(host), n)
                self._requests[key] = self._requests.get(key, 0) + 1
                if self._requests[key] % self.comment_every == 0:
                    self.comment(host, n)  # a dynamic page: it grows between requests
            page = int(re.match(r"\d*", query.get("page", "1")).group() or 1)  # type: ignore[union-attr]  # \d* always matches
            text = self.story_text(host, n)
            if page > 1:  # another page of the thread: other comments, other text
                text = f"page {page} of story {n} " + self.story_text(host, n, salt=f"page{page}")
            elif self.traps:
                text = Traps(self).story_text(host, n, query) or text
            canon = Traps(self).canonical(raw_host, n) if self.traps and page == 1 else None
            return 200, self.page(f"story {n}", text, canonical=canon), None
        if path.startswith("/print/story_") and path[13:].isdigit() and int(path[13:]) < self.stories:
            chrome = " ".join(f"print{i} share{i} email{i}" for i in range(40))
            return 200, self.page("print", self.story_text(host, int(path[13:])), chrome), None
        if path.startswith("/lect") and path.endswith(".ps") and path[5:-3].isdigit():
            return 200, self.page("lecture", f"lecture {path[5:-3]} " + self.story_text("lect", int(path[5:-3]))), None
        if path.startswith("/fail/"):
            return 500, "", None
        return 200, self.page("not found", "sorry the page you asked for does not exist here " * 5), None  # soft error

    def page_of(self, url: str) -> str | None:
        """The page of an ``http://`` URL as :meth:`render` gives it (redirects followed, no serving
        side effects); None for a failure, a redirect loop or not such a URL.  The truth that
        validated rules are judged against (tests, bench/trust_sim.py)."""
        for _ in range(5):
            m = re.match(r"http://([^/]+)(/[^?]*)(?:\?(.*))?$", url)
            if not m:
                return None
            host, path, q = m.group(1), m.group(2), m.group(3) or ""
            query = dict(p.split("=", 1) if "=" in p else (p, "") for p in q.split("&") if p)  # type: ignore[misc]  # split in two by its "="
            status, html, loc = self.render(host, path, query)
            if loc is None:
                if self.traps and "<title>Error</title>" in html:
                    return None  # a trap's soft error (sim/traps.py): no page
                return html if status == 200 else None
            url = f"http://{host}{loc}"
        return None

    def comment(self, host: str, n: int) -> None:
        key = (self._section(host), n)
        self.comments[key] = self.comments.get(key, 0) + 1

    # ------------------------------------------------------------------ ground truth
    @staticmethod
    def truth() -> dict:
        """The rules valid on the site, and some that look valid but are not (:data:`forum.TRUTH`)."""
        return forum.truth()

    # ------------------------------------------------------------------ traffic
    def log_lines(self, n: int, seed: int = 1, port: int | None = None) -> list[str]:
        """Combined-format lines with a vhost first field (``host:port`` when ``port`` is given);
        sizes are what the server returns at that moment."""
        rnd = random.Random(seed)
        out = []
        for k in range(n):
            host = rnd.choice(self.hosts)
            vhost = f"{host}:{port}" if port else host
            s = min(int(rnd.paretovariate(1.0)) - 1, self.stories - 1) if rnd.random() < 0.4 else rnd.randrange(self.stories)
            r = rnd.random()
            if r < 0.25:
                target = STORY["alias"].format(n=s)
            elif r < 0.45:
                target = STORY["query"].format(n=s)
            elif r < 0.55:
                target = STORY["php3"].format(n=s)
            elif r < 0.62:
                target = STORY["display"].format(n=s)
            elif r < 0.70:
                target = STORY["session"].format(n=s, sid=f"{rnd.randrange(16**6):06x}")
            elif r < 0.75:
                target = f"/story_{s}?utm_source=feed{rnd.randrange(3)}"
            elif r < 0.80:
                target = STORY["page"].format(n=s, page=rnd.randrange(2, 4))
            elif r < 0.85:
                target = STORY["print"].format(n=s)
            elif r < 0.90:
                target = rnd.choice(["/", "/index.html"])
            elif r < 0.95:
                target = f"/lect{rnd.randrange(1, 12)}.ps"
            else:
                target = "/old" + STORY["alias"].format(n=s)
            if self.traps and rnd.random() < 0.3:
                target = Traps(self).log_target(rnd, s)
            if self.wiki and rnd.random() < 0.2:
                target = Wiki.log_target(rnd, s)
            if rnd.random() < 0.02:
                self.comment(host, s)
            path, _, q = target.partition("?")
            query = dict(p.split("=", 1) if "=" in p else (p, "") for p in q.split("&") if p)  # type: ignore[misc]  # split in two by its "="
            status, html, _ = self.render(host, path, query)
            size = len(html.encode()) if status == 200 else 0
            out.append(f'{vhost} 10.0.{k % 250}.{rnd.randrange(1, 250)} - - [25/Nov/2026:10:00:00 +0000] '
                       f'"GET {target} HTTP/1.1" {status} {size} "-" "sim"')
        return out

    # ------------------------------------------------------------------ server
    def app(self) -> web.Application:
        async def handle(req: web.Request) -> web.StreamResponse:
            if req.path.startswith("/slow/"):
                await asyncio.sleep(self.slow_s)
            if req.path.startswith("/huge/"):  # a never-ending response
                resp = web.StreamResponse(headers={"Content-Type": "text/html"})
                await resp.prepare(req)
                try:
                    while True:
                        await resp.write(b"<p>" + b"endless " * 8000 + b"</p>")
                except (ConnectionResetError, RuntimeError):
                    return resp
            if req.path.startswith("/loop/"):
                raise web.HTTPFound(req.path)
            if req.path.startswith("/admin/"):
                self.admin_hits += 1
                return web.Response(text="admin console", content_type="text/html")
            if req.path == "/robots.txt":
                return web.Response(text="User-agent: *\nDisallow: /admin/\n")
            status, html, loc = self.render(req.host, req.path, dict(req.query), serving=True)
            if loc is not None:
                raise web.HTTPMovedPermanently(loc)
            return web.Response(status=status, text=html, content_type="text/html")

        a = web.Application()
        a.router.add_route("GET", "/{tail:.*}", handle)
        return a


async def start(site: SimSite, host: str = "127.0.0.1", port: int = 0) -> tuple[web.AppRunner, int]:
    runner = web.AppRunner(site.app())
    await runner.setup()
    tcp = web.TCPSite(runner, host, port)
    await tcp.start()
    return runner, runner.addresses[0][1]
