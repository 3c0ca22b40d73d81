"""Following a site-keyed topic from its partitions' start (or a backlog before their ends): every
site's current rule set, followed live from the compacted rules topic, and the candidate sets the
dashboard shows (:class:`TopicFollower`); :mod:`dustbuster.stream.consume` reads a topic to its
end with it.

The rules topic is our "global table": every worker (and ``dustbuster rules`` / ``canonize --from-topic``)
reads *all* partitions of the rules topic from the start with a group-less consumer, so each
instance holds every site's rule set whatever partitions of other topics it owns, nothing is lost
on a rebalance (there is no partition to lose), and a new version is applied the moment it is
read.  ``ready`` is set once the consumer has read up to the end offsets it found at start, so a
worker does not canonicalize a frontier with rules it has not read yet.  A faust GlobalTable would
keep a second changelog copy of the same compacted topic; reading the topic itself is simpler.

Values are RuleSet JSON (docs/topics.md); a tombstone (null) removes the site.  A value that is
not a valid rule set is counted (by reason, in ``rejected``), logged and skipped: the site keeps
its previous set.  No record can stop the follower, whatever a producer wrote: the value is parsed
strictly (:func:`decode_site_record`, the default decoder: no NaN/Infinity/1e400, no integer over
64 bits, no deep nesting) and *any* exception of the decoder or of the update callback (the rule
book's parsing and admission) is a skip too.
"""

from __future__ import annotations

import asyncio
import logging
from collections import Counter
from typing import Any, Callable

from aiokafka import AIOKafkaConsumer, TopicPartition
from aiokafka.errors import CorruptRecordException, KafkaError, UnsupportedCodecError

from dustbuster.core.errors import WARNING_DETAIL_CHARS, DustError, ParseError, StreamError
from dustbuster.core.strictjson import loads_strict

from .boundedcodec import BatchTooLarge, bounded

log = logging.getLogger(__name__)

#: the largest record value a follower parses (bytes, after decompression; DUST_MAX_RECORD_BYTES):
#: four times what our producers send (DUST_MAX_MESSAGE_BYTES, 1,000,000); more is skipped unparsed
MAX_RECORD_BYTES = 4_000_000
#: the most bytes one fetched batch may unpack to (twice a record's cap): a bigger one is not unpacked
BATCH_FACTOR = 2
#: records over this many bytes are parsed and admitted on a thread, off the event loop
OFF_LOOP_BYTES = 256 * 1024
#: what makes a fetched batch unreadable: skipped, counted, never a stuck follower
BAD_BATCH = (BatchTooLarge, UnsupportedCodecError, CorruptRecordException)

Update = Callable[[str, Any], object]  #: (site, decoded value; None for a tombstone); what it returns is ignored
Rejected = Callable[[str, str], None]  #: (reason, site)
Decoder = Callable[[bytes | None, bytes | None], tuple[str, Any]]  #: (key, value) -> (site, value)


def decode_site_record(key: bytes | None, value: bytes | None) -> tuple[str, dict | None]:
    """``(site, document or None for a tombstone)`` of a record of a site-keyed topic of JSON
    objects (the rules topic, the candidates topic).
    Raises ParseError (reasons ``no_site``, ``bad_json``, ``too_deep``, ``non_finite_number``,
    ``number_out_of_range``, ``bad_encoding``, ``bad_record``) and nothing else."""
    try:
        site = (key or b"").decode("utf-8").strip().lower()
    except UnicodeDecodeError:
        raise ParseError("no_site", "the key is not UTF-8") from None
    if not site:
        raise ParseError("no_site", "a record without a site key")
    if len(site) > 255 or not site.isprintable():
        raise ParseError("no_site", "the key is not a site name")
    if value is None:
        return site, None
    doc = loads_strict(value, surrogates=False)
    if not isinstance(doc, dict):
        raise ParseError("bad_record", "the value is not a JSON object")
    _check_shape(doc)
    return site, doc


def _check_shape(doc: dict[str, Any]) -> None:
    """The fields every consumer reads without further checks: ``rules``/``param_rules`` lists of
    objects, ``version`` an integer.  The rest (each rule, admission) is the rule book's."""
    for name in ("rules", "param_rules"):
        v = doc.get(name)
        if v is not None and not (isinstance(v, list) and all(isinstance(r, dict) for r in v)):
            raise ParseError("bad_record", f"'{name}' must be a list of JSON objects")
    version = doc.get("version")
    if version is not None and (isinstance(version, bool) or not isinstance(version, int)):
        raise ParseError("bad_record", "'version' must be an integer")


