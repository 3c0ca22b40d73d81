"""The validator's soft-error filter around a fetch function: the probes and signatures of
:mod:`dustbuster.core.validation.softerror` (Bar-Yossef et al., WWW 2004), made as pages are fetched.

A page that matches its site's error signature comes back as a failed fetch with reason
``soft_error`` (its identity kept), so Figure 3 never counts it as a positive; the probes are
fetches of their own, counted in ``probes`` (and by the fetcher, like any fetch)."""

from __future__ import annotations

import asyncio
import logging
import random
from typing import Awaitable, Callable, Sequence, cast

from dustbuster.core.validation.identity import PageIdentity
from dustbuster.core.validation.softerror import (MAX_SCOPE_PROBES, ErrorSignature, accept_scope_probes, alike,
                                       is_soft_error, path_probe, scope_key, value_dropped, value_probe)
from dustbuster.core.validation.validate import Fetched

log = logging.getLogger(__name__)

FetchFn = Callable[[str], Awaitable[Fetched]]


class SoftErrorAware:
    """Pages that look like the site's answer to a URL that cannot exist are failures (``soft_error``)."""

    def __init__(self, fetch: FetchFn, threshold: float = 1.0, test_urls: Sequence[str] = (), seed: int = 0,
                 counts=None) -> None:
        self.fetch = fetch
        self.threshold = threshold  #: fraction of min-hashes that must agree (DustParams.sketch_threshold)
        self.rnd = random.Random(seed)
        self.counts = counts  #: the fetcher's counter (``soft_error`` is added to it), or None
        self.origin_sigs: dict[str, list[ErrorSignature]] = {}
        self.scope_sigs: dict[str, ErrorSignature | None] = {}
        self.probes = 0  #: probe fetches made
        self.soft_errors = 0  #: pages found to be soft errors
        self.signatures_found = 0
        self._sources: dict[str, list[str]] = {}
        self._scope_probes = 0  #: value probes made
        self._lock: asyncio.Lock | None = None  #: one probing at a time (concurrent callers: `truth`)
        for u in test_urls:
            got = self._sources.setdefault(scope_key(u), [])
            if len(got) < 2 and u not in got and value_probe(u, random.Random(0)) is not None:
                got.append(u)

    async def _probe(self, url: str) -> Fetched:
        self.probes += 1
        return await self.fetch(url)

    async def __call__(self, url: str) -> Fetched:
        return await self.check(url, await self.fetch(url))

    async def check(self, url: str, got: Fetched) -> Fetched:
        """``got`` (the fetch of ``url``), or a ``soft_error`` failure when it matches the site's signatures."""
        if not got.ok:
            return got
        if self._lock is None:
            self._lock = asyncio.Lock()
        async with self._lock:
            sigs = await self._signatures(url, got)
        if is_soft_error(got.identity, sigs, self.threshold) or self._sketch_match(got, sigs):
            self.soft_errors += 1
            if self.counts is not None:
                self.counts["soft_error"] += 1
            return Fetched(False, None, got.status, "soft_error", got.redirected, got.identity)
        return got

    def _sketch_match(self, got: Fetched, sigs: list[ErrorSignature]) -> bool:
        """A fetch function without identities: the content sketch alone (the old path probe's check)."""
        if got.identity is not None or got.sketch is None:
            return False
        ident = PageIdentity("", sketch=got.sketch)
        return is_soft_error(ident, [ErrorSignature("", None, s.sketch) for s in sigs], self.threshold)

    async def _signatures(self, url: str, got: Fetched) -> list[ErrorSignature]:
        head = url.split("://", 1)
        origin = head[0] + "://" + head[1].split("/", 1)[0].split("?", 1)[0] if len(head) == 2 else url
        if origin not in self.origin_sigs:
            probe = await self._probe(path_probe(origin, self.rnd))
            self.origin_sigs[origin] = [self._sig(probe)] if probe.ok else []
        sigs = list(self.origin_sigs[origin])
        key = scope_key(url)
        if key not in self.scope_sigs:
            self.scope_sigs[key] = await self._scope_signature(origin, key, url, got)
        if (scope_sig := self.scope_sigs[key]) is not None:
            sigs.append(scope_sig)
        return sigs

    @staticmethod
    def _sig(f: Fetched) -> ErrorSignature:
        return ErrorSignature.of(f.identity) if f.identity is not None else ErrorSignature("", None, f.sketch)

    async def _scope_signature(self, origin: str, key: str, url: str, got: Fetched) -> ErrorSignature | None:
        sources = list(dict.fromkeys([url] + self._sources.get(key, [])))[:2]
        if value_probe(url, self.rnd) is None or self._scope_probes + len(sources) + 1 > MAX_SCOPE_PROBES:
            return None
        self._scope_probes += len(sources)
        probes = []
        for src in sources:
            p = await self._probe(value_probe(src, self.rnd) or src)
            if p.ok and p.identity is not None:
                probes.append(p.identity)
        idents = [got.identity] if got.identity is not None else []
        dropped = None
        if idents and probes and alike(probes[0], idents[0]) and value_dropped(url):
            bare = await self._probe(cast(str, value_dropped(url)))  # an ignored parameter, or is the URL itself an error?
            dropped = bare.identity if bare.ok else None
        sig = accept_scope_probes(idents, probes[:2], dropped) if len(sources) == len(probes) else None
        if sig is not None:
            self.signatures_found += 1
            log.debug("soft-error signature for %s: title %r", key, sig.title)
        return sig

    def stats(self) -> dict:
        return {"probes": self.probes, "soft_errors": self.soft_errors, "signatures": self.signatures_found
                + sum(len(s) for s in self.origin_sigs.values())}


__all__ = ["SoftErrorAware"]
