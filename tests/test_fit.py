"""stream/fit.py: candidate sets cut to fit the message limit (issue 27, finding 1), and the window
timer's guard: a send that fails is a counted, logged skip, never the timer's crash."""

from __future__ import annotations

import asyncio
import types

import pytest
from aiokafka.errors import KafkaConnectionError, MessageSizeTooLargeError
from faust.exceptions import ProducerSendError

from dustbuster.agents import windows
from dustbuster.agents.metrics import Metrics
from dustbuster.stream.fit import FRAMING_BYTES, budget, encoded_size, fit_candidate_set
from dustbuster.stream.records import CandidateSet, encode

LIMIT = 100_000


def cand(n_urls: int, n_rules: int = 3, url_len: int = 351) -> dict:
    urls = [f"http://s.test/{i:06d}/" + "u" * (url_len - 22) for i in range(n_urls)]
    rules = [{"type": "substring", "alpha": f"/a{i}/", "beta": "/", "display": f'"/a{i}/" -> "/"'} for i in range(n_rules)]
    return {"site": "s.test", "window": 7, "rules": rules,
            "stats": {"lines": n_urls}, "params": {}, "test_urls": urls}


def test_a_set_that_fits_is_the_same_object():
    doc = cand(10)
    assert fit_candidate_set(doc, LIMIT) is doc


def test_the_newest_test_urls_are_kept_and_the_cut_is_said():
    doc = cand(1000)
    out = fit_candidate_set(doc, LIMIT)
    assert out is not doc and doc["test_urls"] and len(doc["test_urls"]) == 1000  # the input is left alone
    n = len(out["test_urls"])
    assert 0 < n < 1000 and out["test_urls"] == doc["test_urls"][:n]
    assert out["rules"] == doc["rules"]
    t = out["stats"]["trimmed"]
    assert t == {"test_urls": 1000 - n, "rules": 0, "bytes_before": encoded_size(doc), "bytes_after": encoded_size(out)}
    assert encoded_size(out) <= budget(LIMIT)
    # the most URLs that fit: one more would not
    assert encoded_size(out | {"test_urls": doc["test_urls"][:n + 1]}) > budget(LIMIT) - 200


@pytest.mark.parametrize("n_urls,n_rules", [(0, 2000), (500, 2000), (3000, 5000)])
def test_rules_are_cut_lowest_ranked_first_only_when_the_urls_are_gone(n_urls, n_rules):
    doc = cand(n_urls, n_rules)
    out = fit_candidate_set(doc, LIMIT)
    assert out["test_urls"] == [] and 0 < len(out["rules"]) < n_rules
    assert out["rules"] == doc["rules"][:len(out["rules"])]
    assert out["stats"]["trimmed"]["rules"] == n_rules - len(out["rules"])
    assert encoded_size(out) <= budget(LIMIT)


def test_the_faust_record_fits_the_limit_with_its_framing():
    doc = fit_candidate_set(cand(3000), 1_000_000)
    rec = CandidateSet(**{k: doc[k] for k in ("site", "window", "rules", "stats", "params",
                                              "test_urls")})
    assert len(encode(rec)) <= 1_000_000 - FRAMING_BYTES + 200  # namespace metadata only


def test_a_set_that_cannot_fit_is_none():
    doc = cand(0, 1) | {"stats": {"huge": "x" * 200_000}}
    assert fit_candidate_set(doc, LIMIT) is None


class FakeStores:
    def __init__(self) -> None:
        self.cleared: list[str] = []

    async def run(self, fn, *args):
        return fn(*args)


class FakePart:
    partition = 0

    def __init__(self, stores: FakeStores) -> None:
        self.stores = stores

    def window(self, site):
        return types.SimpleNamespace(to_json=lambda: cand(5) | {"stats": {}}, test_urls=cand(5)["test_urls"])

    def clear_dirty(self, site, token, sent=None):
        self.stores.cleared.append(site)

    def sent_key(self, site):
        return None


class FailingTopic:
    def __init__(self, exc: BaseException) -> None:
        self.exc = exc

    async def send(self, **kw):
        raise self.exc


def _ctx(exc: BaseException):
    stores = FakeStores()
    ctx = types.SimpleNamespace(stores=stores, metrics=Metrics(), settings=types.SimpleNamespace(max_message_bytes=LIMIT),
                                topics=types.SimpleNamespace(candidates=FailingTopic(exc)))
    return ctx, FakePart(stores)


def _failures(ctx) -> dict[str, float]:
    return {s.labels["reason"]: s.value for m in ctx.metrics.send_failures.collect() for s in m.samples
            if s.name.endswith("_total")}


def test_a_refused_send_is_counted_and_the_site_is_not_retried_forever(caplog):
    ctx, part = _ctx(ProducerSendError("Error while sending")) 
    ctx.topics.candidates.exc.__cause__ = MessageSizeTooLargeError()
    asyncio.run(windows.guarded_emit(ctx, part, "s.test", b"t", 1))
    assert _failures(ctx) == {"MessageSizeTooLargeError": 1.0}
    assert ctx.stores.cleared == ["s.test"]  # a permanent refusal: not repeated every window
    assert "window 1 not sent (MessageSizeTooLargeError" in caplog.text


def test_a_send_that_may_succeed_later_keeps_the_site_for_the_next_window():
    ctx, part = _ctx(KafkaConnectionError())
    asyncio.run(windows.guarded_emit(ctx, part, "s.test", b"t", 1))
    assert _failures(ctx) == {"KafkaConnectionError": 1.0}
    assert ctx.stores.cleared == []


class SendingTopic:
    def __init__(self) -> None:
        self.sent: list = []

    async def send(self, **kw):
        self.sent.append(kw)


class ManySitesPart(FakePart):
    def __init__(self, stores: FakeStores, sites: int) -> None:
        super().__init__(stores)
        self.sites = [(f"s{i}.test", b"t") for i in range(sites)]

    def dirty_sites(self):
        return self.sites


@pytest.mark.parametrize("sites", [3, 40])
def test_a_tick_of_many_sites_logs_one_summary_line_not_one_per_site(caplog, sites):
    import logging

    from dustbuster.agents.assignment import RawAssignment

    stores = FakeStores()
    part = ManySitesPart(stores, sites)
    stores.parts = {0: part}
    stores.busy_s = 0.0
    topic = SendingTopic()
    ctx = types.SimpleNamespace(stores=stores, metrics=Metrics(), raw_partitions=RawAssignment(),
                                settings=types.SimpleNamespace(max_message_bytes=LIMIT, window_s=60.0),
                                topics=types.SimpleNamespace(candidates=topic))
    with caplog.at_level(logging.INFO, logger="dustbuster.agents.windows"):
        asyncio.run(windows.run_windows(ctx, windows.Pacer()))
    lines = [r for r in caplog.records if r.levelno >= logging.INFO]
    assert len(topic.sent) == sites
    if sites <= windows.SITE_LINES_PER_TICK:
        assert len(lines) == sites and all("emitted" in r.getMessage() for r in lines)
    else:
        assert len(lines) == 1 and f"{sites} changed sites: {sites} candidate sets sent" in lines[0].getMessage()
