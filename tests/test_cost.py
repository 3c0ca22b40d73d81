"""Bounded cost: envelopes per URL capped in both engines (streaming == batch still),
a per-site cap on tracked URLs, and the state work off the event loop.  docs/cost.md."""

from __future__ import annotations

import asyncio
import logging
import threading

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from dustbuster.core import DustParams, URLList, count_supports
from dustbuster.core.mining.detect import _positions, envelope_count, max_span
from dustbuster.core.mining.incremental import SiteSupports
from dustdev.supports import supports
from dustdev.memorykv import MemoryKV
from dustbuster.core.urls.tokens import token_count
from dustbuster.state.partitions import PartitionState, Stores
from tests.oracle import oracle_supports

MAX_TOKENS = 256  # the decoders' token cap (logs.record.Limits, dustbuster mine --max-tokens)


def test_envelopes_per_url_are_bounded_by_the_cap():
    p = DustParams()
    for n in range(2, MAX_TOKENS + 3):  # ^ and $ included
        span = max_span(n, p.S, p.max_envelopes)
        assert 1 <= span <= p.S
        assert len(_positions(n, p.S, p.max_envelopes)[0]) == envelope_count(n, span) <= p.max_envelopes
        if envelope_count(n, p.S) <= p.max_envelopes:  # URLs under the cap keep the papers' S
            assert span == p.S
        elif span < p.S:  # and a capped URL gets the longest span that fits
            assert envelope_count(n, span + 1) > p.max_envelopes
    assert len(_positions(258, p.S, 0)[0]) == envelope_count(258, p.S) > 8000  # uncapped: ~8,700


def test_a_url_at_the_token_cap_costs_a_small_multiple_of_a_typical_one():
    p = DustParams()
    typical = "http://www.forum.co.il/story?id=1234&LastView=&Close="
    longest = "http://x.org/" + "/".join(f"w{k}" for k in range(200))
    longest = longest[:longest.rfind("/", 0, len(longest))]
    while token_count(longest) > MAX_TOKENS:
        longest = longest[:longest.rfind("/")]
    assert token_count(longest) > MAX_TOKENS - 3
    env = [len(_positions(token_count(u) + 2, p.S, p.max_envelopes)[0]) for u in (typical, longest)]
    assert env[1] <= 10 * env[0]


PARTS = ["a", "b", "1", "x.y", "id", "story", "index.html"]
SEPS = ["/", "?", "=", "&", "_", "."]


@st.composite
def varied_records(draw):
    """Records of URLs of 5 to ~60 tokens, sharing prefixes and suffixes, so that a small cap bites."""
    stems = ["http://h", "http://www.h"]
    recs = []
    for _ in range(draw(st.integers(2, 10))):
        body = draw(st.lists(st.tuples(st.sampled_from(SEPS), st.sampled_from(PARTS)), max_size=25))
        url = draw(st.sampled_from(stems)) + "".join(s + t for s, t in body)
        size = draw(st.one_of(st.none(), st.integers(0, 3)))
        recs.append((url, 200, size, None, None))
    return recs


def urllist(recs) -> URLList:
    ul = URLList()
    for r in recs:
        ul.add(*r)
    return ul


CAPPED = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@CAPPED
@given(varied_records(), st.integers(8, 120))
def test_capped_batch_engine_equals_the_oracle(recs, cap):
    ul = urllist(recs)
    params = DustParams(S=6, t_low=3, t_high=5, max_envelopes=cap)
    table = count_supports(ul, params)
    assert table.as_dict("low") == oracle_supports(ul, params, params.t_low)
    assert table.as_dict("high") == oracle_supports(ul, params, params.t_high)


@CAPPED
@given(varied_records(), st.integers(8, 120), st.integers(1, 4))
def test_capped_streaming_equals_capped_batch(recs, cap, commit_every):
    params = DustParams(S=6, t_low=3, t_high=5, max_envelopes=cap)
    inc = SiteSupports(MemoryKV(), "h", params)
    ul = urllist(recs)
    for n, rec in enumerate(recs, 1):
        inc.observe(*rec)
        if n % commit_every == 0 or n == len(recs):
            inc.commit()
    want = count_supports(ul, params)
    got = supports(inc)
    assert {k: v[0] for k, v in got.items() if v[0]} == want.as_dict("low")
    assert {k: v[1] for k, v in got.items() if v[1]} == want.as_dict("high")


