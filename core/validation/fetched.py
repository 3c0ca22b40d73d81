"""One validation round's fetches and the comparison of two fetched pages (Figure 3's "similar",
with the page identity of :mod:`dustbuster.core.validation.identity`).  Split from
:mod:`dustbuster.core.validation.validate`, which re-exports these names."""

from __future__ import annotations

import time

from dataclasses import dataclass, replace
from typing import Awaitable, Callable

from dustbuster.core.validation.identity import PageIdentity
from dustbuster.core.validation.sketch import Sketch, similar


@dataclass(frozen=True, slots=True)
class Fetched:
    ok: bool
    sketch: Sketch | None = None
    status: int | None = None
    reason: str = ""  #: why it failed (timeout, status_404, refused_private_address, too_large, …)
    redirected: bool = False  #: the page was reached through a redirect (the URL itself is not the page)
    identity: PageIdentity | None = None  #: what the page says about itself (None: a fetch function without it)


Fetch = Callable[[str], Awaitable[Fetched]]

#: distinct links of fetched pages a round keeps (:attr:`RoundFetcher.links`; beyond the papers)
MAX_ROUND_LINKS = 20_000
#: two cached pages fetched further apart than this are fetched again, back to back, before their
#: difference counts as Figure 3's negative (RoundFetcher.apart; beyond the papers)
APART_S = 5.0


class RoundFetcher:
    """One validation round's fetches: each URL at most once, counted by outcome.

    Beyond the papers: the same-origin links of every page fetched fine this
    round (:attr:`PageIdentity.links <dustbuster.core.validation.identity.PageIdentity.links>`) are gathered in
    :attr:`links`, distinct, first seen first, at most :data:`MAX_ROUND_LINKS` (``links_over_cap``
    counts the ones left out); a cached page keeps its identity without them, so a round of
    thousands of pages holds at most that many links."""

    def __init__(self, fetch: Fetch) -> None:
        self._fetch = fetch
        self.cache: dict[str, Fetched] = {}
        self.fetches = 0
        self.outcomes: dict[str, int] = {}
        self.declared: dict[str, str] = {}  #: u → the URL its page redirects to or declares canonical
        self.signals: dict[str, int] = {}  #: what the identity signals decided this round, by name
        self.logged_errors: tuple[str, ...] = ()  #: URLs logged only with status >= 400 (core/validation/narrow.py)
        self._links: dict[str, None] = {}
        self.links_over_cap = 0  #: distinct-per-page links not kept: the round already held MAX_ROUND_LINKS
        self.fetched_at: dict[str, float] = {}  #: url → when its page in the cache was fetched (monotonic s)
        self.unstable: set[str] = set()  #: URLs found to be another page at every fetch (:meth:`confirmed`)

    @property
    def links(self) -> tuple[str, ...]:
        """The links of the pages fetched this round, distinct, first seen first (class docstring)."""
        return tuple(self._links)

    def take_links(self, got: Fetched) -> Fetched:
        """Add the links of ``got`` (a page fetched fine) to :attr:`links`; ``got`` without them."""
        ident = got.identity
        if ident is None or not ident.links:
            return got
        if got.ok:
            for link in ident.links:
                if link in self._links:
                    continue
                if len(self._links) >= MAX_ROUND_LINKS:
                    self.links_over_cap += 1
                else:
                    self._links[link] = None
        return replace(got, identity=replace(ident, links=()))

    async def __call__(self, url: str) -> Fetched:
        got = self.cache.get(url)
        if got is None:
            got = self.take_links(await self._fetch(url))
            self.cache[url] = got
            self.fetched_at[url] = time.monotonic()
            self.fetches += 1
            key = "ok" if got.ok else (got.reason or "failed")
            self.outcomes[key] = self.outcomes.get(key, 0) + 1
            c = got.identity.declared() if got.ok and got.identity is not None else ""
            if c:
                self.declared.setdefault(url, c)
        return got

    def apart(self, u: str, v: str) -> bool:
        """The cached pages of ``u`` and ``v`` were fetched more than :data:`APART_S` apart (or
        one of them was never fetched here): a page that changes by the minute may differ from
        itself between the two."""
        a, b = self.fetched_at.get(u), self.fetched_at.get(v)
        return a is None or b is None or abs(a - b) > APART_S

    async def confirmed(self, u: str, v: str, fu: Fetched, fv: Fetched, threshold: float) -> tuple[Fetched, Fetched, str]:
        """Figure 3's negative between u's page ``fu`` and v's ``fv``, checked again (beyond the
        papers), so that it stands only where u's page is itself from one fetch to the next:

        * u is fetched anew; where the two pages were fetched more than :data:`APART_S` apart
          (the round's cache), or u's new page is another, v is fetched anew right after it and
          that pair decides (a page that changes by the minute is not a negative between pages
          fetched minutes apart);
        * u is fetched once more: where it is another page than the last, u is another page at
          (nearly) every fetch — a random page, a clock — and the pair is :data:`UNSTABLE`, no
          evidence either way; so is every later pair with u or v such a URL (:attr:`unstable`).
          A random page that shows one page twice by chance (a small wiki's ``Special:Random``
          draws some articles often) is so caught at most fetches, and once caught stays so.

        Whether a negative counts so never depends on when its pages were fetched: the same log,
        seed and site give the same decisions.  Returns the pages compared last and the outcome."""
        if u in self.unstable or v in self.unstable:
            return fu, fv, UNSTABLE
        apart = self.apart(u, v)
        fu2 = await self.again(u)
        if not fu2.ok:
            return fu, fv, compare_pages(fu, fv, threshold)
        outcome = compare_pages(fu2, fv, threshold)
        if apart or _same_page(fu, fu2, threshold) not in POSITIVE:
            fv = await self.again(v)
            if transient(fv):
                return fu2, fv, fv.reason
            outcome = compare_pages(fu2, fv, threshold)
            if outcome in POSITIVE or outcome in NO_EVIDENCE:
                return fu2, fv, outcome
        fu3 = await self.again(u)
        if fu3.ok and _same_page(fu2, fu3, threshold) not in POSITIVE:
            self.unstable.add(u)
            return fu3, fv, UNSTABLE
        return fu2, fv, outcome

    async def again(self, url: str) -> Fetched:
        """``url`` fetched anew (the cache then holds the new page), counted as a fetch."""
        self.cache.pop(url, None)
        return await self(url)

    def count(self, signal: str) -> None:
        self.signals[signal] = self.signals.get(signal, 0) + 1

    def is_error(self, url: str) -> bool:
        """A URL this round found to be no page (a soft error, a 4xx): it leaves the test list."""
        got = self.cache.get(url)
        return got is not None and not got.ok and (got.reason == "soft_error" or 400 <= (got.status or 0) < 500)


