"""A streaming window's candidates equal ``dustbuster mine``'s on the same URL list at every window
boundary, now that a site's URL list is kept between windows (core/mining/incremental.py,
``SiteSupports.current_urllist``): after groups of new URLs, of known URLs with wider sizes, of
hits only, with a group staged and not committed (not seen), after the kept list was dropped for
its backlog, and after a restart on the same store."""

from __future__ import annotations

from dustbuster.core.mining.mine import mine, unsafe_flags
from dustbuster.core.params import DustParams
from dustbuster.core.urls.urllist import URLList
from dustbuster.logs.reader import parse_lines
from dustbuster.sim.forum import generate
from dustbuster.state.partitions import Message, PartitionState

SITE = "www.forum.co.il"


def candidates(result) -> dict:
    doc = result.to_json()
    doc.pop("stats")
    return doc


def expected(records: list[tuple]) -> tuple[dict, URLList]:
    ul = URLList()
    for r in records:
        ul.add(*r)
    want = mine(ul, DustParams())
    want.unsafe = unsafe_flags(want, ul)
    return candidates(want), ul


class Feed:
    def __init__(self, state: PartitionState) -> None:
        self.state, self.offset, self.records = state, -1, []

    def group(self, lines: list[str], commit: bool = True):
        res = parse_lines(lines, SITE)
        self.offset += 1
        staged = self.state.stage_group("raw", [Message(self.offset, SITE, res.records, res.counts)])
        if commit:
            self.state.commit(staged)
            self.records += res.records
        return staged, res.records


def check(state: PartitionState, records: list[tuple]) -> None:
    got = state.window(SITE)
    want, ul = expected(records)
    assert candidates(got) == want
    assert got.stats["urls"] == len(ul)
    assert list(state.site(SITE).current_urllist().infos) == list(ul.infos)


def test_windows_equal_mine_at_every_boundary(tmp_path):
    lines = list(generate(2400, seed=3))
    state = PartitionState(tmp_path, 0, DustParams())
    feed = Feed(state)
    feed.group(lines[:800])
    check(state, feed.records)  # the first window reads the store
    feed.group(lines[800:1200])  # new URLs and known ones
    feed.group(lines[:300])  # known URLs only: hits (and sizes already seen)
    check(state, feed.records)
    staged, pending = feed.group(lines[1200:1600], commit=False)
    check(state, feed.records)  # the staged group is not seen
    state.commit(staged)
    feed.records += pending
    check(state, feed.records)
    wider = [ln.replace('" 200 ', '" 200 9', 1) for ln in lines[1600:1700]]  # the same URLs, new sizes
    feed.group(wider + lines[1700:2000])
    check(state, feed.records)
    state.close()
    again = PartitionState(tmp_path, 0, DustParams())  # a restart: the list read from the store
    feed.state = again
    feed.group(lines[2000:])
    check(again, feed.records)
    again.close()


def test_a_long_backlog_drops_the_kept_list(tmp_path):
    lines = list(generate(1500, seed=4))
    state = PartitionState(tmp_path, 0, DustParams())
    feed = Feed(state)
    feed.group(lines[:200])
    check(state, feed.records)
    state.site(SITE).max_records = 10  # a backlog beyond it drops the kept list
    for k in range(200, 1500, 300):
        feed.group(lines[k:k + 300])
    assert state.site(SITE)._list is None
    check(state, feed.records)
    state.close()


def test_kept_url_lists_stay_within_the_partition_budget(tmp_path, monkeypatch):
    """The sites' kept URL lists (current_urllist) are bounded per partition: beyond KEPT_URLS the
    lists of the sites windowed longest ago are dropped, never the one just windowed, and a dropped
    list is read from the store again with the same candidates (review finding: memory had grown with
    every site of the partition)."""
    from dustbuster.state import partitions

    monkeypatch.setattr(partitions, "KEPT_URLS", 1)
    state = PartitionState(tmp_path / "s", 0, DustParams())
    lines = list(generate(600, seed=5))
    for offset, name in enumerate(("a.example", "b.example")):
        res = parse_lines(lines, name)
        state.commit(state.stage_group("raw", [Message(offset, name, res.records, res.counts)]))
    first = candidates(state.window("a.example"))
    state.window("b.example")
    assert state.site("b.example").kept_urls > 0 and state.site("a.example").kept_urls == 0
    assert list(state._kept) == ["b.example"]
    state.site("a.example").generation += 1  # not the reused result: mined again from the store
    assert candidates(state.window("a.example")) == first and list(state._kept) == ["a.example"]
