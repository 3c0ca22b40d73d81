"""The shared parse of a URL list (core/urls/urlindex.py) answers exactly as the plain helpers it
replaces in phase 3 (thesis §5.3) and the scoped miners: query.split, query.remove_param,
scope.split_url / scopes_of and URLList.similar, on awkward query strings included."""

from __future__ import annotations

from collections import defaultdict

from hypothesis import given, settings
from hypothesis import strategies as st

from dustbuster.core import DustParams, URLList
from dustbuster.core.mining.casemine import case_groups, mine_case_rules
from dustbuster.core.mining.mine import mine
from dustbuster.core.mining.paramrules import detect_param_rules, replace_groups
from dustbuster.core.urls.query import join, remove_param, split
from dustbuster.core.urls.scope import scopes_of, split_url
from dustbuster.core.mining.scoped import mine_query_rules, mine_scoped_param_rules
from dustbuster.core.urls.urlindex import URLIndex

P = DustParams(ms=1, param_min_urls=2)

_name = st.sampled_from(["id", "sid", "", "ID", "a", "x=y"])
_value = st.sampled_from(["1", "2", "", "=", "x", "10"])
_item = st.one_of(st.tuples(_name, _value).map(lambda nv: f"{nv[0]}={nv[1]}"), _name)
_query = st.one_of(st.none(), st.lists(_item, max_size=4).map("&".join))
_head = st.sampled_from(["http://h.com", "https://h.com", "http://H.com", "http://x"])
_path = st.lists(st.sampled_from(["a", "A", "b", "", "x&y"]), max_size=3).map(lambda s: "/" + "/".join(s))
_url = st.tuples(_head, _path, _query).map(lambda t: t[0] + t[1] + ("" if t[2] is None else "?" + t[2]))
_row = st.tuples(_url, st.sampled_from([None, 100, 101, 5000]))


def _urllist(rows) -> URLList:
    ul = URLList()
    for url, size in rows:
        ul.add(url, 200, size)
    return ul


def _reference_occurrences(ul: URLList) -> dict[str, list[tuple[str, str, int]]]:
    """The first ``name=value`` item of each name in each URL, as query.split gives it."""
    occ: dict[str, list[tuple[str, str, int]]] = defaultdict(list)
    for url in ul:
        _, items = split(url)
        seen: set[str] = set()
        for idx, (name, value) in enumerate(items or ()):
            if value is not None and name and name not in seen:
                seen.add(name)
                occ[name].append((url, value, idx))
    return occ


@settings(max_examples=150, deadline=None)
@given(st.lists(_row, min_size=1, max_size=40))
def test_index_answers_as_the_plain_helpers(rows):
    ul = _urllist(rows)
    ix = URLIndex(ul, P)
    for url in ul:
        base, items = ix.entries[url]
        want_base, want_items = split(url)
        assert (base, None if items is None else list(items)) == (want_base, want_items)
        assert ix.url_scopes()[url] == tuple(scopes_of(split_url(url)[1]))
        assert ix.paths()[base][0] == split_url(url)[1]
        for name in ("id", "sid", "", "a", "x", "nope"):
            v = remove_param(url, name)
            assert ix.without(url, name) == v
            want = ul.similar(url, v, P) if v != url and v in ul else None
            assert ix.removal(url, name) == want
            assert ix.removal(url, name) == want  # cached
    occ = ix.occurrences()
    assert {n: [(u, v) for u, v, *_ in rows] for n, rows in occ.items()} == \
        {n: [(u, v) for u, v, _ in rows] for n, rows in _reference_occurrences(ul).items()}
    for name, rows in _reference_occurrences(ul).items():
        groups: dict[str, list[tuple[str, str]]] = defaultdict(list)
        for url, value, idx in rows:
            base, items = split(url)
            ctx = list(items or ())
            ctx[idx] = (name, "\x00")
            groups[join(base, ctx)].append((value, url))
        assert replace_groups(ix, name) == [g for g in groups.values() if len(g) > 1]


@settings(max_examples=60, deadline=None)
@given(st.lists(_row, min_size=1, max_size=60))
def test_miners_give_the_same_with_a_shared_index_or_without(rows):
    ul = _urllist(rows)
    ix = URLIndex(ul, P)
    assert detect_param_rules(ul, P, ix) == detect_param_rules(ul, P)
    assert mine_scoped_param_rules(ul, P, ix) == mine_scoped_param_rules(ul, P)
    assert mine_query_rules(ul, P, ix) == mine_query_rules(ul, P)
    assert mine_case_rules(ul, P, ix) == mine_case_rules(ul, P)
    assert case_groups(ul, ix) == case_groups(ul)


def test_index_of_another_list_or_params_is_not_reused():
    ul = _urllist([("http://h/a?id=1", 100), ("http://h/a", 100)])
    ix = URLIndex(ul, P)
    assert URLIndex.of(ul, P, ix) is ix
    assert URLIndex.of(ul, P.with_(ms=2), ix) is not ix
    assert URLIndex.of(_urllist([("http://h/b", 1)]), P, ix) is not ix


def test_empty_item_left_after_a_removal_finds_the_bare_question_mark_url():
    """``h/p?sid=1&`` without sid is ``h/p?``: one empty item that parses as none."""
    ul = _urllist([("http://h/p?sid=1&", 100), ("http://h/p?", 100)])
    assert URLIndex(ul, P).removal("http://h/p?sid=1&", "sid") is True
    one = P.with_(param_min_urls=1)
    _, cands = detect_param_rules(ul, one)
    assert [(c.support, c.disqualified) for c in cands if (c.name, c.action) == ("sid", "remove")] == [(1, 0)]
    assert [r.text for r in mine(ul, one).param_rules()] == [r.text for r in mine_scoped_param_rules(ul, one)]
