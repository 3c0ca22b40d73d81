"""A dead letter is always sendable (found by the soak of issue 27: a raw line holding a lone
surrogate — legal in the JSON of a raw message, rejected ``bad_encoding`` — made its dead letter
fail to serialize, and the ingest agent crash on the group)."""

from __future__ import annotations

import asyncio
import json
import types

from dustbuster.agents.messages import send_reject
from dustbuster.agents.metrics import Metrics
from dustbuster.stream.records import dead_letter, encode


def test_a_lone_surrogate_becomes_a_question_mark():
    r = dead_letter("bad_encoding", "at \udc80", 'GET /a\udc80b HTTP/1.1', topic="t", partition=0, offset=1, site="s\ud800")
    doc = json.loads(encode(r))
    assert (doc["line"], doc["detail"], doc["site"]) == ("GET /a?b HTTP/1.1", "at ?", "s?")


def test_a_dead_letter_that_cannot_be_sent_is_counted_and_the_group_goes_on():
    class Broken:
        async def send(self, **kw):
            raise RuntimeError("broker refused it")

    ctx = types.SimpleNamespace(metrics=Metrics(), topics=types.SimpleNamespace(rejects=Broken()))
    msg = types.SimpleNamespace(topic="raw", partition=0, offset=7)
    asyncio.run(send_reject(ctx, msg, "malformed", "", "junk", "site.test"))
    got = {s.labels["topic"]: s.value for m in ctx.metrics.send_failures.collect() for s in m.samples
           if s.name.endswith("_total")}
    assert got == {"rejects": 1.0}


def test_the_local_brokers_cluster_id_never_starts_with_a_dash():
    """The storage tool read an id starting with '-' as an option (a flaky broker start)."""
    from dustbuster.broker import cluster_id

    assert all(len(c) == 22 and not c.startswith("-") for c in (cluster_id() for _ in range(5000)))
