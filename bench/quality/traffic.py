"""Traffic for a quality site: a breadth-first crawler plus browser-like users, seeded and bounded.

  python bench/quality/traffic.py --base http://trac.quality.test:18081 --connect 127.0.0.1 \\
      --alias www.trac.quality.test --seed 1 --requests 1500 --seconds 600

* Every request goes to ``--connect`` (an address in 127.0.0.0/8; anything else is refused) with
  the site's host name in the Host header, as a browser resolving a loopback alias would send it.
* The crawler (``--crawler-share`` of the requests) follows every link of the site breadth-first
  from ``/``, each URL once, like a search engine's crawler (it ignores nothing but other hosts).
* Users start sessions at the front page or at a page they know (a bookmark or an outside link:
  sometimes under another origin of the site — the ``www.`` alias, another port: ``--alias``,
  ``--origin`` —, sometimes with a campaign parameter, sometimes without the ``.html``, sometimes
  cut back to its folder), load the page's style sheets and scripts once per session, and walk 3-12 steps:
  following a random link, or filling and sending one of the page's GET forms (search boxes,
  queries, filters) with words of the page.  POST forms are never sent.
* The pages they know are the crawler's and every page a session saw; a session's entry page is
  drawn section by section (a section: the first path segment, a ``Namespace:`` prefix of the
  last one, the parameter names), so outside links reach every part of the site, not only the
  pages the crawler met first.
* Clients spell URLs as they do on the real site (the app drivers in bench/quality/run.py give
  the spellings): ``--spelling 'REGEX TEMPLATE'`` rewrites a URL whose path and query match REGEX
  (re.fullmatch) to TEMPLATE (``\\1`` and friends, re.Match.expand) on some entries and links
  followed, e.g. MediaWiki's ``/wiki/X`` as ``/w/index.php?title=X``; ``--noop NAME=VALUE``
  (parameters the app ignores or that name its defaults) and the campaign parameters are added to
  some entries and links followed, in every section.
* Seeded (``--seed``: the same seed and the same site give the same requests) and bounded: at
  most ``--requests`` requests and ``--seconds`` seconds, whichever comes first.
Standard library only.
"""

from __future__ import annotations

import argparse
import http.client
import ipaddress
import random
import re
import sys
import time
from collections import deque
from html.parser import HTMLParser
from urllib.parse import urlencode, urljoin, urlsplit, urlunsplit

AGENTS = (
    "Mozilla/5.0 (X11; Linux x86_64; rv:128.0) Gecko/20100101 Firefox/128.0",
    "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0 Safari/537.36",
    "Mozilla/5.0 (Macintosh; Intel Mac OS X 14_5) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.5 Safari/605.1.15",
)
CRAWLER_AGENT = "QualityBot/1.0 (bench/quality crawler)"
CAMPAIGNS = ("utm_source=newsletter&utm_medium=email", "utm_source=feed", "ref=mastodon", "fbclid=IwAR0x")


