"""URLs beside the log in the streaming state (issue 28 item 5, issue 23): a URL list's URLs (a crawler's
frontier, the links of pages the validator fetched) and the URLs logged only with status >= 400 are kept
by the worker as the batch reader keeps them (core/urls/urllist.py ``listed`` and ``errors``), survive a
rebuild from the changelog, have caps of their own, and reach the validator with each window."""

from __future__ import annotations

import orjson
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from dustbuster.core import DustParams, URLList
from dustbuster.core.mining import incremental
from dustbuster.core.mining.incremental import ERROR_ID, LISTED_ID, SiteSupports
from dustdev.memorykv import MemoryKV
from dustbuster.core.urls.urlrecord import dec_info
from dustbuster.logs.reader import parse_lines
from dustbuster.state.partitions import LISTED_TEST_URLS, Message, PartitionState

URLS = [f"http://h/p{i}?x={i % 3}" for i in range(8)]


@st.composite
def events(draw):
    """Log records (status < 400), 4xx lines, and URL-list URLs of a few URLs, interleaved."""
    out = []
    for _ in range(draw(st.integers(1, 40))):
        u = draw(st.sampled_from(URLS))
        kind = draw(st.sampled_from(["log", "listed", "listed", "error"]))
        out.append((kind, u, draw(st.integers(0, 9))))
    return out


def batch_list(evs) -> URLList:
    """What the batch reader makes of the same events (``mine --urls``): log URLs by ``add``, URL-list
    URLs by ``list_only``, 4xx URLs by ``note_errors``."""
    ul = URLList()
    for kind, u, size in evs:
        if kind == "log":
            ul.add(u, 200, size)
        elif kind == "listed":
            ul.list_only(u)
        else:
            ul.note_errors([u])
    return ul


def apply(sup: SiteSupports, ev) -> None:
    kind, u, size = ev
    if kind == "log":
        sup.observe(u, 200, size)
    elif kind == "listed":
        sup.list_only(u)
    else:
        sup.note_error(u)


def same(stream: URLList, want: URLList) -> None:
    """The streaming list equals the batch one: the log's URLs in order with their records; the error
    URLs not logged; the listed URLs neither logged nor logged with an error (an error outranks a
    listing in the stream: a URL the site answers 4xx is no test URL)."""
    assert list(stream.infos.items()) == list(want.infos.items())
    assert set(stream.errors) == set(want.errors) - set(want.infos)
    assert set(stream.listed) == set(want.listed) - set(want.errors)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(events(), st.integers(1, 6))
def test_the_stream_keeps_what_the_batch_reader_keeps_at_every_commit(evs, every):
    sup = SiteSupports(MemoryKV(), "h", DustParams(S=5))
    for n, ev in enumerate(evs, 1):
        apply(sup, ev)
        if n % every == 0 or n == len(evs):
            sup.commit()
            want = batch_list(evs[:n])
            same(sup.current_urllist(), want)  # kept between windows, brought up to date
            same(sup.urllist(), want)  # read from the store
            assert sup.side_count(LISTED_ID) == len(sup.urllist().listed)
            assert sup.side_count(ERROR_ID) == len(sup.urllist().errors)


@settings(max_examples=80, deadline=None)
@given(events(), st.integers(1, 6))
def test_a_rebuild_from_the_changelog_records_gives_the_same_lists(evs, every):
    """The records written (the changelog's bytes, last per URL as compaction keeps them) loaded by a
    fresh worker give the same URL list, listed and error URLs included, and the same counts."""
    orig = SiteSupports(MemoryKV(), "h", DustParams(S=5))
    changelog: dict[str, bytes] = {}
    for n, ev in enumerate(evs, 1):
        apply(orig, ev)
        if n % every == 0 or n == len(evs):
            puts = orig.pending_writes()
            changelog.update({k[len(orig.record_prefix):].decode(): v for k, v in puts.items()
                              if k.startswith(orig.record_prefix)})
            orig.kv.write(puts, {})
            orig.committed()
    rebuilt = SiteSupports(MemoryKV(), "h", DustParams(S=5))
    for url, raw in sorted(changelog.items(), key=lambda kv: dec_info(kv[1])[0]):
        uid, info = dec_info(raw)
        rebuilt.load(url, info, uid)
    rebuilt.commit()
    a, b = orig.urllist(), rebuilt.urllist()
    assert list(a.infos) == list(b.infos) and a.listed.keys() == b.listed.keys() and a.errors.keys() == b.errors.keys()
    assert [rebuilt.side_count(k) for k in (LISTED_ID, ERROR_ID)] == [orig.side_count(k) for k in (LISTED_ID, ERROR_ID)]


