"""The streaming miner against a real Kafka broker: the same supports as
batch mining, nothing lost or counted twice across a kill -9, junk sent to the rejects topic, and
scale-out."""

from __future__ import annotations

import json
import time

import pytest

from tests.conftest import LOGS
from tests.streamtools import Worker, compact, feed, latest_candidates, mine_json, read_topic, stream_env

TWIKI = LOGS / "monitorware-twiki" / "access_log"
SEMI = LOGS / "semicomplete-apache" / "apache_logs"
NASA = LOGS / "nasa-ksc-1995-tsv-sample" / "nasa_19950701.tsv"


def nlines(path) -> int:
    with open(path, "rb") as fh:
        return sum(1 for _ in fh)


@pytest.fixture
def generated_log(tmp_path):
    from dustbuster.sim.forum import generate

    path = tmp_path / "forum.log"
    path.write_text("\n".join(generate(4000, seed=11)) + "\n")
    return path


def test_stream_equals_batch(kafka, tmp_path, generated_log):
    env = stream_env(kafka)
    w = Worker(env, tmp_path / "w", tmp_path / "w.log").start()
    try:
        sites = {"monitorware.example": TWIKI, "semicomplete.com": SEMI, "www.forum.co.il": generated_log,
                 "ksc.nasa.gov": NASA}
        for site, path in sites.items():
            feed(env, path, site)
        got = latest_candidates(env, {s: nlines(p) for s, p in sites.items()}, workers=[w])
        for site, path in sites.items():
            want = mine_json(path, site)
            assert compact(got[site]) == compact(want), site
            assert got[site]["stats"]["records"] == want["stats"]["read"]["records"]
            assert got[site]["stats"]["dropped_status"] == want["stats"]["read"]["dropped_status"]
        # sites with no change emit nothing: three more windows, no new candidate sets
        topic = env["DUST_TOPIC_PREFIX"] + "-candidates"
        before = len(read_topic(kafka, topic))
        time.sleep(3.5)
        assert len(read_topic(kafka, topic)) == before
    finally:
        w.stop()


def test_kill9_midway_loses_nothing_and_counts_nothing_twice(kafka, tmp_path):
    from dustbuster.sim.forum import generate
    from dustbuster.core.params import DustParams
    from dustbuster.state.partitions import PartitionState

    env = stream_env(kafka, partitions=1)
    log = tmp_path / "forum.log"
    lines = list(generate(12000, seed=12))
    log.write_text("\n".join(lines) + "\n")
    total, half = 12000, 6000
    first, second = tmp_path / "first.log", tmp_path / "second.log"
    first.write_text("\n".join(lines[:half]) + "\n")
    second.write_text("\n".join(lines[half:]) + "\n")
    w = Worker(env, tmp_path / "w", tmp_path / "w.log").start()
    feed(env, first, "www.forum.co.il")
    latest_candidates(env, {"www.forum.co.il": half}, workers=[w])  # the first half is applied
    feed(env, second, "www.forum.co.il")
    w.kill9()  # while it works on the second half, or just after: no timing is assumed
    st = PartitionState(tmp_path / "w" / "state", 0, DustParams())
    done = st.counters("www.forum.co.il").get("lines", 0)
    st.close()
    assert half <= done <= total, done
    w = Worker(env, tmp_path / "w", tmp_path / "w2.log").start()  # same state dir: a restart
    try:
        got = latest_candidates(env, {"www.forum.co.il": total}, workers=[w])["www.forum.co.il"]
        want = mine_json(log, "www.forum.co.il")
        assert compact(got) == compact(want)
        assert got["stats"]["lines"] == total  # none lost, none counted twice
        assert got["stats"]["records"] == want["stats"]["read"]["records"]
    finally:
        w.stop()


