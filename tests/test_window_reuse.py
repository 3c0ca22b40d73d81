"""What a streaming window keeps from the last one gives what a fresh ``mine`` gives: the URL list's
parse (core/urls/urlindex.py ``URLIndex.refresh``) after URLs were appended and records replaced,
and whole windows after several increments, at the per-site cap (new URLs then refused), with
widened sizes, with the kept list dropped, and after a restart on the same store (nothing kept)."""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from dustbuster.core.mining.mine import mine, unsafe_flags
from dustbuster.core.params import DustParams
from dustbuster.core.urls.urlindex import URLIndex
from dustbuster.core.urls.urllist import URLInfo, URLList
from dustbuster.logs.reader import parse_lines
from dustbuster.sim.forum import generate
from dustbuster.state.partitions import Message, PartitionState

SITE = "www.forum.co.il"
PATHS = ["/a", "/a/b", "/A/b", "/story", "/story_1", "/x/y.php", "/"]
NAMES = ["id", "sid", "p", "q"]  # not "": mine raises RuleError on "?=1&" at ms=1 (a "drop but K" keep list holding "", before this reuse too)
VALUES = ["1", "2", "3", "", "ab", "1&", "x=y"]


@st.composite
def a_url(draw) -> str:
    url = "http://" + draw(st.sampled_from(["h", "www.h"])) + draw(st.sampled_from(PATHS))
    shape = draw(st.integers(0, 3))
    if shape == 0:
        return url
    items = []
    for _ in range(draw(st.integers(0, 3))):
        name = draw(st.sampled_from(NAMES))
        items.append(name if draw(st.integers(0, 5)) == 0 else name + "=" + draw(st.sampled_from(VALUES)))
    return url + "?" + "&".join(items) + ("&" if shape == 3 else "")


@st.composite
def steps(draw) -> list[list[tuple[str, int | None]]]:
    """Windows of records (url, size): new URLs and known ones with other sizes."""
    return draw(st.lists(st.lists(st.tuples(a_url(), st.one_of(st.none(), st.integers(0, 40))), min_size=1, max_size=12),
                         min_size=2, max_size=5))


def view(ix: URLIndex) -> dict:
    """Everything an index answers for its list."""
    names = sorted({n for e in ix.entries.values() for n, _ in e[1] or ()})
    return {
        "entries": list(ix.entries.items()),
        "occurrences": list(ix.occurrences().items()),
        "shapes": ix._shapes, "repeated": ix._repeated,
        "paths": list(ix.paths().items()), "url_scopes": list(ix.url_scopes().items()),
        "removal": [(u, n, ix.removal(u, n)) for u in ix.entries for n in names],
        "similar": [(u, v, ix.similar(u, v)) for u in ix.entries for v in ix.entries],
    }


def candidates(result) -> dict:
    doc = result.to_json()
    doc.pop("stats")
    return doc


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(steps(), st.booleans())
def test_refreshed_index_answers_as_a_new_one(windows, early):
    params = DustParams(ms=1, param_min_urls=1)
    ul = URLList()
    kept: URLIndex | None = None
    for records in windows:
        changed = set()
        for url, size in records:
            if url in ul.infos:
                old = ul.infos[url]
                info = URLInfo(old.hits, old.lo, old.hi)  # a new record object, as a window reads it
                info.observe(200, size)
                if (info.lo, info.hi) != (old.lo, old.hi):
                    changed.add(url)
                ul.infos[url] = info
            else:
                ul.add(url, 200, size)
        if kept is None:
            kept = URLIndex(ul, params)
            if early:
                view(kept)  # every cache filled before the next change
            continue
        kept.refresh(changed)
        assert view(kept) == view(URLIndex(ul, params))
        assert candidates(mine(ul, params, index=kept)) == candidates(mine(ul, params))


class Feed:
    def __init__(self, state: PartitionState) -> None:
        self.state, self.offset = state, -1

    def group(self, lines: list[str]) -> None:
        res = parse_lines(lines, SITE)
        self.offset += 1
        staged = self.state.stage_group("raw", [Message(self.offset, SITE, res.records, res.counts)])
        if staged is not None:
            self.state.commit(staged)


def check(state: PartitionState) -> None:
    got = state.window(SITE)
    ul = state.site(SITE).urllist()  # read from the store: nothing kept
    want = mine(ul, state.params)
    want.unsafe = unsafe_flags(want, ul)
    assert candidates(got) == candidates(want)


def test_windows_at_the_cap_equal_mine(tmp_path):
    lines = list(generate(6000, seed=5))
    other = list(generate(3000, seed=6))
    state = PartitionState(tmp_path, 0, DustParams(), max_urls_per_site=1500)
    feed = Feed(state)
    feed.group(lines[:2000])
    check(state)  # cold: the list read, the index built
    for k in range(3):  # new URLs, then (at the cap) only known ones with new sizes and hits
        feed.group(other[k * 600:(k + 1) * 600])
        feed.group([ln.replace('" 200 ', '" 200 7', 1) for ln in lines[k * 300:k * 300 + 150]])
        check(state)
    assert state.site(SITE).url_count() == 1500
    state.site(SITE).forget_list()  # the partition's budget dropped the list (and so its parse)
    feed.group(lines[2000:2600])
    check(state)
    state.close()
    again = PartitionState(tmp_path, 0, DustParams(), max_urls_per_site=1500)  # a restart: caches empty
    feed.state = again
    feed.group(other[2000:])
    check(again)
    feed.group([ln.replace('" 200 ', '" 200 3', 1) for ln in lines[3000:3400]])
    check(again)
    again.close()