class Page(HTMLParser):
    """Links, assets and GET forms of an HTML page."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.links: list[str] = []
        self.assets: list[str] = []
        self.forms: list[dict] = []
        self.text: list[str] = []
        self._form: dict | None = None
        self._select: list | None = None

    def handle_starttag(self, tag, attrs):
        d = {k: (v or "") for k, v in attrs}
        if tag == "a" and d.get("href"):
            self.links.append(d["href"])
        elif tag == "link" and d.get("href") and "stylesheet" in d.get("rel", ""):
            self.assets.append(d["href"])
        elif tag in ("script", "img") and d.get("src"):
            self.assets.append(d["src"])
        elif tag == "form":
            self._form = {"action": d.get("action", ""), "method": d.get("method", "get").lower(), "fields": []}
            self.forms.append(self._form)
        elif tag == "input" and self._form is not None and d.get("name"):
            kind = d.get("type", "text").lower()
            if kind in ("text", "search", "hidden", "checkbox", "radio", "submit"):
                self._form["fields"].append((kind, d["name"], d.get("value", ""), "checked" in d))
        elif tag == "select" and self._form is not None and d.get("name"):
            self._select = [d["name"], []]
            self._form["fields"].append(("select", d["name"], self._select[1], False))
        elif tag == "option" and self._select is not None:
            self._select[1].append(d.get("value", ""))

    def handle_endtag(self, tag):
        if tag == "form":
            self._form = None
        elif tag == "select":
            self._select = None

    def handle_data(self, data):
        self.text.append(data)


class Client:
    def __init__(self, connect: str, port: int, seed: int, budget: int, seconds: float) -> None:
        if not ipaddress.ip_address(connect).is_loopback:
            raise SystemExit(f"--connect {connect}: only loopback addresses (127.0.0.0/8, ::1) are allowed")
        self.connect, self.port = connect, port
        self.rnd = random.Random(seed)
        self.left, self.deadline = budget, time.monotonic() + seconds
        self.conns: dict[int, http.client.HTTPConnection] = {}  #: one keep-alive connection per port
        self.statuses: dict[int, int] = {}
        self.spellings: list[tuple[re.Pattern, str]] = []  #: (path and query, its other spelling)
        self.noops: list[str] = []  #: NAME=VALUE the app ignores, or naming its defaults
        self.known: list[str] = []  #: HTML pages seen (the crawler's, then the sessions')
        self.known_set: set[str] = set()

    def alive(self) -> bool:
        return self.left > 0 and time.monotonic() < self.deadline

    def get(self, url: str, agent: str, referer: str | None = None) -> tuple[int, str, bytes]:
        self.left -= 1
        u = urlsplit(url)
        target = urlunsplit(("", "", u.path or "/", u.query, ""))
        headers = {"Host": u.netloc, "User-Agent": agent, "Accept": "text/html,*/*"}
        if referer:
            headers["Referer"] = referer
        port = u.port or self.port
        for attempt in (1, 2):
            try:
                if port not in self.conns:
                    self.conns[port] = http.client.HTTPConnection(self.connect, port, timeout=30)
                self.conns[port].request("GET", target, headers=headers)
                r = self.conns[port].getresponse()
                body = r.read(3_000_000)
                self.statuses[r.status] = self.statuses.get(r.status, 0) + 1
                return r.status, r.getheader("Location") or r.getheader("Content-Type") or "", body
            except (OSError, http.client.HTTPException):
                if port in self.conns:
                    self.conns.pop(port).close()
                if attempt == 2:
                    self.statuses[0] = self.statuses.get(0, 0) + 1
        return 0, "", b""


def parse(body: bytes) -> Page:
    p = Page()
    try:
        p.feed(body.decode("utf-8", "replace"))
    except Exception:  # html.parser is lenient; a page it cannot read has no links
        pass
    return p


def same_site(url: str, netloc: str) -> str | None:
    u = urlsplit(url)
    if u.scheme not in ("http", "https") or u.netloc != netloc:
        return None
    return urlunsplit((u.scheme, u.netloc, u.path or "/", u.query, ""))


def crawl(c: Client, base: str, budget: int) -> list[str]:
    """Breadth-first from the front page; returns the HTML pages seen (the users' bookmarks)."""
    netloc = urlsplit(base).netloc
    queue, seen, pages = deque([base + "/"]), {base + "/"}, []
    stop = c.left - budget
    while queue and c.alive() and c.left > stop:
        url = queue.popleft()
        status, ctype, body = c.get(url, CRAWLER_AGENT)
        if status in (301, 302, 303, 307, 308) and ctype:
            nxt = same_site(urljoin(url, ctype), netloc)
            if nxt and nxt not in seen:
                seen.add(nxt)
                queue.append(nxt)
            continue
        if status != 200 or "html" not in ctype:
            continue
        pages.append(url)
        for href in parse(body).links:
            nxt = same_site(urljoin(url, href), netloc)
            if nxt and nxt not in seen:
                seen.add(nxt)
                queue.append(nxt)
    return pages


def section(url: str) -> tuple:
    """A URL's part of the site: its first path segment, a ``Namespace:`` prefix of its last
    segment, the names of its parameters."""
    u = urlsplit(url)
    parts = [p for p in u.path.split("/") if p]
    ns = parts[-1].split(":", 1)[0] if parts and ":" in parts[-1] else ""
    names = tuple(sorted({kv.split("=", 1)[0] for kv in u.query.split("&") if kv}))
    return (parts[0] if parts else "", ns, names)


def learn(c: Client, url: str) -> None:
    if url not in c.known_set:
        c.known_set.add(url)
        c.known.append(url)


def respell(c: Client, url: str, share: float) -> str:
    """``url`` as some clients write it: another spelling of --spelling, --noop parameters and
    campaign parameters, each with probability ``share``."""
    u = urlsplit(url)
    path, query = u.path or "/", u.query
    target = path + ("?" + query if query else "")
    forms = [(rx, t) for rx, t in c.spellings if rx.fullmatch(target)]
    if forms and c.rnd.random() < 2 * share:
        rx, t = c.rnd.choice(forms)
        path, _, query = rx.fullmatch(target).expand(t).partition("?")
    if c.noops and c.rnd.random() < share:
        extra = c.rnd.choice(c.noops)
        query = f"{query}&{extra}" if query else extra
    if c.rnd.random() < share / 2:
        extra = c.rnd.choice(CAMPAIGNS)
        query = f"{query}&{extra}" if query else extra
    return urlunsplit((u.scheme, u.netloc, path, query, ""))


def entry(c: Client, base: str, known: list[str], origins: list[str]) -> str:
    """Where a user's session starts: the front page or a known page (its section drawn first), as
    outside links write it."""
    url = base + "/"
    if known and c.rnd.random() < 0.7:
        parts: dict[tuple, list[str]] = {}
        for k in known:
            parts.setdefault(section(k), []).append(k)
        url = c.rnd.choice(parts[c.rnd.choice(list(parts))])
    u = urlsplit(url)
    host, path, query = u.netloc, u.path, u.query
    if origins and c.rnd.random() < 0.2:
        host = c.rnd.choice(origins)
    if path.count("/") > 1 and c.rnd.random() < 0.08:
        path = path.rsplit("/", 1)[0] + "/"  # a person shortening the URL to its folder
    elif path.endswith(".html") and c.rnd.random() < 0.2:
        path = path[:-5]  # "pretty" links to a page without its extension
    if c.rnd.random() < 0.12:
        query = f"{query}&{c.rnd.choice(CAMPAIGNS)}" if query else c.rnd.choice(CAMPAIGNS)
    return respell(c, urlunsplit((u.scheme, host, path, query, "")), 0.15)


def fill(c: Client, form: dict, words: list[str]) -> list[tuple[str, str]]:
    """A form's GET parameters as a person fills them: a word in text boxes, an option of each select."""
    out: list[tuple[str, str]] = []
    radios: dict[str, list[str]] = {}
    for kind, name, value, checked in form["fields"]:
        if kind in ("text", "search"):
            out.append((name, c.rnd.choice(words) if words and (not value or c.rnd.random() < 0.7) else value))
        elif kind == "hidden" or (kind == "checkbox" and (checked or c.rnd.random() < 0.3)):
            out.append((name, value or "on"))
        elif kind == "radio":
            radios.setdefault(name, []).append(value)
        elif kind == "select" and value:
            out.append((name, c.rnd.choice(value)))
    out += [(n, c.rnd.choice(vs)) for n, vs in radios.items()]
    return out


def session(c: Client, base: str, known: list[str], origins: list[str]) -> None:
    agent = c.rnd.choice(AGENTS)
    url, referer = entry(c, base, known, origins), None
    clean: str | None = None  #: the URL as the site linked it (not respelled): the one learned
    loaded: set[str] = set()
    for _ in range(c.rnd.randint(3, 12)):
        if not c.alive():
            return
        status, ctype, body = c.get(url, agent, referer)
        if status in (301, 302, 303, 307, 308) and ctype:
            url, clean = urljoin(url, ctype), None
            continue
        if status != 200 or "html" not in ctype:
            return
        page = parse(body)
        if clean:
            learn(c, clean)
        netloc = urlsplit(url).netloc
        for asset in page.assets:
            a = same_site(urljoin(url, asset), netloc)
            if a and a not in loaded and c.alive():
                loaded.add(a)
                c.get(a, agent, url)
        forms = [f for f in page.forms if f["method"] == "get" and f["fields"]]
        words = [w for w in " ".join(page.text).split() if w.isalpha() and len(w) > 3]
        nxt = clean = None
        if forms and c.rnd.random() < 0.2:
            f = c.rnd.choice(forms)
            target = same_site(urljoin(url, f["action"] or url), netloc)
            if target:
                nxt = target.split("?", 1)[0] + "?" + urlencode(fill(c, f, words))
        if nxt is None:
            links = [x for x in (same_site(urljoin(url, h), netloc) for h in page.links) if x]
            if not links:
                return
            clean = c.rnd.choice(links)
            nxt = respell(c, clean, 0.1)
        url, referer = nxt, url


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--base", required=True, help="the site's base URL, e.g. http://trac.quality.test:18081")
    ap.add_argument("--connect", default="127.0.0.1", help="loopback address the requests go to")
    ap.add_argument("--alias", help="another host name of the site (www.), used by some sessions")
    ap.add_argument("--origin", action="append", default=[],
                    help="another origin of the site (host:port, e.g. www. on its second port), used by some sessions")
    ap.add_argument("--spelling", action="append", default=[], metavar="'REGEX TEMPLATE'",
                    help="another spelling of the URLs whose path and query match REGEX")
    ap.add_argument("--noop", action="append", default=[], metavar="NAME=VALUE",
                    help="a parameter the app ignores (or naming its default), added to some URLs")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--requests", type=int, default=1500, help="at most this many requests")
    ap.add_argument("--seconds", type=float, default=900, help="and at most this long")
    ap.add_argument("--crawler-share", type=float, default=0.4, help="share of the requests the crawler makes")
    a = ap.parse_args(argv)
    base = a.base.rstrip("/")
    port = urlsplit(base).port or 80
    c = Client(a.connect, port, a.seed, a.requests, a.seconds)
    c.spellings = [(re.compile(rx), t) for rx, t in (x.split(" ", 1) for x in a.spelling)]
    c.noops = list(a.noop)
    origins = [o.split("://", 1)[-1].rstrip("/") for o in a.origin]
    if a.alias:
        origins.insert(0, a.alias + (f":{urlsplit(base).port}" if urlsplit(base).port else ""))
    t0 = time.monotonic()
    for page in crawl(c, base, int(a.requests * a.crawler_share)):
        learn(c, page)
    known = c.known
    sessions = 0
    while c.alive():
        session(c, base, known, origins)
        sessions += 1
    sent = a.requests - c.left
    print(f"traffic: {sent} requests ({len(known)} pages crawled, {sessions} user sessions) in "
          f"{time.monotonic() - t0:.0f}s; statuses {dict(sorted(c.statuses.items()))}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
