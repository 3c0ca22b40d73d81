"""The incremental supports equal the batch engine's at every commit (the streaming engine's core invariant)."""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from dustbuster.core import DustParams, URLList, count_supports, detect
from dustbuster.core.mining.incremental import SiteSupports
from dustdev.supports import likely_pairs, supports
from dustdev.memorykv import MemoryKV

SEGMENTS = ["a", "b", "ab", "1", "12", "index.html", "story", "id"]
SEPS = ["/", "?", "=", "&", "_", "."]


@st.composite
def record_stream(draw):
    """Records with repeated URLs, widening sizes, unknown sizes, digests, replays."""
    urls = []
    for _ in range(draw(st.integers(1, 9))):
        parts = draw(st.lists(st.tuples(st.sampled_from(SEPS), st.sampled_from(SEGMENTS)), max_size=3))
        urls.append("http://" + draw(st.sampled_from(["h", "www.h"])) + "".join(s + t for s, t in parts))
    recs = []
    for _ in range(draw(st.integers(1, 40))):
        u = draw(st.sampled_from(urls))
        status = draw(st.sampled_from([200, 200, 200, 304, 301]))
        size = draw(st.one_of(st.none(), st.integers(0, 6)))
        digest = draw(st.one_of(st.none(), st.none(), st.sampled_from(["d1", "d2"])))
        recs.append((u, status, size, digest, None))
    return recs


def batch(recs, params):
    ul = URLList()
    for r in recs:
        ul.add(*r)
    return count_supports(ul, params)


def incremental_dict(inc):
    low = {k: v[0] for k, v in supports(inc).items() if v[0]}
    high = {k: v[1] for k, v in supports(inc).items() if v[1]}
    return low, high


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(record_stream(), st.integers(2, 4), st.integers(1, 5), st.booleans())
def test_incremental_equals_batch_at_every_commit(recs, t_low, commit_every, sim):
    params = DustParams(S=5, t_low=t_low, t_high=t_low + 2, similarity=sim)
    kv = MemoryKV()
    inc = SiteSupports(kv, "h", params)
    for n, rec in enumerate(recs, 1):
        inc.observe(*rec)
        if n % commit_every == 0 or n == len(recs):
            inc.commit()
            want = batch(recs[:n], params)
            low, high = incremental_dict(inc)
            assert low == want.as_dict("low")
            assert high == want.as_dict("high")


@settings(max_examples=60, deadline=None)
@given(record_stream())
def test_replay_changes_no_support(recs):
    params = DustParams(S=5, t_low=3, t_high=5)
    inc = SiteSupports(MemoryKV(), "h", params)
    for r in recs:
        inc.observe(*r)
    inc.commit()
    before = supports(inc)
    for r in recs:  # at-least-once redelivery of everything
        inc.observe(*r)
    inc.commit()
    assert supports(inc) == before
    assert not any(k.startswith(b"P") for k in inc.pending_writes())


def test_sites_are_separate():
    kv = MemoryKV()
    a, b = SiteSupports(kv, "a.org"), SiteSupports(kv, "b.org")
    for i in range(4):
        a.observe(f"http://a.org/x{i}/index.html", 200, 10)
        a.observe(f"http://a.org/x{i}/", 200, 10)
        b.observe(f"http://b.org/y{i}", 200, 10)
    a.commit()
    b.commit()
    assert likely_pairs(a) and not likely_pairs(b)
    assert len(a.urllist()) == 8 and len(b.urllist()) == 4


def test_rocksdb_on_disk_equals_batch_and_survives_restart(tmp_path, logs_dir):
    """The real TWiki log through RocksDB, closed and reopened midway: equal to dustbuster mine."""
    from dustbuster.core import DustParams
    from dustbuster.state.rocks import RocksKV
    from dustbuster.logs.reader import iter_records, read_urllist

    params = DustParams()
    recs = [(r.url, r.status, r.size, r.digest, r.sketch)
            for r in iter_records([logs_dir / "monitorware-twiki" / "access_log"], site="m.ex")]
    half = len(recs) // 2
    kv = RocksKV(tmp_path / "db")
    inc = SiteSupports(kv, "m.ex", params)
    for r in recs[:half]:
        inc.observe(*r)
    inc.commit({b"meta:offset": str(half).encode()})
    kv.close()
    kv = RocksKV(tmp_path / "db")  # a restart
    assert kv.get(b"meta:offset") == str(half).encode()
    inc = SiteSupports(kv, "m.ex", params)
    for r in recs[half:]:
        inc.observe(*r)
    inc.commit()
    ul, _ = read_urllist([logs_dir / "monitorware-twiki" / "access_log"], site="m.ex")
    want = count_supports(ul, params)
    low, high = incremental_dict(inc)
    assert low == want.as_dict("low") and high == want.as_dict("high")
    assert [(p.alpha, p.beta, p.support) for p in likely_pairs(inc)] == [
        (p.alpha, p.beta, p.support) for p in detect(ul, params)[0]]
    assert set(inc.urllist()) == set(ul)
    kv.close()


@settings(max_examples=60, deadline=None)
@given(record_stream(), st.integers(1, 30))
def test_rebuild_from_final_records_equals_incremental(recs, cut):
    """What a worker rebuilds from the URL changelog equals what the original worker had."""
    from dustbuster.core.urls.urlrecord import info_from_json, info_to_json

    params = DustParams(S=5, t_low=3, t_high=5)
    orig = SiteSupports(MemoryKV(), "h", params)
    changelog: dict[str, dict] = {}
    for n, r in enumerate(recs, 1):
        orig.observe(*r)
        if n % cut == 0 or n == len(recs):
            changelog.update({u: info_to_json(i) for u, i in orig.touched.items()})
            orig.commit()
    rebuilt = SiteSupports(MemoryKV(), "h", params)
    for u, j in changelog.items():
        rebuilt.load(u, info_from_json(j))
    rebuilt.commit()
    assert supports(rebuilt) == supports(orig)
    assert {u: (i.hits, i.interval) for u, i in rebuilt.urllist().infos.items()} == {
        u: (i.hits, i.interval) for u, i in orig.urllist().infos.items()}
