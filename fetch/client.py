"""The validator's HTTP fetcher (aiohttp): safe, polite, and counted.

Policy (every refusal and failure is counted by reason in ``Fetcher.counts``):

* only URLs of the site's configured origins (``scheme://host[:port]``) are fetched
  (``refused_off_site``); redirects are followed by hand, only within those origins
  (``refused_redirect_off_site``), at most ``max_redirects`` (``redirect_loop``);
* host names are resolved by a resolver that refuses loopback, private, link-local, multicast,
  reserved and unspecified addresses (``refused_private_address``) unless the policy allows them
  (tests allow loopback explicitly); the check is made on the addresses actually connected to,
  so DNS rebinding cannot slip past it.  ``resolve`` pins names to addresses (like curl --resolve);
* bodies over ``max_bytes`` are cut and the fetch fails (``too_large``); a total ``timeout_s`` per
  request (``timeout``); transient failures (connection errors, timeouts, 5xx, 429) are retried
  ``retries`` times with exponential backoff; 4xx fail at once (``status_404`` …);
* per-host concurrency limit; a minimum interval between requests (``rate_per_s``) and a budget of
  fetches per hour (``fetch_budget``) for the whole site, all its origins together
  (:class:`~dustbuster.fetch.pacer.SitePacer`: the validator keeps one per site across its rounds);
* robots.txt honoured by default (``refused_robots``), fetched once per origin, with our
  User-Agent; a robots.txt that is missing (4xx) allows everything, one that cannot be reached
  (5xx, a network error, a timeout) disallows everything for the round (RFC 9309 §2.3.1.3-4);
* no cookies: every page is fetched as a first visit, as a crawler with cookies off sees it (ours,
  beyond the papers).  A session would make a page depend on the URLs fetched before it: Trac keeps
  a visitor's ``daysback`` in its session, so after ``/timeline?daysback=90`` the same
  ``/timeline?from=…`` URL answered 124,510 bytes instead of 18,732, and `dustbuster truth` saw two
  contents where there is one page (the quality run of 2026-11-27).

Every page answered (2xx, or an error status with a body) comes with its identity evidence
(:class:`dustbuster.core.validation.identity.PageIdentity`: status, redirect chain, final URL, declared
canonical from the document or the ``Link`` header, title, robots meta, sketch, the page's same-origin
links: dustbuster.core.urls.pagelinks) in ``Fetched.identity``.
"""

from __future__ import annotations

import asyncio
import ipaddress
import logging
import re
import socket
import urllib.robotparser
from collections import Counter
from dataclasses import dataclass, field
from typing import Mapping, cast

import aiohttp
from aiohttp.abc import AbstractResolver, ResolveResult
from yarl import URL

from dustbuster.core.validation.identity import page_identity
from dustbuster.core.validation.siteconfig import SiteConfig
from dustbuster.core.validation.sketch import site_hosts_pattern, sketch
from dustbuster.core.validation.validate import Fetched

from .pacer import SitePacer

log = logging.getLogger(__name__)

USER_AGENT = "dustbuster/0.1 (DUST rule validator; +https://github.com/dustbuster)"


@dataclass(frozen=True)
class FetchPolicy:
    origins: frozenset[str]
    allow_private: bool = False
    resolve: Mapping[str, str] = field(default_factory=dict)
    max_bytes: int = 2_000_000
    timeout_s: float = 10.0
    retries: int = 2
    backoff_s: float = 0.25
    per_host_concurrency: int = 4
    rate_per_s: float = 10.0
    max_redirects: int = 5
    robots: bool = True
    user_agent: str = USER_AGENT
    #: after this many fetches in a row of an origin end in a connection failure or a timeout (after
    #: their retries), the origin counts as down for the rest of the round: its fetches fail at once
    #: with reason ``site_down`` (an outage mid-round must not cost hours of retries)
    breaker_after: int = 5

    @staticmethod
    def origin_of(url: str | URL) -> str:
        u = URL(str(url)) if not isinstance(url, URL) else url
        port = "" if u.port is None or u.port == {"http": 80, "https": 443}.get(u.scheme or "") else f":{u.port}"
        return f"{(u.scheme or '').lower()}://{(u.host or '').lower()}{port}"


def fetch_policy(conf: SiteConfig) -> FetchPolicy:
    """The fetch policy of a configured site (each origin reduced to scheme://host[:port]);
    ValueError or TypeError for an origin that is not a URL."""
    return FetchPolicy(origins=frozenset(FetchPolicy.origin_of(o) for o in conf.origins),
                       allow_private=conf.allow_private, resolve=dict(conf.resolve), robots=conf.robots,
                       rate_per_s=conf.rate_per_s, per_host_concurrency=conf.concurrency)


def _disallow_all() -> urllib.robotparser.RobotFileParser:
    rp = urllib.robotparser.RobotFileParser()
    rp.disallow_all = True  # type: ignore[attr-defined]  # set by RobotFileParser.__init__, not in typeshed
    return rp


class Refused(Exception):
    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