def test_listed_then_logged_takes_the_next_id_and_leaves_the_listed_urls():
    sup = SiteSupports(MemoryKV(), "h")
    sup.observe("http://h/a", 200, 10)
    sup.list_only("http://h/b")
    sup.note_error("http://h/c")
    sup.list_only("http://h/a")  # a log URL is never listed
    sup.commit()
    ul = sup.urllist()
    assert list(ul.infos) == ["http://h/a"] and list(ul.listed) == ["http://h/b"] and list(ul.errors) == ["http://h/c"]
    sup.observe("http://h/b", 200, 12)
    sup.list_only("http://h/c")  # an error URL is not listed again
    sup.commit()
    ul = sup.current_urllist()
    assert list(ul.infos) == ["http://h/a", "http://h/b"] and not ul.listed and list(ul.errors) == ["http://h/c"]
    assert sup.url_count() == 2 and sup.side_count(LISTED_ID) == 0 and sup.side_count(ERROR_ID) == 1


def test_each_kind_beside_the_log_has_its_own_cap(monkeypatch):
    """Listed URLs are capped at the site's cap and error URLs at MAX_ERROR_URLS, apart from the
    log's URLs: a flood of frontier URLs never costs the log a URL."""
    monkeypatch.setattr(incremental, "MAX_ERROR_URLS", 2)
    sup = SiteSupports(MemoryKV(), "h", max_urls=3)
    for i in range(5):
        sup.list_only(f"http://h/l{i}")
        sup.note_error(f"http://h/e{i}")
    for i in range(3):
        sup.observe(f"http://h/g{i}", 200, 5)
    sup.commit()
    ul = sup.urllist()
    assert len(ul.listed) == 3 and len(ul.errors) == 2 and len(ul.infos) == 3
    assert sup.side_over_cap == {LISTED_ID: 2, ERROR_ID: 3} and sup.over_cap == 0
    sup.observe("http://h/l0", 200, 5)  # the log is at its cap: the listed URL stays listed, counted
    assert sup.over_cap == 1 and sup.side_count(LISTED_ID) == 3


def test_a_url_list_batch_is_listed_and_its_junk_rejected():
    """A raw batch of format ``urls`` (issue 28 item 5): its URLs are listed, never records; a line
    that is no URL is a counted reject; a batch of bare URLs sent as ``auto`` is read the same way."""
    res = parse_lines(["http://w.org/a?x=1", "/b", "# a comment", "not a url line"], "w.org", "urls")
    assert res.records == [] and res.listed == ["http://w.org/a?x=1", "http://w.org/b"]
    assert res.counts["listed"] == 2 and res.counts["rejected"] == 1 and res.counts["records"] == 0
    assert [r for r, _, _ in res.rejects] == ["malformed"]
    auto = parse_lines(["http://w.org/a?x=1", "http://w.org/b"] * 30, "w.org")
    assert auto.fmt == "urls" and auto.listed and not auto.records


def test_a_log_batch_keeps_its_error_urls():
    lines = ['1.2.3.4 - - [10/Oct/2000:13:55:36 -0700] "GET /a HTTP/1.0" 200 2326',
             '1.2.3.4 - - [10/Oct/2000:13:55:36 -0700] "GET /gone?rev=9 HTTP/1.0" 404 120']
    res = parse_lines(lines, "w.org", "common")
    assert [r[0] for r in res.records] == ["http://w.org/a"] and res.errors == ["http://w.org/gone?rev=9"]


