"""Health tells the truth: /healthz is 503 while an agent is crashed or restarting, or
while the Kafka consumer is not a member of its group; rebuilds show their progress."""

from __future__ import annotations

import asyncio
from types import SimpleNamespace

import pytest
from aiohttp.test_utils import TestClient, TestServer

from dustbuster.agents.api import make_api
from dustbuster.core.canon.rulebook import RuleBook
from dustbuster.agents.health import Health, consumer_problem, watch_loop
from dustbuster.agents.metrics import Metrics


class Clock:
    def __init__(self) -> None:
        self.t = 1000.0

    def __call__(self) -> float:
        return self.t


class FakeStream:
    """What a Faust agent function gets: something with events()."""

    def __init__(self, items) -> None:
        self.items = items

    async def events(self):
        for x in self.items:
            yield x


def run_agent(health: Health, name: str, items, body):
    @health.agent(name)
    async def agent(stream):
        async for ev in health.track(name, stream.events()):
            await body(ev)

    return asyncio.run(agent(FakeStream(items)))


async def ok_body(ev):
    return None


async def poison_body(ev):
    if ev == "poison":
        raise TypeError("bad record")


def test_crash_is_unhealthy_until_a_message_completes():
    clock = Clock()
    crashes = []
    h = Health(settle_s=60, clock=clock, on_crash=crashes.append)
    assert h.ok()
    with pytest.raises(TypeError):
        run_agent(h, "dust-ingest", ["a", "poison", "b"], poison_body)
    assert crashes == ["dust-ingest"]
    assert not h.ok() and "dust-ingest" in h.problems()[0] and "TypeError" in h.problems()[0]
    clock.t += 5
    # Faust restarts the agent: started again, still unhealthy until it completes a message
    with pytest.raises(TypeError):
        run_agent(h, "dust-ingest", ["poison"], poison_body)
    assert not h.ok() and h.agents["dust-ingest"].crashes == 2
    clock.t += 1
    run_agent(h, "dust-ingest", ["c", "d"], ok_body)
    assert h.ok()
    assert h.details()["agents"]["dust-ingest"]["crashes"] == 2


def test_an_idle_agent_after_a_crash_is_healthy_after_settle_time():
    clock = Clock()
    h = Health(settle_s=60, clock=clock)
    with pytest.raises(TypeError):
        run_agent(h, "dust-canonizer", ["poison"], poison_body)
    run_agent(h, "dust-canonizer", [], ok_body)  # Faust restarts it; nothing comes
    clock.t += 59
    assert not h.ok()
    clock.t += 2
    assert h.ok()


def test_an_agent_that_crashed_and_was_not_restarted_stays_unhealthy():
    """Issue 27, finding 2: an agent that stopped for good was 'healthy' after settle_s."""
    clock = Clock()
    h = Health(settle_s=60, clock=clock)
    with pytest.raises(TypeError):
        run_agent(h, "dust-ingest", ["poison"], poison_body)
    clock.t += 3600
    assert not h.ok() and "was not restarted" in h.problems()[0] and "TypeError" in h.problems()[0]


def test_a_stalled_agent_is_unhealthy_with_the_reason_until_it_goes_on():
    h = Health(clock=Clock())
    h.stalled("dust-ingest", "cannot apply raw partition 0: StateError: Too many open files")
    assert h.problems() == ["agent dust-ingest is stalled: cannot apply raw partition 0: StateError: Too many open files"]
    h.resumed("dust-ingest")
    assert h.ok()


def test_an_unreachable_broker_is_a_problem():
    h = Health(clock=Clock())
    h.broker = lambda: "Kafka broker unreachable for 20s (127.0.0.1:9)"
    assert h.problems() == ["Kafka broker unreachable for 20s (127.0.0.1:9)"]


def test_continue_counts_as_done_and_cancel_is_no_crash():
    h = Health(clock=Clock())

    async def body(ev):
        if ev == "cancel":
            raise asyncio.CancelledError()

    with pytest.raises(asyncio.CancelledError):
        run_agent(h, "a", ["x", "cancel"], body)
    assert h.ok() and h.agents["a"].crashes == 0 and h.agents["a"].last_done is not None


def _app(rebalancing=False, member_id="m-1", rejoin=False, started=True):
    loop = asyncio.new_event_loop()
    fut = loop.create_future()
    if rejoin:
        fut.set_result(None)
    loop.close()
    coord = SimpleNamespace(member_id=member_id, _rejoin_needed_fut=fut)
    kafka = SimpleNamespace(_coordinator=coord) if started else None
    return SimpleNamespace(rebalancing=rebalancing, _consumer=SimpleNamespace(_thread=SimpleNamespace(_consumer=kafka)))