def _forbidden(ip: str) -> bool:
    a = ipaddress.ip_address(ip)
    if isinstance(a, ipaddress.IPv6Address) and a.ipv4_mapped:
        a = a.ipv4_mapped
    return a.is_private or a.is_loopback or a.is_link_local or a.is_multicast or a.is_reserved or a.is_unspecified


class PolicyResolver(AbstractResolver):
    def __init__(self, policy: FetchPolicy) -> None:
        self.policy = policy

    async def resolve(self, host: str, port: int = 0, family: socket.AddressFamily = socket.AF_INET) -> list[ResolveResult]:
        pinned = self.policy.resolve.get(host.lower())
        if pinned:
            addrs = [pinned]
        else:
            infos = await asyncio.get_running_loop().getaddrinfo(host, port, family=family, type=socket.SOCK_STREAM)
            addrs = list(dict.fromkeys(cast(str, i[4][0]) for i in infos))  # an IPv4 or IPv6 sockaddr: (address, port, ...)
        ok = [a for a in addrs if self.policy.allow_private or not _forbidden(a)]
        if not ok:
            raise Refused("refused_private_address")
        return [ResolveResult(hostname=host, host=a, port=port, family=socket.AF_INET6 if ":" in a else socket.AF_INET,
                              proto=0, flags=socket.AI_NUMERICHOST) for a in ok]

    async def close(self) -> None:
        pass