def test_real_log_results_unchanged_by_the_default_cap(logs_dir):
    """The cap only trims substrings of very long URLs: on a real log whose longest URLs pass it
    (76 tokens) the mined rules are those of the uncapped Figure 1."""
    from dustbuster.core.mining.mine import mine
    from dustbuster.logs.reader import read_urllist

    files = [logs_dir / "netarchivesuite-heritrix-crawllogs" / n
             for n in ("crawl.2006-07-07.job42.log", "crawl.2012-05-23.idna.log")]
    ul, _ = read_urllist(files)
    longest = max(token_count(u) + 2 for u in ul.urls())
    p = DustParams()
    assert envelope_count(longest, p.S) > p.max_envelopes, "the log no longer exercises the cap"

    def rules(params):
        r = mine(ul, params)
        return [(x.text, x.support, x.support_high) for x in r.substring_rules()], [x.text for x in r.param_rules()]

    assert rules(p) == rules(p.with_(max_envelopes=0))


# ---------------------------------------------------------------- per-site cap on tracked URLs

def _records(urls):
    return [(u, 200, 100 + len(u) % 3, None, None) for u in urls]


def test_site_cap_tracks_the_first_urls_and_counts_the_rest(tmp_path, caplog):
    urls = [f"http://s.org/p{k}/index.html" for k in range(30)] + [f"http://s.org/p{k}/" for k in range(30)]
    st_ = PartitionState(tmp_path, 0, DustParams(), max_urls_per_site=40)
    other = [f"http://t.org/q{k}" for k in range(5)]
    offset = 0
    with caplog.at_level(logging.WARNING, logger="dustbuster.state.partitions"):
        for at in range(0, len(urls), 7):
            staged = st_.stage("raw", offset, "s.org", _records(urls[at:at + 7]), {"lines": 7})
            st_.commit(staged)
            offset += 1
        # lines of URLs already tracked still count after the cap
        staged = st_.stage("raw", offset, "s.org", _records(urls[:3]), {"lines": 3})
        assert staged.new_urls == 0 and staged.over_cap == 0
        st_.commit(staged)
        offset += 1
        staged = st_.stage("raw", offset, "t.org", _records(other), {"lines": 5})  # another site: its own cap
        st_.commit(staged)
    tracked = st_.site("s.org").urllist()
    assert list(tracked.urls()) == urls[:40]
    assert st_.site("s.org").url_count() == 40 and len(st_.site("t.org").urllist()) == 5
    assert st_.counters("s.org")["over_cap"] == 20
    assert tracked.infos[urls[0]].hits == 2
    capped = [r for r in caplog.records if "DUST_MAX_URLS_PER_SITE" in r.getMessage()]
    assert len(capped) == 1 and "s.org" in capped[0].getMessage()  # logged once per site
    # the state is the batch engine's on the URLs that were admitted
    ul = URLList()
    for r in _records(urls) + _records(urls[:3]):
        if r[0] in tracked.infos:
            ul.add(*r)
    want = count_supports(ul, DustParams())
    got = supports(st_.site("s.org"))
    assert {k: v[1] for k, v in got.items() if v[1]} == want.as_dict("high")
    assert {k: v[0] for k, v in got.items() if v[0]} == want.as_dict("low")
    st_.close()


def test_site_cap_zero_means_no_cap():
    inc = SiteSupports(MemoryKV(), "s", DustParams(), max_urls=0)
    for k in range(50):
        inc.observe(f"http://s/{k}", 200, 1)
    inc.commit()
    assert inc.url_count() == 50 and inc.over_cap == 0


