"""The validator's round runner (agents/rounds.py) and the raw partitions' ownership
(agents/assignment.py), without a broker: one round per site at a time, the newest waiting set run
after it, rounds of sites that moved away cancelled, nothing after a stop; a partition is owned once
assigned and checked, not while pending or once revoked."""

from __future__ import annotations

import asyncio

from dustbuster.agents.assignment import RawAssignment
from dustbuster.agents.rounds import RoundRunner, partition_of


def test_one_round_per_site_the_newest_waiting_set_after_it_and_cancellation():
    async def go():
        ran: list[tuple[str, int]] = []
        gate = asyncio.Event()

        async def run(site, cand):
            ran.append((site, cand))
            await gate.wait()

        r = RoundRunner(run, partitions=4)
        r.submit("a.test", 1)
        await asyncio.sleep(0)
        r.submit("a.test", 2)
        r.submit("a.test", 3)  # the newest waiting set wins
        assert r.busy("a.test") and ran == [("a.test", 1)]
        gate.set()
        await asyncio.sleep(0.05)
        assert ran == [("a.test", 1), ("a.test", 3)] and not r.busy("a.test")
        gate.clear()
        r.submit("a.test", 4)
        await asyncio.sleep(0)
        r.assigned({p for p in range(4) if p != partition_of("a.test", 4)})  # a.test's partition moved away
        await asyncio.sleep(0.05)
        assert r.cancelled == 1 and not r.busy("a.test")
        r.owned = None
        r.submit("b.test", 5)
        await asyncio.sleep(0)
        await r.stop()
        r.submit("b.test", 6)
        return ran, r

    ran, r = asyncio.run(go())
    assert ran[-1] == ("b.test", 5) and not r.running and not r.waiting  # stopped: 6 never ran


def test_a_partition_is_owned_once_assigned_and_checked():
    own = RawAssignment()
    assert own.owns(3)  # nothing known yet: every open store (tests without a group)
    own.assigned([0, 1])
    assert not own.owns(0) and own.pending == {0, 1}  # pending: its store may be behind
    gen = own.generation
    own.checked(0, gen)
    assert own.owns(0) and not own.owns(1) and not own.owns(3)
    own.revoked([0])
    own.checked(1, gen)  # a check begun before the revocation is not kept
    assert not own.owns(0) and not own.owns(1) and own.pending == {1}