def test_url_lists_are_listed_across_a_kill9_and_a_rebuild(kafka, tmp_path):
    """Issue 28 item 5: a crawler's URL list sent to the raw topic (``dustbuster feed --format urls``)
    joins the site's URL list as listed URLs: the rules stay those of the log (no Figure 1 evidence of
    their own), the window's test URLs carry listed ones, and a kill -9 midway then a fresh worker
    rebuilt from the changelog count each line once and keep every listed URL."""
    from dustbuster.sim.forum import generate
    from dustbuster.state.partitions import LISTED_TEST_URLS

    site = "www.forum.co.il"
    env = stream_env(kafka, partitions=1)
    log, frontier, more = tmp_path / "forum.log", tmp_path / "frontier.txt", tmp_path / "more.log"
    log.write_text("\n".join(generate(5000, seed=21)) + "\n")
    later, _ = read_urllist_of(tmp_path, generate(5000, seed=22))
    known, _ = read_urllist_of(tmp_path, log.read_text().splitlines() + list(generate(40, seed=24)))
    listed = [u for u in later if u not in known][:1500]
    frontier.write_text("# a crawler's frontier\n" + "\n".join(listed) + "\n")
    more.write_text("\n".join(generate(50, seed=23)) + "\n")
    later_log = tmp_path / "later.log"
    later_log.write_text("\n".join(generate(40, seed=24)) + "\n")
    total = 5000 + len(listed) + 1 + 40
    w = Worker(env, tmp_path / "w", tmp_path / "w.log").start()
    feed(env, log, site)
    latest_candidates(env, {site: 5000}, workers=[w])  # the log is applied (the worker is in its group)
    feed(env, frontier, site, fmt="urls")
    # listed URLs alone send no candidate set (agents/windows.py window_key): they go with the next
    # set that the log changes
    feed(env, later_log, site)
    w.kill9()  # while it works on the URL list, or just after: no timing is assumed
    w = Worker(env, tmp_path / "w", tmp_path / "w2.log").start()  # same state dir: a restart
    try:
        got = latest_candidates(env, {site: total}, workers=[w])[site]
    finally:
        w.stop()
    both = tmp_path / "both.log"
    both.write_text(log.read_text() + later_log.read_text())
    want = mine_json(both, site)
    assert compact(got) == compact(want)  # listed URLs bring no candidate of their own
    assert got["stats"]["listed"] == len(listed) and got["stats"]["records"] == want["stats"]["read"]["records"]
    sent = [u for u in got["test_urls"] if u not in known]
    assert len(sent) == min(len(listed), LISTED_TEST_URLS) and set(sent) <= set(listed)
    fresh = Worker(env, tmp_path / "fresh", tmp_path / "fresh.log").start()  # no local state: a rebuild
    try:
        feed(env, more, site)
        again = latest_candidates(env, {site: total + 50}, workers=[fresh])[site]
    finally:
        fresh.stop()
    assert again["stats"]["listed"] == len(listed) and "rebuilt" in fresh.log.read_text(errors="replace")
    assert len([u for u in again["test_urls"] if u in set(listed)]) >= min(len(listed), LISTED_TEST_URLS)


def read_urllist_of(tmp_path, lines):
    from dustbuster.logs.reader import read_urllist

    p = tmp_path / "tmp-read.log"
    p.write_text("\n".join(lines) + "\n")
    return read_urllist([p], "auto", "www.forum.co.il")


def test_junk_on_the_topic_goes_to_rejects(kafka, tmp_path):
    import asyncio

    from aiokafka import AIOKafkaProducer

    env = stream_env(kafka)
    w = Worker(env, tmp_path / "w", tmp_path / "w.log").start()
    raw = env["DUST_TOPIC_PREFIX"] + "-raw"

    async def junk():
        p = AIOKafkaProducer(bootstrap_servers=kafka, max_request_size=4 * 1024 * 1024)
        await p.start()
        try:
            for value in [b"\x00\xff\xfebinary", b"{not json", b"[1,2]", json.dumps({"site": "x.org", "lines": "nope"}).encode(),
                          json.dumps({"site": "x.org", "lines": ["GET / HTTP/1.1", "x" * 70000]}).encode()]:
                await p.send_and_wait(raw, value, key=b"x.org")
            # a good batch keyed by another site: it would split x.org across partitions
            line = '1.2.3.4 - - [10/Oct/2000:13:55:36 -0700] "GET /a?x=1 HTTP/1.0" 200 2326'
            await p.send_and_wait(raw, json.dumps({"site": "x.org", "lines": [line]}).encode(), key=b"y.org")
        finally:
            await p.stop()

    try:
        asyncio.run(junk())
        feed(env, TWIKI, "monitorware.example")
        got = latest_candidates(env, {"monitorware.example": nlines(TWIKI)}, workers=[w])
        assert compact(got["monitorware.example"]) == compact(mine_json(TWIKI, "monitorware.example"))
        reasons = [json.loads(m.value)["reason"] for m in read_topic(kafka, env["DUST_TOPIC_PREFIX"] + "-rejects")]
        assert reasons.count("bad_json") == 2 and reasons.count("bad_record") == 2
        assert "oversized_line" in reasons and "malformed" in reasons
        assert reasons.count("site_key_mismatch") == 1
        assert w.alive()
    finally:
        w.stop()


