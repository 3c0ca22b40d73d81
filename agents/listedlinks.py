"""The links of the pages a validation round fetched, sent to the raw topic as *listed* URLs of the
site (beyond the papers: docs/validation.md "Links of fetched pages").

A round's :attr:`dustbuster.sitevalidation.SiteValidation.links` (same-origin, absolute, normalized:
:mod:`dustbuster.core.urls.pagelinks`) less the candidate set's test URLs go to ``ctx.topics.raw`` (key =
the site) as ``RawBatch(format="urls", source="validator-links")`` messages of at most
``DUST_MAX_LINES_PER_MESSAGE`` lines and at most the message budget in bytes
(:func:`dustbuster.stream.fit.budget`).  The ingest agent keeps them as URLs without sizes: no
Figure 1 evidence of their own, but parameter and scope rules and validation samples use them.
Counted in ``dust_listed_urls_sent_total{source}``; a send that fails is a counted, logged skip
(``dust_send_failures_total{topic="raw"}``), never a failed round.  ``DUST_VALIDATOR_LINKS=false``
switches it off.

A link is sent once per site and worker process (:class:`LinkSender` remembers what the broker took,
at most :data:`REMEMBERED` links a site, then it starts over): a raw batch changes the site, its
next window makes a candidate set, whose round fetches pages again — were the same links sent
again, every window would bring the next round; with nothing new, a round sends nothing and the
loop stops.
"""

from __future__ import annotations

import asyncio
import logging
from typing import Iterable, Sequence

from dustbuster.core.urls.normalize import normalize_or_keep
from dustbuster.stream.fit import budget, encoded_size
from dustbuster.stream.records import RawBatch, encode, url_problem

log = logging.getLogger(__name__)

#: the ``source`` of the raw batches (and the metric's label)
SOURCE = "validator-links"
#: links remembered as sent, per site (then the site's memory starts over: each is sent once more)
REMEMBERED = 200_000


def new_links(links: Iterable[str], test_urls: Sequence[str]) -> list[str]:
    """``links`` that are not among ``test_urls`` (as written or normalized), nor unfit for the raw topic."""
    known = set(test_urls) | {normalize_or_keep(u)[0] for u in test_urls}
    return [u for u in links if u not in known and url_problem(u) is None]


def chunks(urls: list[str], max_lines: int, max_bytes: int) -> list[list[str]]:
    """``urls`` cut into runs of at most ``max_lines`` URLs whose JSON strings take at most
    ``max_bytes`` together (a URL is at most 8,192 characters, far under any message budget)."""
    out: list[list[str]] = []
    run: list[str] = []
    size = 0
    for u in urls:
        n = encoded_size(u) + 1  # the string and its comma
        if run and (len(run) >= max_lines or size + n > max_bytes):
            out.append(run)
            run, size = [], 0
        run.append(u)
        size += n
    if run:
        out.append(run)
    return out


def raw_batches(site: str, urls: list[str], max_lines: int, max_message_bytes: int,
                source: str = SOURCE) -> list[RawBatch]:
    """The raw-topic records that carry ``urls`` as listed URLs of ``site``, each within the limits."""
    envelope = len(encode(RawBatch(site=site, lines=[], format="urls", source=source, seq=10**15)))
    room = budget(max_message_bytes) - envelope
    return [RawBatch(site=site, lines=run, format="urls", source=source, seq=i)
            for i, run in enumerate(chunks(urls, max(1, max_lines), room))]


class LinkSender:
    """The validator's sender of links (the module docstring), with its memory of what was sent:
    ``await sender(site, links, test_urls)`` is the ``links`` callback of
    :func:`dustbuster.agents.validator.validation_round`."""

    def __init__(self, topic, settings, metrics=None) -> None:
        self.topic, self.settings, self.metrics = topic, settings, metrics
        self.sent: dict[str, set[int]] = {}  #: site → hashes (this process's ``hash``) of the links sent

    async def __call__(self, site: str, links: Iterable[str], test_urls: Sequence[str]) -> int:
        memory = self.sent.setdefault(site, set())
        fresh = [u for u in links if hash(u) not in memory]
        if len(memory) + len(fresh) > REMEMBERED:
            log.info("%s: %s links remembered as sent: starting over", site, len(memory))
            memory.clear()
        return await send_links(self.topic, site, fresh, test_urls, self.settings, self.metrics,
                                lambda urls: memory.update(map(hash, urls)))


async def send_links(topic, site: str, links: Iterable[str], test_urls: Sequence[str], settings,
                     metrics=None, on_sent=None) -> int:
    """Send the round's new links of ``site`` to ``topic`` (the raw topic) and wait for the broker;
    how many URLs were sent.  A failed send is counted and logged, and its URLs are not counted.
    ``on_sent(urls)`` is called with each batch's URLs the broker took."""
    sent = await send_listed(topic, site, new_links(links, test_urls), settings, metrics, SOURCE, on_sent)
    log.info("%s: %s links of fetched pages sent as listed URLs", site, sent)
    return sent


async def send_listed(topic, site: str, urls: list[str], settings, metrics=None, source: str = SOURCE,
                      on_sent=None) -> int:
    """``urls`` sent to ``topic`` (the raw topic) as URL lists of ``site`` within the message limits,
    each batch awaited; how many URLs were sent.  A failed send is counted and logged, its URLs not
    counted, never raised: listed URLs are side information (the frontier's answers, a round's
    verdicts do not wait on them).  ``on_sent(urls)`` is called with each batch's URLs the broker took."""
    sent = 0
    for batch in raw_batches(site, urls, settings.max_lines_per_message, settings.max_message_bytes, source):
        try:
            fut = await topic.send(key=site.encode(), value=encode(batch))
            if asyncio.isfuture(fut):
                await fut
        except asyncio.CancelledError:
            raise
        except Exception as exc:  # noqa: BLE001 - a lost batch of links costs nothing but those URLs
            if metrics is not None:
                metrics.send_failures.labels("raw", type(exc).__name__).inc()
            log.error("%s: %s listed URLs (%s) not sent: %s: %s", site, len(batch.lines), source,
                      type(exc).__name__, str(exc)[:200])
            continue
        sent += len(batch.lines)
        if on_sent is not None:
            on_sent(batch.lines)
    if metrics is not None and sent:
        metrics.listed_urls_sent.labels(source).inc(sent)
    return sent


__all__ = ["REMEMBERED", "SOURCE", "LinkSender", "chunks", "new_links", "raw_batches", "send_links", "send_listed"]