def test_rebuild_reports_progress(tmp_path):
    st_ = PartitionState(tmp_path, 0, DustParams())
    sites = {"a.org": {f"http://a.org/{k}": {"h": 1, "lo": k % 3, "hi": k % 3} for k in range(25)},
             "b.org": {f"http://b.org/x{k}": {"h": 1} for k in range(10)}}
    calls = []
    import dustbuster.state.partitions as sp

    old, sp.REBUILD_LOG_EVERY = sp.REBUILD_LOG_EVERY, 10
    try:
        n = st_.rebuild("raw", 7, sites, {}, progress=lambda done, total: calls.append((done, total)))
    finally:
        sp.REBUILD_LOG_EVERY = old
    assert n == 35 and st_.applied("raw") == 7
    assert calls[0] == (0, 35) and calls[-1] == (35, 35)
    assert [c[0] for c in calls] == sorted(c[0] for c in calls) and (10, 35) in calls and (30, 35) in calls
    st_.close()


# ---------------------------------------------------------------- heavy work off the event loop

def test_state_work_runs_off_the_event_loop(tmp_path):
    """While a message is being staged, the event loop keeps running: the records handed to stage()
    stop half-way until a coroutine on the loop lets them go on.  If stage() ran on the loop this
    could never happen (the wait would time out and the test fail)."""
    stores = Stores(tmp_path, DustParams())
    gate = threading.Event()
    reached = threading.Event()
    loop_thread = []

    def records():
        for k in range(200):
            if k == 100:
                reached.set()
                if not gate.wait(timeout=60):
                    raise AssertionError("the event loop did not run while the state was being updated")
            yield (f"http://s.org/p/{k}", 200, 10, None, None)

    async def main():
        loop_thread.append(threading.get_ident())
        state = await stores.run(stores.get, 0)
        work = asyncio.ensure_future(stores.run(state.stage, "raw", 0, "s.org", records(), {"lines": 200}))
        ticks = 0
        while not reached.is_set():  # the loop runs while the state thread works
            await asyncio.sleep(0.01)
            ticks += 1
        gate.set()
        staged = await work
        await stores.run(state.commit, staged)
        return staged, ticks

    staged, _ = asyncio.run(main())
    assert staged.new_urls == 200
    assert stores.get(0).site("s.org").url_count() == 200
    stores.close()


# ---------------------------------------------------------------- a crash, and an older store

def test_a_crash_before_the_commit_leaves_the_committed_state(tmp_path):
    """The process dies after stage() and before commit(): reopened, the store is the one of the
    last committed message, and the same message then counts once."""
    urls = [f"http://s.org/a/{k}/b/{k % 7}/index.html" for k in range(60)]
    more = [f"http://s.org/c/{k}/d/index.html" for k in range(60)]
    st_ = PartitionState(tmp_path / "a", 0, DustParams())
    st_.commit(st_.stage("raw", 0, "s.org", _records(urls), {"lines": 60}))
    st_.stage("raw", 1, "s.org", _records(more), {"lines": 60})
    st_.close()  # the process dies here: no commit
    st_ = PartitionState(tmp_path / "a", 0, DustParams())
    assert st_.applied("raw") == 0 and st_.site("s.org").url_count() == 60
    st_.commit(st_.stage("raw", 1, "s.org", _records(more), {"lines": 60}))
    ul = URLList()
    for r in _records(urls + more):
        ul.add(*r)
    want = count_supports(ul, DustParams())
    got = supports(st_.site("s.org"))
    assert {k: v[1] for k, v in got.items() if v[1]} == want.as_dict("high")
    assert {k: v[0] for k, v in got.items() if v[0]} == want.as_dict("low")
    assert st_.counters("s.org")["lines"] == 120
    st_.close()


def test_a_store_of_the_older_layout_is_wiped_for_a_rebuild(tmp_path, caplog):
    """Envelope buckets and supports on disk (format 1, before issue 13): the store is wiped when
    opened, so the ingest agent sees applied = -1 and rebuilds it from the URL changelog."""
    from dustbuster.state.rocks import RocksKV

    kv = RocksKV(tmp_path / "p" / "p0000")
    kv.write({b"B" + bytes(16): b"", b"Ps.org\0a\0b": b"x"}, {b"meta:applied:raw": b"41"})
    kv.close()
    caplog.set_level("WARNING")
    st_ = PartitionState(tmp_path / "p", 0, DustParams())
    assert st_.applied("raw") == -1 and not list(st_.kv.scan(b"B")) and "older layout" in caplog.text
    st_.close()
    st_ = PartitionState(tmp_path / "p", 0, DustParams())  # the current layout is kept
    assert st_.kv.get(b"meta:format") == b"2"
    st_.close()