def compare_pages(fu: Fetched, fv: Fetched, threshold: float) -> str:
    """Figure 3's comparison of u's page (fetched fine) with v's: ``similar`` (or ``same_target``)
    or why not.  Beyond the paper (:mod:`dustbuster.core.validation.identity`): u redirecting to the
    URL v ends at is a positive without text; two declared canonicals that differ, or two titles
    that differ after normalisation, are a negative whatever the text says.  v reached only through
    a redirect (u is not) is never a positive: when the page it ends on is u's page by the same
    tests (declared canonicals and titles not differing, the text similar) the pair is no evidence
    either way (``v_redirects_same_page``: a 30x answer decides nothing; skipped,
    so a rule whose outputs all redirect is never valid), else a negative (``v_redirects``).  A u
    and a v that both end on one login wall are skipped so: neither shows the page."""
    if not fv.ok:
        return f"v_failed:{fv.reason}"
    if fv.redirected and not fu.redirected:
        return "v_redirects_same_page" if _same_page(fu, fv, threshold) in POSITIVE else "v_redirects"
    return _same_page(fu, fv, threshold)


def _same_page(fu: Fetched, fv: Fetched, threshold: float) -> str:
    """:func:`compare_pages` of two pages fetched fine, redirects aside."""
    iu, iv = fu.identity, fv.identity
    if iu is not None and iv is not None:
        if iu.redirected and iu.final_url == (iv.final_url or iv.url):
            return "same_target"
        if iu.canonical and iv.canonical and iu.canonical != iv.canonical:
            return "canonical_differs"
        if iu.norm_title and iv.norm_title and iu.norm_title != iv.norm_title:
            return "title_differs"
    if fu.sketch is None or fv.sketch is None or not similar(fu.sketch, fv.sketch, threshold):
        return "not_similar"
    return "similar"


POSITIVE = ("similar", "same_target")
#: outcomes that are no evidence either way: the pair is skipped (counted), as when u is no page
NO_EVIDENCE = ("v_redirects_same_page",)
#: u's page is another one at each fetch (RoundFetcher.confirmed): the pair is skipped too
UNSTABLE = "unstable_page"
#: why a fetch failed for a passing cause: a v page failing so is no evidence (the pair is skipped),
#: while a v that is a 4xx or a soft error where u is a page is Figure 3's negative
TRANSIENT = ("timeout", "connection_failed", "site_down", "http_error", "status_429")


def transient(f: Fetched) -> bool:
    return not f.ok and (f.reason in TRANSIENT or f.reason.startswith("status_5"))


def signal(fetch: RoundFetcher, fu: Fetched, fv: Fetched, outcome: str, threshold: float) -> None:
    """Count what the identity signals decided: a pair whose text agreed but whose title
    or declared canonical did not (a positive turned negative), a positive from a redirect alone."""
    if outcome in ("title_differs", "canonical_differs"):
        if fu.sketch is not None and fv.sketch is not None and similar(fu.sketch, fv.sketch, threshold):
            fetch.count("positive_turned_negative:" + outcome)
        else:
            fetch.count(outcome)
    elif outcome == "same_target":
        fetch.count("positive_by_redirect")
    elif outcome == "v_failed:soft_error":
        fetch.count("v_soft_error")


__all__ = ["APART_S", "MAX_ROUND_LINKS", "NO_EVIDENCE", "UNSTABLE", "POSITIVE", "TRANSIENT", "transient", "Fetch", "Fetched", "RoundFetcher", "compare_pages", "signal"]
