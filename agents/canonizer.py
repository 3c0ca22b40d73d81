"""The canonizer agent: frontier URLs in, canonical URLs with a seen flag out.

Every worker follows the whole compacted rules topic (stream/rulesview.py) into its rule book,
so a new rule-set version applies to the next frontier message, without a restart.  Per frontier
message: decode (junk → rejects topic), canonicalize each URL (normalization, then the site's
rules), look the canonical URLs' signatures up in the partition's seen set, send one
``CanonicalURL`` per URL and wait for the broker, write the new signatures to the seen changelog,
then commit them locally with the message's offset (state/seen.py; the store contract of
state/store.py).  The message's URLs also go on to the raw topic as a URL list per site (format
``urls``, ``source`` "frontier"; ``DUST_FRONTIER_LISTS``, on by default), acknowledged before the
commit: the ingest agent keeps them as listed URLs of their site (core/mining/incremental.py), the URLs a
crawler meets as a source of validation samples.  A crash before the commit sends
them again, which lists nothing twice (only the line counters see it); a send the broker refuses is
counted and logged, never the message's failure (agents/listedlinks.py ``send_listed``).  A seen-changelog write that fails is tried again until the broker takes it, as
the ingest agent's URL changelog writes are (stream/changelog.py ``write_until_acked``).  A crash
between the sends and the commit re-sends the same answers; a committed message is never redone.
A partition whose local set is behind (it moved from another worker) is rebuilt from the seen
changelog first.
"""

from __future__ import annotations

import asyncio
import logging

from dustbuster.core.canon.rulebook import RuleBook, SiteCanonized, trust_warnings
from dustbuster.core.errors import ERROR_DETAIL_CHARS, ParseError
from dustbuster.state.seen import SeenStore, seen_batch, signature
from dustbuster.stream.changelog import SeenChangelog, write_until_acked
from dustbuster.stream.records import CanonicalURL, decode_frontier
from dustbuster.stream.rulesview import TopicFollower

from .context import WorkerContext, stop_at_shutdown
from .listedlinks import send_listed
from .messages import ensure_fresh, send_reject

log = logging.getLogger(__name__)


def register(ctx: WorkerContext) -> None:
    """The ``dust-canonizer`` agent on the frontier topic, and the task that follows the rules topic."""
    assert ctx.follower is not None and ctx.seen is not None, "the canonizer needs DUST_CANONIZE"
    changelog = SeenChangelog(ctx.settings.kafka_bootstrap, ctx.settings.seen_changelog_topic)
    stop_at_shutdown(ctx.app, changelog)  # its producer starts on the first write
    health = ctx.health

    follower = ctx.follower

    @ctx.app.task
    async def follow_rules() -> None:
        await follow(follower, ctx.book)

    @ctx.app.agent(ctx.topics.frontier, name="dust-canonizer")
    @health.agent("dust-canonizer")
    async def canonizer(stream):
        async for event in health.track("dust-canonizer", stream.events()):
            await canonize_message(ctx, changelog, event.message, event.value)


async def follow(follower: TopicFollower, book: RuleBook | None = None) -> None:
    """Read the rules topic into the rule book for as long as the worker runs; once it is read to
    its end, say whether the sets are authenticated and which sites have none left
    (:func:`~dustbuster.core.canon.rulebook.trust_warnings`)."""
    while True:
        try:
            await follower.start()
            break
        except Exception as exc:  # noqa: BLE001 - the rules topic not there yet, a broker hiccup: retry
            log.warning("cannot follow the rules topic yet: %s", exc)
            await asyncio.sleep(2.0)
    for warning in trust_warnings(book) if book is not None else []:
        log.warning("%s", warning)
    try:
        await follower.run()
    finally:
        await follower.stop()