def _reason(exc: BaseException) -> str:
    if isinstance(exc, ParseError):
        return exc.reason
    reason = getattr(exc, "reason", None)
    if isinstance(reason, str) and reason:
        return reason
    if isinstance(exc, DustError):
        return "bad_rule_set"
    return "error_" + type(exc).__name__  # a consumer bug, still not a crash


class TopicFollower:
    """A group-less consumer of every partition of ``topic``: each record decoded by ``decode`` and
    handed to ``on_update(site, value)``; a record either raises on is skipped (see the module).
    ``backlog`` None reads each partition from its start; n reads only its last n records."""

    def __init__(self, bootstrap: str, topic: str, on_update: Update, poll_ms: int = 250,
                 on_reject: Rejected | None = None, decode: Decoder = decode_site_record,
                 backlog: int | None = None, skip_level: int = logging.WARNING,
                 max_record_bytes: int = MAX_RECORD_BYTES) -> None:
        self.bootstrap = bootstrap
        self.topic = topic
        self.on_update = on_update
        self.on_reject = on_reject  #: called with (reason, site) for each skipped record (metrics)
        self.decode = decode
        self.backlog = backlog
        self.skip_level = skip_level  #: the level of the "skipping a bad record" message
        self.poll_ms = poll_ms
        self.max_record_bytes = max_record_bytes  #: a value over it is skipped unparsed (``oversized``)
        #: a batch unpacking to more is skipped unpacked (``batch_too_large``)
        self.max_batch_bytes = BATCH_FACTOR * max_record_bytes
        self.ready = asyncio.Event()
        self.read = 0
        self.bad = 0
        self.rejected: Counter[str] = Counter()
        self.timestamp_ms: int | None = None  #: the timestamp of the record being applied, if known
        self._consumer: AIOKafkaConsumer | None = None
        self._ends: dict[TopicPartition, int] = {}

    async def start(self, wait_s: float = 30.0) -> None:
        c = AIOKafkaConsumer(bootstrap_servers=self.bootstrap, group_id=None, enable_auto_commit=False,
                             auto_offset_reset="earliest")
        try:
            await c.start()
            parts = await topic_partitions(self.bootstrap, self.topic, wait_s)
            if not parts:
                raise StreamError(f"topic {self.topic} does not exist at {self.bootstrap}")
            tps = [TopicPartition(self.topic, p) for p in sorted(parts)]
            c.assign(tps)
            self._ends = await c.end_offsets(tps)
            if self.backlog is None:
                await c.seek_to_beginning(*tps)
            else:
                begin = await c.beginning_offsets(tps)
                for tp in tps:
                    c.seek(tp, max(begin[tp], self._ends[tp] - self.backlog))
        except KafkaError as exc:
            await c.stop()
            raise StreamError(f"cannot read {self.topic} at {self.bootstrap}: {exc}") from exc
        except BaseException:
            await c.stop()
            raise
        self._consumer = c
        await self._check_ready()

    async def _check_ready(self) -> None:
        if self.ready.is_set() or self._consumer is None:
            return
        for tp, end in self._ends.items():
            if await self._consumer.position(tp) < end:
                return
        self.ready.set()
        log.info("topic %s read to its end: %s records", self.topic, self.read)

    async def poll(self) -> int:
        """Read what is there (up to poll_ms); apply it; returns the number of records.  Batches
        unpack to at most ``max_batch_bytes`` (stream/boundedcodec.py); one that would not, or that
        cannot be read at all, is skipped and counted (:meth:`_skip_bad_batches`)."""
        assert self._consumer is not None, "start() first"
        try:
            with bounded(self.max_batch_bytes):
                got = await self._consumer.getmany(timeout_ms=self.poll_ms)
        except BAD_BATCH as exc:
            return await self._skip_bad_batches(exc)
        n = 0
        for msgs in got.values():
            for m in msgs:
                n += 1
                await self.apply_async(m)
        await self._check_ready()
        return n

    async def apply_async(self, m) -> bool:
        """:meth:`apply` of a fetched record; a big one (over :data:`OFF_LOOP_BYTES`) on a thread of
        its own, so parsing and admitting it never blocks the event loop."""
        args = (m.key, m.value, f"{m.topic}/{m.partition}@{m.offset}", m.timestamp)
        if m.value is not None and len(m.value) > OFF_LOOP_BYTES:
            return await asyncio.to_thread(self.apply, *args)
        return self.apply(*args)

    async def _skip_bad_batches(self, exc: Exception) -> int:
        """After a poll raised on a batch (over the cap, a codec we lack, corrupt): each partition
        is read from its position one batch per fetch by a careful consumer, which skips (and
        counts) the offsets whose batch raises and applies the first good batch after them; the
        follower goes on from there."""
        c, n = self._consumer, 0
        assert c is not None  # a poll raised: the follower was started
        for tp in sorted(c.assignment()):
            pos = await c.position(tp)
            end = (await c.end_offsets([tp]))[tp]
            careful = AIOKafkaConsumer(bootstrap_servers=self.bootstrap, group_id=None, enable_auto_commit=False,
                                       max_partition_fetch_bytes=1)
            await careful.start()
            try:
                careful.assign([tp])
                pos, k = await self._careful_read(careful, tp, pos, end)
                n += k
            finally:
                await careful.stop()
            c.seek(tp, pos)
        await self._check_ready()
        return n

    async def _careful_read(self, careful: AIOKafkaConsumer, tp: TopicPartition, pos: int, end: int) -> tuple[int, int]:
        """(new position, records applied) of one partition read one batch at a time from ``pos``."""
        while pos < end:
            careful.seek(tp, pos)
            try:
                with bounded(self.max_batch_bytes):
                    got = await careful.getmany(tp, timeout_ms=max(self.poll_ms, 1000))
            except BAD_BATCH as exc:
                self._count_skip(_reason(exc), f"{tp.topic}/{tp.partition}@{pos}", str(exc))
                pos += 1
                continue
            msgs = got.get(tp, [])
            for m in msgs:
                await self.apply_async(m)
            return (msgs[-1].offset + 1 if msgs else pos), len(msgs)
        return pos, 0

    def _count_skip(self, reason: str, where: str, text: str, site: str = "") -> None:
        self.bad += 1
        self.rejected[reason] += 1
        text = text[:WARNING_DETAIL_CHARS]
        log.log(self.skip_level, "skipping a bad record of %s %s (site %r): %s", self.topic, where, site,
                text if text.startswith(reason) else f"{reason}: {text}")
        if self.on_reject is not None:
            try:
                self.on_reject(reason, site)
            except Exception:
                log.exception("the rejection hook failed")

    async def read_to_end(self) -> None:
        """Poll until every partition is read up to the end offsets found at start."""
        while not self.ready.is_set():
            await self.poll()

    def apply(self, key: bytes | None, value: bytes | None, where: str = "",
              timestamp_ms: int | None = None) -> bool:
        """Apply one record; False when it was skipped (counted in ``bad`` and ``rejected``).
        Never raises (but for KeyboardInterrupt and the like): one record cannot stop a follower."""
        self.read += 1
        site = (key or b"").decode("utf-8", "replace").strip().lower()[:255]
        self.timestamp_ms = timestamp_ms
        try:
            if value is not None and len(value) > self.max_record_bytes:
                raise ParseError("oversized", f"a value of {len(value)} bytes > {self.max_record_bytes}")
            site, doc = self.decode(key, value)
            self.on_update(site, doc)
            return True
        except Exception as exc:  # noqa: BLE001 - untrusted records: one cannot stop a follower
            self._count_skip(_reason(exc), where, str(exc), site)
            return False
        finally:
            self.timestamp_ms = None

    async def run(self) -> None:
        """Follow the topic until cancelled; a broker hiccup is retried."""
        while True:
            try:
                await self.poll()
            except KafkaError as exc:
                log.warning("topic %s: %s; retrying", self.topic, exc)
                await asyncio.sleep(1.0)

    async def stop(self) -> None:
        if self._consumer is not None:
            await self._consumer.stop()
            self._consumer = None


async def topic_partitions(bootstrap: str, topic: str, wait_s: float = 0.0) -> list[int]:
    """The partition ids of ``topic`` (waiting up to ``wait_s`` for it to appear); [] if none."""
    from aiokafka.admin import AIOKafkaAdminClient

    admin = AIOKafkaAdminClient(bootstrap_servers=bootstrap)
    try:
        await admin.start()
    except KafkaError as exc:
        await admin.close()
        raise StreamError(f"cannot reach Kafka at {bootstrap}: {exc}") from exc
    try:
        loop = asyncio.get_running_loop()
        deadline = loop.time() + wait_s
        while True:
            try:
                desc = await admin.describe_topics([topic])
            except KafkaError:
                desc = []
            parts = [p["partition"] for d in desc if d.get("topic") == topic and not d.get("error_code")
                     for p in d.get("partitions", [])]
            if parts or loop.time() >= deadline:
                return sorted(parts)
            await asyncio.sleep(0.5)
    finally:
        await admin.close()
