"""``dustbuster feed``: log files' lines into the raw topic (:func:`dustbuster.stream.producer.feed`),
with a TSV header row found by the log reader's :func:`dustbuster.logs.formats.header_check`."""

from __future__ import annotations

import argparse
import sys

from dustbuster.core.errors import ConfigError

from . import progress as prog
from .common import settings as kafka_settings


def add_parser(sub, common) -> argparse.ArgumentParser:
    f = sub.add_parser("feed", parents=[common], help="produce log lines into the raw topic",
                       description="Send a log file's lines (or stdin's) to Kafka in batches keyed by site, "
                       "each line's bytes as they are: the workers read them as dustbuster mine reads the "
                       "file (a line that is not UTF-8 is rejected bad_encoding, one over DUST_MAX_LINE_BYTES "
                       "characters oversized_line, by the workers; docs/semantics.md).  "
                       "Exits non-zero, saying how many lines were delivered, if the broker rejects a batch "
                       "after retries.  Broker and topic names come from DUST_* settings.")
    f.add_argument("logs", nargs="+", metavar="LOG", help="log files, sent one after the other (gzip and bzip2 "
                   "read by their first bytes, as dustbuster mine reads them; - for stdin)")
    f.add_argument("--site", required=True, help="the site (host) the lines belong to; the message key")
    f.add_argument("--format", default="auto", help="log format hint for the workers (default auto); urls: a URL list "
                   "(a crawler's frontier, one URL or path a line), kept as listed URLs of the site: validation samples, "
                   "never Figure 1 evidence")
    f.add_argument("--scheme", default="http", choices=("http", "https"),
                   help="scheme of URLs from lines that carry none (common/combined; default %(default)s)")
    f.add_argument("--batch-lines", type=int, default=500, help="lines per message (default %(default)s)")
    f.add_argument("--follow", action="store_true", help="keep reading new lines of a plain file, like tail -F (survives rotation)")
    f.add_argument("--bootstrap", help="Kafka bootstrap servers (default: DUST_KAFKA_BOOTSTRAP or 127.0.0.1:9092)")
    f.add_argument("--rejects", metavar="FILE", help="write lines too big for one message (not sent) with their "
                   "line numbers")
    f.add_argument("--max-message-bytes", type=int, default=1_000_000, metavar="N",
                   help="most bytes of one message; batches are cut to fit (default %(default)s)")
    return f


def run(a: argparse.Namespace) -> int:
    import asyncio

    if a.follow and len(a.logs) > 1:
        raise ConfigError("--follow follows one file")
    if a.follow:
        from dustbuster.logs.reader import compression

        if a.logs[0] == "-" or compression(a.logs[0]):
            raise ConfigError("--follow follows a plain (uncompressed) file, not stdin")
    settings = kafka_settings(a)
    rej_fh = open(a.rejects, "w", encoding="utf-8") if a.rejects else None
    bar = None
    if prog.enabled(a.quiet):
        from tqdm import tqdm

        bar = tqdm(desc="lines", unit=" lines", file=sys.stderr)
    try:
        stats = asyncio.run(_feed_all(a, settings, bar.update if bar else None, rej_fh))
    finally:
        if bar:
            bar.close()
        if rej_fh:
            rej_fh.close()
    if not a.quiet:
        rate = stats.lines / stats.seconds if stats.seconds else 0
        sys.stderr.write(f"fed {stats.lines} lines in {stats.batches} batches to {settings.raw_topic} "
                         f"({rate:,.0f} lines/s)"
                         + (f"; {stats.rejected} lines too big for a message not sent"
                            + (f" (in {a.rejects})" if a.rejects else "") if stats.rejected else "") + "\n")
    return 0


async def _feed_all(a: argparse.Namespace, settings, on_progress, rej_fh):
    """Every log of the command line, one after the other, until done or SIGINT/SIGTERM (--follow:
    the batch in hand is finished, then the run ends with status 0)."""
    import asyncio
    import signal

    from dustbuster.logs.formats import header_check
    from dustbuster.logs.reader import RejectSink, raw_lines
    from dustbuster.stream.admin import ensure_topics
    from dustbuster.stream.producer import FeedStats, feed

    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, stop.set)
    await ensure_topics(settings)  # our partitions, leaders elected: no auto-creation noise
    total = FeedStats()
    for path in a.logs:
        if stop.is_set():
            break
        total.add(await feed(settings.kafka_bootstrap, settings.raw_topic, path, a.site.lower(), a.format, a.scheme,
                             a.batch_lines, a.follow, on_progress=on_progress, stop=stop,
                             max_message_bytes=a.max_message_bytes,
                             rejects=RejectSink(rej_fh) if rej_fh else None, is_header=header_check(a.format),
                             lines=None if a.follow else raw_lines(path), max_line_chars=settings.max_line_bytes))
    return total