async def wait_for_rules(ctx: WorkerContext) -> None:
    """Never canonicalize with rules not read yet: wait until the rules topic is read to its end."""
    assert ctx.follower is not None, "the canonizer needs DUST_CANONIZE"
    waited = 0
    while not ctx.follower.ready.is_set():
        await asyncio.sleep(0.1)
        waited += 1
        if waited % 300 == 0:
            log.warning("frontier waits: the rules topic %s is not read to its end yet (%ss)",
                        ctx.settings.rules_topic, waited // 10)


async def canonize_message(ctx: WorkerContext, changelog: SeenChangelog, msg, value) -> None:
    """One frontier message: its URLs canonicalized, sent with their seen flags, committed."""
    await wait_for_rules(ctx)
    assert ctx.seen is not None, "the canonizer needs DUST_CANONIZE"
    store = ctx.seen.get(msg.partition)

    async def rebuild(sigs, applied: int) -> str:
        return f"{store.rebuild(msg.topic, applied, sigs)} seen signatures"

    await ensure_fresh("frontier", msg.partition, msg.offset, store.applied(msg.topic), changelog.read, rebuild)
    if msg.offset <= store.applied(msg.topic):  # a replay
        return
    try:
        site, urls, bad = decode_frontier(msg.key, value, ctx.settings.max_lines_per_message)
    except ParseError as exc:
        await send_reject(ctx, msg, exc.reason, exc.detail, value)
        store.commit(seen_batch(msg.topic, msg.offset, ()))
        return
    for u, reason in bad:
        await send_reject(ctx, msg, reason, "frontier URL", u, site)
    results = [r for u in urls if (r := await canonize_one(ctx, msg, u, site)) is not None]
    new = await send_canonical(ctx, store, results, site)
    if ctx.settings.frontier_lists:
        await send_url_lists(ctx, results, site)
    await write_until_acked(lambda: changelog.write(msg.partition, new, msg.offset),
                            f"seen changelog write for partition {msg.partition} (offset {msg.offset})")
    store.commit(seen_batch(msg.topic, msg.offset, new))
    ctx.metrics.canonizations.labels("frontier").inc(len(results))
    ctx.metrics.duplicates_skipped.inc(len(results) - len(new))


async def canonize_one(ctx: WorkerContext, msg, url: str, site: str | None) -> SiteCanonized | None:
    """One URL canonicalized; a URL the canonicalizer cannot handle is rejected alone (None), never the message."""
    try:
        return ctx.book.canonize(url, site)
    except Exception as exc:  # a bug must cost one URL, not the agent
        log.exception("canonicalizing %r failed", url[:ERROR_DETAIL_CHARS])
        await send_reject(ctx, msg, "canonicalize_failed", f"{type(exc).__name__}: {str(exc)[:ERROR_DETAIL_CHARS]}", url, site)
        return None


async def send_url_lists(ctx: WorkerContext, results: list[SiteCanonized], site: str | None) -> int:
    """The URLs of ``results`` as URL lists of their sites on the raw topic (key = site), within the
    message limits and acknowledged by the broker (:func:`dustbuster.agents.listedlinks.send_listed`,
    the validator's links' sender); returns the URLs sent.  A URL without a site is not sent."""
    by_site: dict[str, list[str]] = {}
    for r in results:
        s = r.site or site
        if s:
            by_site.setdefault(s, []).append(r.url)
    return sum([await send_listed(ctx.topics.raw, s, urls, ctx.settings, ctx.metrics, "frontier")
                for s, urls in by_site.items()])


async def send_canonical(ctx: WorkerContext, store: SeenStore, results: list[SiteCanonized], site: str | None) -> list[bytes]:
    """Send one CanonicalURL per result, seen when its signature is in the store or earlier in the
    message, and wait for the broker; returns the new signatures."""
    sigs = [signature(r.canonical) for r in results]
    new: list[bytes] = []
    batch: set[bytes] = set()
    futs = []
    for r, sig, was in zip(results, sigs, store.seen_many(sigs)):
        dup = was or sig in batch
        if not dup:
            batch.add(sig)
            new.append(sig)
        out_site = r.site or site
        futs.append(await ctx.topics.canonical.send(
            key=(out_site or "").encode() or None,
            value=CanonicalURL(url=r.url, canonical=r.canonical, site=out_site, rules=list(r.rules),
                               version=r.version, seen=dup, signature=sig.hex(), normalized=r.normalized)))
    if futs:
        await asyncio.gather(*futs)
    return new