def test_consumer_membership_probe():
    assert consumer_problem(_app()) is None
    assert "rebalance" in consumer_problem(_app(rebalancing=True))
    assert "not a member" in consumer_problem(_app(member_id=""))
    assert "rejoin" in consumer_problem(_app(rejoin=True))
    assert "not started" in consumer_problem(_app(started=False))
    assert "not started" in consumer_problem(SimpleNamespace())  # Faust creates its consumer at start
    # internals that are not what we expect: cannot tell, not a false alarm
    odd = SimpleNamespace(rebalancing=False, _consumer=SimpleNamespace(_thread=SimpleNamespace(
        _consumer=SimpleNamespace())))
    assert consumer_problem(odd) is None


def test_a_broken_probe_never_breaks_health():
    h = Health(clock=Clock())

    def boom():
        raise RuntimeError("internals moved")

    h.membership = boom
    assert h.ok()


async def _get(api, path):
    async with TestClient(TestServer(api)) as c:
        r = await c.get(path)
        return r.status, await r.json() if r.content_type == "application/json" else await r.text()


def test_healthz_answers_503_with_the_reasons():
    clock = Clock()
    h = Health(clock=clock)
    metrics = Metrics()
    metrics.healthy.set_function(lambda: 1.0 if h.ok() else 0.0)
    api = lambda: make_api(RuleBook(), metrics, health=h)  # noqa: E731
    status, body = asyncio.run(_get(api(), "/healthz"))
    assert status == 200 and body["status"] == "ok" and body["problems"] == []
    h.membership = lambda: "Kafka consumer is not a member of its group (not joined yet, or the membership was lost)"
    status, body = asyncio.run(_get(api(), "/healthz"))
    assert status == 503 and body["status"] == "unhealthy" and "not a member" in body["problems"][0]
    assert "dust_healthy 0.0" in asyncio.run(_get(api(), "/metrics"))[1]
    h.membership = lambda: None
    h.rebuild_progress("dust-raw/2", 30000, 121823)
    status, body = asyncio.run(_get(api(), "/healthz"))
    assert status == 200 and body["rebuilding"]["dust-raw/2"]["loaded"] == 30000  # progress shown, not a failure
    h.rebuild_finished("dust-raw/2")
    with pytest.raises(TypeError):
        run_agent(h, "dust-ingest", ["poison"], poison_body)
    status, body = asyncio.run(_get(api(), "/healthz"))
    assert status == 503 and "dust-ingest" in body["problems"][0] and body["agents"]["dust-ingest"]["crashes"] == 1
    # without a health object (tests, embedding) the old behaviour: rules ready = healthy
    status, body = asyncio.run(_get(make_api(RuleBook(), Metrics(), ready=lambda: False), "/healthz"))
    assert status == 503 and body["status"] == "starting"


def test_loop_watch_reports_a_stall():
    metrics = Metrics()

    async def main():
        task = asyncio.ensure_future(watch_loop(metrics, interval=0.01, stall_s=0.05))
        await asyncio.sleep(0.05)
        import time

        time.sleep(0.3)  # a blocking call on the loop: the stall the watcher must see
        await asyncio.sleep(0.05)
        task.cancel()

    asyncio.run(main())
    text = metrics.exposition().decode()
    value = {ln.split()[0]: float(ln.split()[1]) for ln in text.splitlines() if ln and not ln.startswith("#")}
    assert value["dust_event_loop_stalls_total"] >= 1  # (a loaded machine may add more: lower bounds only)
    assert value["dust_event_loop_lag_max_seconds"] >= 0.25


def test_the_ingest_agent_retries_a_group_it_cannot_apply_and_shows_why(monkeypatch):
    """Issue 27, finding 2: a store that cannot be opened (no file descriptor left) stopped the
    ingest agent for good; now the group is tried again, /healthz says why meanwhile."""
    from dustbuster.agents import ingest

    h = Health(clock=Clock())
    seen: list[list[str]] = []
    calls = {"n": 0}

    async def flaky(ctx, changelog, events):
        calls["n"] += 1
        if calls["n"] <= 2:
            raise OSError(24, "Too many open files")
        seen.append([e.message.offset for e in events])

    async def no_sleep(s):
        problems.append(h.problems())

    problems: list[list[str]] = []
    monkeypatch.setattr(ingest, "ingest_messages", flaky)
    monkeypatch.setattr(ingest.asyncio, "sleep", no_sleep)
    ev = SimpleNamespace(message=SimpleNamespace(partition=3, offset=41))
    asyncio.run(ingest.apply_until_done(SimpleNamespace(health=h), None, [ev]))
    assert calls["n"] == 3 and seen == [[41]]
    assert problems[0] == ["agent dust-ingest is stalled: cannot apply raw partition 3: OSError: [Errno 24] Too many open files"]
    assert h.ok()
