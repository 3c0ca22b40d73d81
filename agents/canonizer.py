"""The canonizer agent: frontier URLs in, canonical URLs with a seen flag out (issue 5).

Every worker follows the whole compacted rules topic (stream/rulesview.py) into its rule book,
so a new rule-set version applies to the next frontier message, without a restart.  Per frontier
message: decode (junk → rejects topic), canonicalize each URL (normalization, then the site's
rules), look the canonical URLs' signatures up in the partition's seen set, send one
``CanonicalURL`` per URL and wait for the broker, write the new signatures to the seen changelog,
then commit them locally with the message's offset (state/seen.py).  A crash between the sends
and the commit re-sends the same answers; a committed message is never redone.  A partition whose
local set is behind (it moved from another worker) is rebuilt from the seen changelog first.
"""

from __future__ import annotations

import asyncio
import logging
import time

from dustbuster.core.errors import ParseError
from dustbuster.state.seen import SeenStores, signature
from dustbuster.stream.changelog import SeenChangelog
from dustbuster.agents.health import Health
from dustbuster.stream.records import CanonicalURL, Reject, decode_frontier

log = logging.getLogger(__name__)


def register(app, settings, topics, book, follower, metrics) -> None:
    seen = SeenStores(settings.data_dir / "seen")
    changelog = SeenChangelog(settings.kafka_bootstrap, settings.seen_changelog_topic)
    stats = app.dust_canonizer_stats = {"messages": 0, "urls": 0, "duplicates": 0, "rejected": 0,
                                        "replayed": 0, "rebuilds": 0}

    @app.task
    async def follow_rules() -> None:
        while True:
            try:
                await follower.start()
                break
            except Exception as exc:  # the rules topic not there yet, a broker hiccup: retry
                log.warning("cannot follow the rules topic yet: %s", exc)
                await asyncio.sleep(2.0)
        try:
            await follower.run()
        finally:
            await follower.stop()

    async def ensure_fresh(store, partition: int, topic: str, offset: int) -> None:
        applied = store.applied(topic)
        if offset <= applied + 1:
            return
        t0 = time.perf_counter()
        img_applied, sigs = await changelog.read(partition)
        if img_applied < applied:
            log.warning("frontier partition %s: seen changelog (%s) behind local (%s); keeping local",
                        partition, img_applied, applied)
            return
        n = store.rebuild(sigs, topic, img_applied)
        stats["rebuilds"] += 1
        log.warning("frontier partition %s: rebuilt %s seen signatures from the changelog in %.1fs",
                    partition, n, time.perf_counter() - t0)

    async def reject(msg, reason: str, detail: str, line: str, site: str | None) -> None:
        stats["rejected"] += 1
        metrics.rejects.labels(reason).inc()
        await topics.rejects.send(key=site.encode() if site else None, value=Reject(
            reason=reason, detail=detail, site=site, line=line[:1000], topic=msg.topic,
            partition=msg.partition, offset=msg.offset))

    health = getattr(app, "dust_health", None) or Health()

    @app.agent(topics.frontier, name="dust-canonizer")
    @health.agent("dust-canonizer")
    async def canonizer(stream):
        async for event in health.track("dust-canonizer", stream.events()):
            msg = event.message
            stats["messages"] += 1
            waited = 0
            while not follower.ready.is_set():  # never canonicalize with rules not read yet
                await asyncio.sleep(0.1)
                waited += 1
                if waited % 300 == 0:
                    log.warning("frontier waits: the rules topic %s is not read to its end yet (%ss)",
                                settings.rules_topic, waited // 10)
            store = seen.get(msg.partition)
            await ensure_fresh(store, msg.partition, msg.topic, msg.offset)
            if msg.offset <= store.applied(msg.topic):
                stats["replayed"] += 1
                continue
            try:
                site, urls, bad = decode_frontier(msg.key, event.value, settings.max_lines_per_message)
            except ParseError as exc:
                raw = event.value if isinstance(event.value, bytes) else b""
                await reject(msg, exc.reason, exc.detail, raw[:1000].decode("utf-8", "replace"), None)
                store.commit((), msg.topic, msg.offset)
                continue
            for u, reason in bad:
                await reject(msg, reason, "frontier URL", u, site)
            results = []
            for u in urls:  # one URL the canonicalizer cannot handle is rejected alone, never the message
                try:
                    results.append(book.canonize(u, site))
                except Exception as exc:  # noqa: BLE001 - a bug must cost one URL, not the agent
                    log.exception("canonicalizing %r failed", u[:200])
                    await reject(msg, "canonicalize_failed", f"{type(exc).__name__}: {str(exc)[:200]}", u, site)
            sigs = [signature(r.canonical) for r in results]
            known = store.seen_many(sigs)
            new: list[bytes] = []
            batch: set[bytes] = set()
            futs = []
            for r, sig, was in zip(results, sigs, known):
                dup = was or sig in batch
                if not dup:
                    batch.add(sig)
                    new.append(sig)
                out_site = r.site or site
                futs.append(await topics.canonical.send(
                    key=(out_site or "").encode() or None,
                    value=CanonicalURL(url=r.url, canonical=r.canonical, site=out_site, rules=list(r.rules),
                                       version=r.version, seen=dup, signature=sig.hex(), normalized=r.normalized)))
            if futs:
                await asyncio.gather(*futs)
            await changelog.write(msg.partition, new, msg.offset)
            store.commit(new, msg.topic, msg.offset)
            dups = len(results) - len(new)
            stats["urls"] += len(results)
            stats["duplicates"] += dups
            metrics.canonizations.labels("frontier").inc(len(results))
            metrics.duplicates_skipped.inc(dups)