def test_a_message_staged_but_never_committed_leaves_nothing_behind(tmp_path):
    """The changelog write failed (or the agent raised) after stage(): the same message comes again
    and must count once."""
    urls = [f"http://s.org/x/{k}/index.html" for k in range(20)] + [f"http://s.org/x/{k}/" for k in range(20)]
    st_ = PartitionState(tmp_path, 0, DustParams())
    st_.commit(st_.stage("raw", 0, "s.org", _records(urls[:20]), {"lines": 20}))
    st_.stage("raw", 1, "s.org", _records(urls[20:]), {"lines": 20})  # never committed
    staged = st_.stage("raw", 1, "s.org", _records(urls[20:]), {"lines": 20})
    assert staged.new_urls == 20
    st_.commit(staged)
    ul = URLList()
    for r in _records(urls):
        ul.add(*r)
    want = count_supports(ul, DustParams())
    got = supports(st_.site("s.org"))
    assert {k: v[1] for k, v in got.items() if v[1]} == want.as_dict("high")
    assert st_.counters("s.org")["lines"] == 40 and st_.site("s.org").url_count() == 40
    st_.close()


def test_a_site_window_waits_in_proportion_to_its_cost():
    """A window of d seconds is followed by the site's next one no sooner than d / share after it
    started (agents/windows.py): a site at its cap cannot hold the state thread all the time."""
    from dustbuster.agents.windows import Pacer

    p = Pacer(0.5)
    a, b = (0, "a.org"), (0, "b.org")
    assert p.due(a, 0.0) and p.due(b, 0.0)
    p.ran(a, 10.0, 4.0)
    assert not p.due(a, 17.9) and p.due(a, 18.0) and p.due(b, 11.0)


def test_a_site_window_share_is_what_the_other_work_leaves():
    """The share is 1 − 2f (f: the thread's other work per second between the site's windows),
    between 0.5 and 0.9: an idle thread lets a 7 s window run every 10 s tick; an ingest that needs
    half the thread keeps the share at one half (agents/windows.py)."""
    from dustbuster.agents.windows import Pacer

    p = Pacer(0.5, 0.9)
    a = (0, "a.org")
    assert p.ran(a, 10.0, 7.0, busy=7.0) == 0.5  # the first window: nothing known yet
    # 17 → 30: the thread did 0.26 s of other work in 13 s (f = 0.02): share 0.96, capped at 0.9
    assert p.ran(a, 30.0, 7.0, busy=7.0 + 0.26 + 7.0) == 0.9
    assert p.due(a, 30.0 + 7.0 / 0.9) and not p.due(a, 37.7)
    # 37 → 50: 6.5 s of other work in 13 s (f = 0.5): the share falls back to one half
    assert p.ran(a, 50.0, 7.0, busy=14.26 + 6.5 + 7.0) == 0.5
    assert not p.due(a, 63.9) and p.due(a, 64.0)
    assert p.ran((0, "b.org"), 0.0, 1.0) == 0.5  # without the busy seconds: one half


def test_window_ticks_keep_their_times():
    """Ticks every interval from the start: a tick's own time does not push the next one (no
    drift), one that runs past the next tick's time is followed at once, never by a burst."""
    import asyncio

    from dustbuster.agents.windows import ticks

    now = [0.0]
    started: list[float] = []

    async def sleep(d: float) -> None:
        now[0] += d

    async def run(bodies: list[float]) -> None:
        gen = ticks(10.0, clock=lambda: now[0], sleep=sleep)
        for body in bodies:
            await gen.__anext__()
            started.append(now[0])
            now[0] += body  # the tick's windows take this long

    asyncio.run(run([7.0, 1.0, 25.0, 1.0, 3.0]))
    assert started == [10.0, 20.0, 30.0, 55.0, 60.0]