class Fetcher:
    """Fetches under ``policy``, paced by ``pacer`` (the site's, shared across rounds; by default
    one of this fetcher's own at the policy's rate, without a budget)."""

    def __init__(self, policy: FetchPolicy, pacer: SitePacer | None = None) -> None:
        self.policy = policy
        self.pacer = pacer if pacer is not None else SitePacer(policy.rate_per_s)
        self.counts: Counter = Counter()
        self._session: aiohttp.ClientSession | None = None
        self._sems: dict[str, asyncio.Semaphore] = {}
        self._robots: dict[str, urllib.robotparser.RobotFileParser | None] = {}
        self._failures: dict[str, int] = {}  #: consecutive connection failures/timeouts per origin
        #: the site's host names, one word in every page's sketch (a page that prints its own host is
        #: the same page under each alias: core/validation/sketch.py site_hosts_pattern)
        names = {URL(o).host or "" for o in policy.origins}
        self.hosts = site_hosts_pattern(sorted(names)) if len(names) > 1 else None

    async def __aenter__(self) -> "Fetcher":
        return self

    async def __aexit__(self, *exc) -> None:
        await self.close()

    async def close(self) -> None:
        if self._session is not None:
            await self._session.close()
            self._session = None

    def _sess(self) -> aiohttp.ClientSession:
        if self._session is None:
            conn = aiohttp.TCPConnector(resolver=PolicyResolver(self.policy), limit=32, ttl_dns_cache=60)
            self._session = aiohttp.ClientSession(connector=conn, headers={"User-Agent": self.policy.user_agent},
                                                  timeout=aiohttp.ClientTimeout(total=self.policy.timeout_s),
                                                  cookie_jar=aiohttp.DummyCookieJar())  # no session: module doc
        return self._session

    async def _polite(self) -> None:
        """The site's next slot (its rate, all origins together); ``fetch_budget`` when the hour's
        fetches are spent."""
        if not await self.pacer.take():
            raise Refused("fetch_budget")

    async def _allowed_by_robots(self, url: URL) -> bool:
        if not self.policy.robots:
            return True
        origin = self.policy.origin_of(url)
        if origin not in self._robots:
            rp: urllib.robotparser.RobotFileParser | None = None
            try:
                status, body, _, _ = await self._get(URL(origin + "/robots.txt"), count=False)
                if status == 200:
                    rp = urllib.robotparser.RobotFileParser()
                    rp.parse(body.decode("utf-8", "replace").splitlines())
                elif status in (401, 403) or status >= 500:  # 5xx: unreachable, complete disallow (RFC 9309 §2.3.1.4)
                    rp = _disallow_all()
            except Refused as exc:
                if exc.reason == "fetch_budget":
                    raise  # not fetched: asked again once the budget allows (never taken as "no robots.txt")
                log.info("robots.txt of %s unreachable (%s): nothing of it is fetched this round (RFC 9309 §2.3.1.4)",
                         origin, exc.reason)
                rp = _disallow_all()
            except Exception as exc:  # noqa: BLE001 - a network error: unreachable, complete disallow (RFC 9309 §2.3.1.4)
                log.info("robots.txt of %s unreachable (%s: %s): nothing of it is fetched this round", origin,
                         type(exc).__name__, str(exc)[:200])
                rp = _disallow_all()
            self._robots[origin] = rp
        rp = self._robots[origin]
        return rp is None or rp.can_fetch(self.policy.user_agent, str(url))

    async def _get(self, url: URL, count: bool = True) -> tuple[int, bytes, str, str]:
        """One request, no redirects followed; the body read up to max_bytes (+1 to detect more):
        (status, body, Location for a redirect else Content-Type, the Link header)."""
        origin = self.policy.origin_of(url)
        sem = self._sems.setdefault(origin, asyncio.Semaphore(self.policy.per_host_concurrency))
        async with sem:
            await self._polite()
            async with self._sess().get(url, allow_redirects=False) as resp:
                body = bytearray()
                async for chunk in resp.content.iter_chunked(65536):
                    body.extend(chunk)
                    if len(body) > self.policy.max_bytes:
                        raise Refused("too_large")
                link = ", ".join(resp.headers.getall("Link", []))
                if resp.status in (301, 302, 303, 307, 308):
                    return resp.status, bytes(body), resp.headers.get("Location", ""), link
                return resp.status, bytes(body), resp.headers.get("Content-Type", ""), link

    def _address_ok(self, u: URL) -> bool:
        """IP-literal hosts never reach the resolver: police them here."""
        try:
            ipaddress.ip_address((u.host or "").strip("[]"))
        except ValueError:
            return True
        return self.policy.allow_private or not _forbidden((u.host or "").strip("[]"))

    async def fetch(self, url: str) -> Fetched:
        res = await self._fetch(url)
        self.counts["ok" if res.ok else res.reason] += 1
        return res

    __call__ = fetch

    async def _fetch(self, url: str) -> Fetched:
        try:
            u = URL(url)
        except (ValueError, TypeError):
            return Fetched(False, reason="bad_url")
        if u.scheme not in ("http", "https") or not u.host:
            return Fetched(False, reason="refused_scheme")
        if self.policy.origin_of(u) not in self.policy.origins:
            return Fetched(False, reason="refused_off_site")
        if not self._address_ok(u):
            return Fetched(False, reason="refused_private_address")
        if self._failures.get(self.policy.origin_of(u), 0) >= self.policy.breaker_after > 0:
            return Fetched(False, reason="site_down")
        seen: set[str] = set()
        chain: list[str] = []
        for hop in range(self.policy.max_redirects + 1):
            if str(u) in seen:
                return Fetched(False, reason="redirect_loop")
            seen.add(str(u))
            try:
                if not await self._allowed_by_robots(u):
                    return Fetched(False, reason="refused_robots")
                status, body, extra, link = await self._with_retries(u)
            except Refused as r:
                return Fetched(False, reason=r.reason)
            if status in (301, 302, 303, 307, 308):
                if not extra:
                    return Fetched(False, status=status, reason="redirect_without_location")
                nxt = u.join(URL(extra))
                if self.policy.origin_of(nxt) not in self.policy.origins:
                    return Fetched(False, status=status, reason="refused_redirect_off_site")
                if not self._address_ok(nxt):
                    return Fetched(False, status=status, reason="refused_private_address")
                chain.append(str(u))
                u = nxt
                continue
            sk, ident = await _identify(url, str(u), chain, status, body, extra, link, self.hosts)
            if status >= 400:
                return Fetched(False, status=status, reason=f"status_{status}", redirected=hop > 0, identity=ident)
            return Fetched(True, sk, status, redirected=hop > 0, identity=ident)
        return Fetched(False, reason="redirect_loop")

    async def _with_retries(self, u: URL) -> tuple[int, bytes, str, str]:
        origin = self.policy.origin_of(u)
        try:
            got = await self._retrying(u)
        except Refused as r:
            if r.reason in ("timeout", "connection_failed"):
                n = self._failures[origin] = self._failures.get(origin, 0) + 1
                if n == self.policy.breaker_after:
                    log.warning("%s: %s fetches in a row failed (%s): counted as down for this round", origin, n, r.reason)
            raise
        self._failures[origin] = 0
        return got

    async def _retrying(self, u: URL) -> tuple[int, bytes, str, str]:
        delay = self.policy.backoff_s
        for attempt in range(self.policy.retries + 1):
            last = attempt == self.policy.retries
            try:
                status, body, extra, link = await self._get(u)
            except Refused:
                raise
            except (asyncio.TimeoutError, TimeoutError):
                if last:
                    raise Refused("timeout") from None
            except aiohttp.ClientConnectorError as exc:
                if isinstance(exc.__cause__, Refused) or isinstance(getattr(exc, "os_error", None), Refused):
                    raise Refused("refused_private_address") from None
                if last:
                    raise Refused("connection_failed") from None
            except aiohttp.ClientError:
                if last:
                    raise Refused("http_error") from None
            else:
                if status >= 500 or status == 429:
                    if last:
                        return status, body, extra, link
                else:
                    return status, body, extra, link
            await asyncio.sleep(delay)
            delay *= 2
        raise Refused("connection_failed")


#: bodies at least this long are sketched and parsed off the event loop (a thread)
OFF_LOOP_BODY = 32 * 1024


async def _identify(url: str, final: str, chain: list[str], status: int, body: bytes, content_type: str,
                    link: str, hosts: "re.Pattern[str] | None" = None) -> tuple:
    """The page's sketch (the site's ``hosts`` one word in it) and identity (core/validation/identity.py); a
    large body is parsed in a thread, so the HTML parser and the shingling never hold the event loop for long."""
    def work() -> tuple:
        sk = sketch(body, content_type, hosts=hosts)
        return sk, page_identity(url, final, chain, status, body, content_type, link, sk)

    return await asyncio.to_thread(work) if len(body) >= OFF_LOOP_BODY else work()