def test_a_window_sends_listed_and_error_urls_and_a_rebuild_keeps_them(tmp_path):
    """The partition state end to end: messages with listed and error URLs staged, the changelog
    records written, the window's test URLs (the log's newest, then the newest listed) and error
    URLs; a fresh worker rebuilt from those changelog records sends the same."""
    part = PartitionState(tmp_path / "a", 0, DustParams())
    log_urls = [f"http://s.org/p{i}" for i in range(20)]
    listed = [f"http://s.org/l{i}?ref={i}" for i in range(LISTED_TEST_URLS + 10)]
    msgs = [Message(1, "s.org", [(u, 200, 100 + i, None, None) for i, u in enumerate(log_urls)], {"lines": 20}),
            Message(2, "s.org", [], {"lines": len(listed), "listed": len(listed)}, listed=listed),
            Message(3, "s.org", [], {"lines": 1}, errors=["http://s.org/gone"])]
    staged = part.stage_group("raw", msgs)
    changelog = {k.decode(): v for k, v in staged.changelog}
    part.commit(staged)
    res = part.window("s.org")
    assert res.test_urls[:20] == log_urls[::-1] or set(res.test_urls[:20]) == set(log_urls)
    assert len(res.test_urls) == 20 + LISTED_TEST_URLS and set(res.test_urls[20:]) <= set(listed)
    assert res.error_urls == ["http://s.org/gone"]
    assert part.counters("s.org")["listed"] == len(listed)
    assert res.stats["listed_urls"] == len(listed) and res.stats["error_urls"] == 1

    again = PartitionState(tmp_path / "b", 0, DustParams())
    sites = {"s.org": {k.split("\0", 1)[1]: orjson.loads(v) for k, v in changelog.items() if "\0\0" not in k}}
    again.rebuild("raw", 3, sites, {"s.org": orjson.loads(changelog["s.org\0\0count"])})
    res2 = again.window("s.org")
    assert set(res2.test_urls) == set(res.test_urls) and res2.error_urls == res.error_urls
    assert res2.to_json()["rules"] == res.to_json()["rules"]
    part.close()
    again.close()


def test_the_error_urls_of_a_candidate_set_reach_the_validators_narrowing(tmp_path, monkeypatch):
    """The window's error URLs travel in the candidate set (``error_urls``, checked by the strict
    decoder) to ``validate_site`` (``SiteCandidates.logged_errors``), as ``dustbuster validate`` passes the log's."""
    import asyncio
    import json

    import pytest

    from dustbuster.agents import validator
    from dustbuster.core.errors import ParseError
    from dustbuster.state.verdicts import VerdictStore
    from dustbuster.stream.records import candidates_from_json
    from dustbuster.stream.settings import Settings

    doc = {"site": "forum.test", "window": 3, "rules": [], "stats": {}, "params": {},
           "test_urls": ["http://forum.test/a"], "error_urls": ["http://forum.test/gone?rev=1", 7, "http://forum.test/" + "x" * 9000]}
    cand = candidates_from_json(doc)
    assert cand.error_urls == ["http://forum.test/gone?rev=1"]
    with pytest.raises(ParseError):
        candidates_from_json(doc | {"error_urls": "http://forum.test/x"})
    assert candidates_from_json({k: v for k, v in doc.items() if k != "error_urls"}).error_urls == []
    seen = {}

    async def fake_validate_site(cands, *args, **kw):
        seen["logged_errors"] = list(cands.logged_errors)
        return None  # an outage: nothing decided

    monkeypatch.setattr(validator, "validate_site", fake_validate_site)
    conf = tmp_path / "sites.json"
    conf.write_text(json.dumps({"forum.test": {"origins": ["http://forum.test:9"], "allow_private": True,
                                               "resolve": {"forum.test": "127.0.0.1"}}}))
    store = VerdictStore(tmp_path / "verdicts")

    async def publish(site, value):
        pass

    try:
        parts = validator.RoundParts(Settings(validator_sites=conf), store, publish)
        got = asyncio.run(validator.validation_round("forum.test", cand, parts))
    finally:
        store.close()
    assert got == "unchanged" and seen["logged_errors"] == ["http://forum.test/gone?rev=1"]


def test_a_candidate_set_is_shown_with_its_time_and_listed_urls(capsys):
    """``dustbuster candidates``: the window as a time a person reads (not a count of windows since
    1970), and the listed URLs beside the log's unique URLs."""
    from dustbuster.cli.candidates import _print_candidates

    d = {"site": "s.org", "window": 598585285, "rules": [], "params": {}, "test_urls": [],
         "stats": {"lines": 12, "urls": 3, "listed_urls": 7, "unsafe_flagged": 0, "ingest_last": 1795755873.2}}
    _print_candidates("s.org", d, 10)
    first = capsys.readouterr().out.splitlines()[0]
    assert first.startswith("# s.org: window 598585285 (lines up to 2026-11-27 05:04:33 UTC), 12 lines, 3 unique URLs (+ 7 listed), ")