def test_scale_out_and_a_worker_stopped_midway(kafka, tmp_path):
    """Three workers in one group; one is killed midway: its partitions move, their state is
    rebuilt from the URL changelog, and every site ends equal to dustbuster mine."""
    from dustbuster.sim.forum import generate

    env = stream_env(kafka, partitions=4)
    files = {}
    for k in range(6):
        p = tmp_path / f"site{k}.log"
        p.write_text("\n".join(generate(2500, seed=100 + k)) + "\n")
        files[f"site{k}.example"] = p
    halves = {}
    for site, p in files.items():
        lines = p.read_bytes().splitlines(keepends=True)
        a, b = tmp_path / f"{site}.a", tmp_path / f"{site}.b"
        a.write_bytes(b"".join(lines[: len(lines) // 2]))
        b.write_bytes(b"".join(lines[len(lines) // 2:]))
        halves[site] = (a, b, len(lines) // 2, len(lines))
    workers = [Worker(env, tmp_path / f"w{i}", tmp_path / f"w{i}.log").start() for i in range(3)]
    try:
        time.sleep(8)  # let all three join the group before the first lines
        for site, (a, _, _, _) in halves.items():
            feed(env, a, site)
        first = latest_candidates(env, {s: h[2] for s, h in halves.items()}, workers=workers)
        owners = {s: d["stats"]["worker"] for s, d in first.items()}
        victim = workers[2]
        moved = [s for s, o in owners.items() if o.endswith(f":{victim.proc.pid}")]
        if not moved:  # the group gave this worker no site: stop one that has some
            victim = next(w for w in workers if any(o.endswith(f":{w.proc.pid}") for o in owners.values()))
            moved = [s for s, o in owners.items() if o.endswith(f":{victim.proc.pid}")]
        victim.kill9()
        alive = [w for w in workers if w is not victim]
        for site, (_, b, _, _) in halves.items():
            feed(env, b, site)
        final = latest_candidates(env, {s: h[3] for s, h in halves.items()}, workers=alive, timeout=180)
        for site, path in files.items():
            assert compact(final[site]) == compact(mine_json(path, site)), site
            assert final[site]["stats"]["lines"] == halves[site][3]
        assert moved and all(not final[s]["stats"]["worker"].endswith(f":{victim.proc.pid}") for s in moved)
        logs = "".join(w.log.read_text(errors="replace") for w in alive)
        assert "rebuilt" in logs
    finally:
        for w in workers:
            w.stop()


def _applied_everything(env: dict, timeout: float = 120.0) -> int:
    """Wait until the URL changelog says every raw message was applied; its offset."""
    import asyncio

    from dustbuster.stream.changelog import Changelog

    boot, prefix = env["DUST_KAFKA_BOOTSTRAP"], env["DUST_TOPIC_PREFIX"]
    last = len(read_topic(boot, prefix + "-raw")) - 1
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if asyncio.run(Changelog(boot, prefix + "-urls-changelog").last_applied(0)) >= last:
            return last
        time.sleep(1.0)
    raise AssertionError(f"the worker did not apply raw offset {last}")


def test_a_window_due_at_a_stop_is_emitted_after_the_restart_and_by_a_new_owner(kafka, tmp_path):
    """A site changed when its worker stopped (its window not run yet) is mined after a restart with
    no new line, and by a worker that takes the partition over without a local copy (the store of
    every assigned partition is opened at the first tick, not at its next message: agents/assignment.py)."""
    from dustbuster.sim.forum import generate

    site = "www.forum.co.il"
    env = stream_env(kafka, window=3600.0, partitions=1)  # no window before the stop
    log = tmp_path / "forum.log"
    log.write_text("\n".join(generate(3000, seed=31)) + "\n")
    w = Worker(env, tmp_path / "w", tmp_path / "w.log").start()
    try:
        feed(env, log, site)
        _applied_everything(env)
    finally:
        w.stop()
    topic = env["DUST_TOPIC_PREFIX"] + "-candidates"
    assert read_topic(kafka, topic) == []  # the window was due, and never ran
    env["DUST_WINDOW_S"] = "1"
    want = mine_json(log, site)
    w = Worker(env, tmp_path / "w", tmp_path / "w2.log").start()  # the same state: a restart, nothing new fed
    try:
        got = latest_candidates(env, {site: 3000}, workers=[w])[site]
    finally:
        w.stop()
    assert compact(got) == compact(want)
    before = len(read_topic(kafka, topic))
    fresh = Worker(env, tmp_path / "fresh", tmp_path / "fresh.log").start()  # no local copy: rebuilt, mined
    try:
        deadline = time.monotonic() + 120
        while len(read_topic(kafka, topic)) == before and time.monotonic() < deadline and fresh.alive():
            time.sleep(1.0)
        again = json.loads(read_topic(kafka, topic)[-1].value)
    finally:
        fresh.stop()
    assert again["stats"]["lines"] == 3000 and compact(again) == compact(want)
    assert "rebuilt" in fresh.log.read_text(errors="replace")