def test_a_window_between_stage_and_commit_is_not_reused_after_the_commit(tmp_path):
    """A window that runs while a group is staged (its changelog write pending) mines the committed
    URL list; once the group is committed, the next window mines again (found by bench_scale: a
    stale result was reused with the new line counts)."""
    from dustbuster.core.mining.mine import mine

    a = [f"http://s.org/a/{k}/index.html" for k in range(30)] + [f"http://s.org/a/{k}/" for k in range(30)]
    b = [f"http://s.org/b/{k}/story.php?id={k}" for k in range(40)]
    st_ = PartitionState(tmp_path, 0, DustParams())
    st_.commit(st_.stage("raw", 0, "s.org", _records(a), {"lines": len(a)}))
    assert st_.window("s.org").stats["reused"] is False
    staged = st_.stage("raw", 1, "s.org", _records(b), {"lines": len(b)})
    between = st_.window("s.org")
    assert between.stats["urls"] == len(a) and between.stats["reused"] is True
    st_.commit(staged)
    after = st_.window("s.org")
    assert after.stats["reused"] is False and after.stats["urls"] == len(a) + len(b)
    again = st_.window("s.org")
    assert again.stats["reused"] is True
    ul = URLList()
    for r in _records(a + b):
        ul.add(*r)
    want = mine(ul, DustParams())
    assert [(p.alpha, p.beta, p.support) for p in again.kept] == [(p.alpha, p.beta, p.support) for p in want.kept]
    st_.close()


def test_a_group_of_several_sites_with_a_full_record_cache(tmp_path, monkeypatch):
    """The decoded-record cache is trimmed only after a group is written: a group spanning two
    sites with the cache past its bound used to lose the second site's records (KeyError)."""
    import dustbuster.state.partitions as sp

    monkeypatch.setattr(sp, "CACHED_RECORDS", 2)
    st_ = sp.PartitionState(tmp_path, 0, DustParams())
    a = [f"http://a.org/x/{k}" for k in range(5)]
    b = [f"http://b.org/y/{k}" for k in range(5)]
    for off in (0, 1):  # the second group sees every URL again: all cached or re-read
        st_.commit(st_.stage_group("raw", [sp.Message(2 * off, "a.org", _records(a), {"lines": 5}),
                                           sp.Message(2 * off + 1, "b.org", _records(b), {"lines": 5})]))
    assert set(st_.site("a.org").urllist()) == set(a) and set(st_.site("b.org").urllist()) == set(b)
    assert all(i.hits == 2 for i in st_.site("b.org").urllist().infos.values())
    assert st_.counters("a.org")["lines"] == 10 and st_.applied("raw") == 3
    st_.close()


def test_a_failed_changelog_write_is_tried_again(monkeypatch):
    import asyncio

    import dustbuster.agents.ingest as ingest

    calls = []

    class Flaky:
        async def write(self, partition, offset, records):
            calls.append(offset)
            if len(calls) < 3:
                raise ConnectionError("broker gone")

    async def no_sleep(_s):
        return None

    monkeypatch.setattr(ingest.asyncio, "sleep", no_sleep)
    asyncio.run(ingest.write_changelog(Flaky(), 0, 7, []))
    assert calls == [7, 7, 7]


def test_stores_count_the_state_threads_busy_seconds(tmp_path):
    """Stores.busy_s: the seconds the one state thread spent running calls (the window pacer's
    measure of the other work, agents/windows.py); a call's exception counts too."""
    import time as _time

    import pytest

    stores = Stores(tmp_path, DustParams())

    def boom() -> None:
        _time.sleep(0.05)
        raise ValueError("x")

    async def run() -> None:
        assert await stores.run(_time.sleep, 0.1) is None
        with pytest.raises(ValueError):
            await stores.run(boom)

    try:
        asyncio.run(run())
        assert stores.busy_s >= 0.15
    finally:
        stores.close()
