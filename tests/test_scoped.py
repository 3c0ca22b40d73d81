"""Mining scoped parameter rules and query rules (core/mining/scoped.py) on small hand-built URL lists, the
language switch of mine(), and the streaming miner equal to the batch one on such a list.

Sizes decide LikelySimilar (core/urls/urllist.py): URLs of one page get one size; a meaningful
parameter changes the size by far more than DustParams.size_slack (2 % of the larger size)."""

from __future__ import annotations

import json
import random

import pytest

from dustbuster.core import DustParams, URLList, canonical, mine
from dustbuster.core.mining.incremental import SiteSupports
from dustdev.supports import table as supports_table
from dustdev.memorykv import MemoryKV
from dustbuster.core.mining.mine import mine_table
from dustbuster.core.mining.scoped import holding_scopes, mine_query_rules, mine_scoped_param_rules
from dustbuster.core.model.scopedrules import QueryRule

P = DustParams()


def build(rows) -> URLList:
    ul = URLList()
    for url, size in rows:
        ul.add(url, 200, size)
    return ul


def sid_rows(section: str, pages: int = 3, meaningful: bool = False, base: int = 1000, name: str = "sid"):
    """Pages under /section, each listed bare and with three values of ``name``: the same size when
    the parameter is a no-op, sizes 400 bytes apart (never similar) when it is meaningful."""
    rows = []
    for i in range(pages):
        size = base + 100 * i
        rows.append((f"http://h{section}/p{i}", size))
        for j, v in enumerate(("S1", "S2", "S3")):
            rows.append((f"http://h{section}/p{i}?{name}={v}", size + (400 * (j + 1) if meaningful else 0)))
    return rows


def summary(rules):
    return sorted((r.name, r.action, r.value, r.scope) for r in rules)


# ------------------------------------------------------------------------------ parameter rules

def test_no_op_under_a_meaningful_under_b_gives_a_rule_for_a_only():
    ul = build(sid_rows("/a") + sid_rows("/b", meaningful=True, base=6000))
    rules = mine_scoped_param_rules(ul, P)
    assert summary(rules) == [("sid", "remove", None, "/a")]
    r = rules[0]
    assert (r.support, r.disqualified, r.status) == (9, 0, "likely")
    assert r.text == "remove sid=* under /a"
    assert canonical("http://h/a/p9?sid=Z", rules) == "http://h/a/p9"
    assert canonical("http://h/b/p0?sid=S1", rules) == "http://h/b/p0?sid=S1"


def test_no_op_everywhere_gives_the_global_rule():
    ul = build(sid_rows("/a") + sid_rows("/b", base=6000))
    rules = mine_scoped_param_rules(ul, P)
    assert summary(rules) == [("sid", "remove", None, "")]
    assert (rules[0].support, rules[0].disqualified) == (18, 0)
    assert rules[0].text == "remove sid=*"
    assert rules[0].evidence == {"urls_with_param": 18, "similar_ratio": 1.0}


def test_remove_rule_takes_the_widest_holding_scope():
    # evidence only under /report/1 and nothing against it elsewhere: a remove rule is stated for
    # the whole site (the validator tests it on every test URL that carries the parameter)
    rows = sid_rows("/report/1") + [(f"http://h/other/x{i}", 300 + 50 * i) for i in range(5)]
    rows += [(f"http://h/report/{k}", 2000 + 10 * k) for k in range(2, 5)]
    rules = mine_scoped_param_rules(build(rows), P)
    assert summary(rules) == [("sid", "remove", None, "")]


def test_replace_evidence_under_one_report_narrows_the_scope():
    # a value (a sort key) means something per script: seen only under /report/1, stated there
    rows = [(f"http://h/report/1?sort={v}&p={i}", 5000 + 100 * i) for i in range(3) for v in ("a", "b", "c")]
    rows += [(f"http://h/other/x{i}", 300 + 50 * i) for i in range(5)]
    rules = mine_scoped_param_rules(build(rows), P)
    # issue 23: the sort-less URL is in no log line, so the replace groups are remove evidence too
    # (thesis §5.3), and the remove rule read off them is narrowed as the replace rule is
    assert [(r.name, r.action, r.scope) for r in rules if r.name == "sort"] == [
        ("sort", "remove", "/report/1"), ("sort", "replace", "/report/1")]


def test_meaningful_sub_scope_below_ms_does_not_block():
    rows = sid_rows("/w", pages=4) + sid_rows("/w/History", pages=1, meaningful=True, base=5000)
    rows = [(u, s) for u, s in rows if not ("/History/" in u and u.endswith("S3"))]
    # one meaningful History page with two values: 2 comparisons, fewer than ms = 3, no veto:
    # the whole site holds (12 of 14), the widest holding scope
    rules = mine_scoped_param_rules(build(rows), P)
    assert summary(rules) == [("sid", "remove", None, "")]
    assert (rules[0].support, rules[0].disqualified) == (12, 2)


def test_meaningful_sub_scope_with_ms_comparisons_breaks_homogeneity():
    rows = sid_rows("/w", pages=4) + sid_rows("/w/History", pages=1, meaningful=True, base=5000)
    rules = mine_scoped_param_rules(build(rows), P)
    scopes = [r.scope for r in rules if r.action == "remove"]
    # /w holds on its ratio alone (12 of 15 = 0.8) but /w/History, with 3 comparisons, is below it:
    # only the pages of /w, one by one, hold
    assert scopes == ["/w/p0", "/w/p1", "/w/p2", "/w/p3"]
    assert canonical("http://h/w/History/p0?sid=S1", rules) == "http://h/w/History/p0?sid=S1"
    assert canonical("http://h/w/p2?sid=S9", rules) == "http://h/w/p2"


@pytest.mark.parametrize("tally, want", [
    ({"": [9, 0], "/a": [9, 0], "/a/p": [3, 0]}, [""]),
    ({"": [9, 9], "/a": [9, 0], "/b": [0, 9]}, ["/a"]),
    ({"": [12, 3], "/w": [12, 3], "/w/H": [0, 3], "/w/p": [3, 0], "/w/q": [9, 0]}, ["/w/p", "/w/q"]),
    ({"": [12, 2], "/w": [12, 2], "/w/H": [0, 2]}, [""]),               # 2 comparisons < ms: no veto
    ({"": [2, 0], "/a": [2, 0]}, []),                                      # support below ms
    ({"": [3, 1], "/a": [3, 1]}, [""]),                                    # 0.75 exactly
    ({"": [3, 2], "/a": [3, 0], "/b": [0, 2]}, ["/a"]),
])
def test_holding_scopes(tally, want):
    assert holding_scopes(tally, P) == want


def test_replace_rules_per_scope_with_each_scope_value():
    rows = []
    for sec, common in (("/x", "en"), ("/y", "fr")):
        for i in range(3):
            size = 1000 + 100 * i + (0 if sec == "/x" else 3000)
            rows += [(f"http://h{sec}/p{i}?lang={v}", size) for v in ("en", "de", "fr")]
            rows.append((f"http://h{sec}/q{i}?lang={common}", 9000 + i))  # makes `common` the most frequent
    rows += sid_rows("/z", pages=4, meaningful=True, base=7000, name="lang")
    rules = mine_scoped_param_rules(build(rows), P)
    # issue 23: the lang-less URLs are in no log line: the replace groups are remove evidence too
    # (thesis §5.3), narrowed per scope as the replace rules; the validator decides each
    assert summary(rules) == [("lang", "remove", None, "/x"), ("lang", "remove", None, "/y"),
                              ("lang", "replace", "en", "/x"), ("lang", "replace", "fr", "/y")]
    assert all(r.support == 6 and r.disqualified == 0 for r in rules)
    rules = [r for r in rules if r.action == "replace"]
    assert canonical("http://h/x/p7?lang=de", rules) == "http://h/x/p7?lang=en"
    assert canonical("http://h/y/p7?lang=de", rules) == "http://h/y/p7?lang=fr"
    assert canonical("http://h/z/p7?lang=de", rules) == "http://h/z/p7?lang=de"


def test_remove_covers_replace_and_popularity():
    rules = mine_scoped_param_rules(build(sid_rows("/a")), P)
    assert summary(rules) == [("sid", "remove", None, "")]  # replace holds too; remove says more
    assert mine_scoped_param_rules(build(sid_rows("/a")), P.with_(param_min_urls=10)) == []


# ------------------------------------------------------------------------------ query rules

def tracking_rows(section: str, names=("utm", "ref"), pages: int = 3, base: int = 1000):
    """Pages listed bare and with one tracking parameter each, all of one size per page."""
    rows = []
    for i in range(pages):
        rows.append((f"http://h{section}/p{i}", base + 100 * i))
        rows += [(f"http://h{section}/p{i}?{n}=v{i}", base + 100 * i) for n in names]
    return rows


def test_query_drop_needs_two_parameter_names():
    rules = mine_query_rules(build(tracking_rows("/s")), P)
    assert rules == [QueryRule("/s", "drop", (), 6, 0)]
    assert rules[0].evidence["parameters"] == ["ref", "utm"]
    assert canonical("http://h/s/p5?utm=a&ref=b&x=1", rules) == "http://h/s/p5"
    assert mine_query_rules(build(tracking_rows("/s", names=("utm",))), P) == []


def test_query_drop_not_where_the_query_matters():
    rows = tracking_rows("/s")
    for i in range(3):  # /t: the query is the page
        rows.append((f"http://h/t/p{i}", 100))
        rows += [(f"http://h/t/p{i}?{n}=v{i}", 3000 + 700 * k) for k, n in enumerate(("id", "page"))]
    got = [(r.scope, r.action) for r in mine_query_rules(build(rows), P)]
    assert got == [("/s", "drop")]


def test_sort_rule_from_permuted_queries():
    rows = []
    for i in range(3):
        rows += [(f"http://h/o/p{i}?a={i}&b=2", 1000 + 100 * i), (f"http://h/o/p{i}?b=2&a={i}", 1000 + 100 * i)]
    rows += [("http://h/z", 50)]
    rules = mine_query_rules(build(rows), P)
    assert [(r.scope, r.action, r.support, r.disqualified) for r in rules] == [("/o", "sort", 3, 0)]
    assert canonical("http://h/o/p9?b=1&a=2", rules) == "http://h/o/p9?a=2&b=1"
    assert canonical("http://h/z?b=1&a=2", rules) == "http://h/z?b=1&a=2"


def test_no_sort_rule_when_order_matters():
    rows = []
    for i in range(3):
        rows += [(f"http://h/o/p{i}?a={i}&b=2", 1000), (f"http://h/o/p{i}?b=2&a={i}", 2000)]
    assert mine_query_rules(build(rows), P) == []


# ------------------------------------------------------------------------------ mine(): language, determinism

def extended_site():
    """A site with a scoped parameter, a whole-query and an order rule, and a substring rule."""
    rows = sid_rows("/a") + sid_rows("/b", meaningful=True, base=6000) + tracking_rows("/s", base=8000)
    for i in range(3):
        size = 12000 + 100 * i
        rows += [(f"http://h/o/p{i}?x={i}&y=2", size), (f"http://h/o/p{i}?y=2&x={i}", size)]
    for i in range(6):
        size = 15000 + 100 * i
        rows += [(f"http://h/d{i}/index.html", size), (f"http://h/d{i}/", size)]
    return rows


def test_language_paper_has_only_global_parameter_rules():
    ul = build(extended_site())
    paper = mine(ul, P.with_(language="paper"))
    assert paper.general == [] and paper.scoped_params is None
    assert all(r.scope == "" for r in paper.param_rules())
    assert {r["type"] for r in paper.to_json()["rules"]} <= {"substring", "parameter"}
    ext = mine(ul, P)
    assert ext.scoped_params is not None
    assert ("sid", "remove", None, "/a") in summary(ext.param_rules())
    kinds = {(r.type, getattr(r, "action", None), getattr(r, "scope", None)) for r in ext.general}
    assert {("query", "drop", "/s"), ("query", "sort", "/o")} <= kinds
    assert ext.stats["scoped_param_rules"] >= 1 and ext.stats["query_rules"] == 2
    types = [r.type for r in ext.likely_rules()]
    assert types == sorted(types, key=["parameter", "query", "case", "substring", "pattern"].index)


def test_mining_is_deterministic():
    rows = extended_site()
    first = mine(build(rows), P).to_json()
    again = mine(build(rows), P).to_json()
    for doc in (first, again):
        doc["stats"] = {k: v for k, v in doc["stats"].items() if not k.endswith("_seconds")}
    assert json.dumps(first, sort_keys=True) == json.dumps(again, sort_keys=True)
    shuffled = list(rows)
    random.Random(7).shuffle(shuffled)
    other = mine(build(shuffled), P)
    assert summary(other.param_rules()) == summary(mine(build(rows), P).param_rules())
    assert sorted(json.dumps(r.to_json(), sort_keys=True) for r in other.general if r.type == "query") == sorted(
        json.dumps(r, sort_keys=True) for r in first["rules"] if r["type"] == "query")


# ------------------------------------------------------------------------------ streaming = batch

def test_streaming_miner_equals_batch_on_scoped_and_query_rules():
    rows = extended_site()
    records = [(u, 200, s, None, None) for u, s in rows]
    records += [(u, 304, None, None, None) for u, _ in rows[::5]]  # repeats that add no size
    batch_ul = URLList()
    for rec in records:
        batch_ul.add(*rec)
    want = mine(batch_ul, P)
    assert any(r.scope for r in want.param_rules()) and any(r.type == "query" for r in want.general)
    sup = SiteSupports(MemoryKV(), "h", P)
    for n, rec in enumerate(records, 1):
        sup.observe(*rec)
        if n % 7 == 0:
            sup.commit()
    sup.commit()
    table = supports_table(sup)
    table.stats = {"urls": len(sup.urllist())}
    got = mine_table(table, sup.urllist(), P)
    as_json = lambda rules: [r.to_json() for r in rules]  # noqa: E731
    assert as_json(got.param_rules()) == as_json(want.param_rules())
    assert as_json(got.general) == as_json(want.general)
    assert as_json(got.substring_rules()) == as_json(want.substring_rules())


def test_partition_window_equals_batch_on_scoped_and_query_rules(tmp_path):
    """The worker's path: messages staged and committed to RocksDB, then a mining window."""
    from dustbuster.state.partitions import PartitionState

    records = [(u, 200, s, None, None) for u, s in extended_site()]
    batch_ul = URLList()
    for rec in records:
        batch_ul.add(*rec)
    want = mine(batch_ul, P)
    state = PartitionState(tmp_path, 0, P)
    try:
        for offset, k in enumerate(range(0, len(records), 10)):
            staged = state.stage("raw", offset, "h", records[k:k + 10], {"lines": 10})
            state.commit(staged)
        got = state.window("h")
    finally:
        state.close()
    assert [r.to_json() for r in got.param_rules()] == [r.to_json() for r in want.param_rules()]
    assert [r.to_json() for r in got.general] == [r.to_json() for r in want.general]


def keep_rows():
    """/list?id=N shows page N (its removal changes the page); utm and ref change nothing."""
    rows = [("http://h/list", 300)]
    for i in range(1, 5):
        size = 1000 + 500 * i
        rows += [(f"http://h/list?id={i}{extra}", size) for extra in ("", "&utm=a", "&ref=b", "&utm=c&ref=d")]
    return rows


def test_drop_but_the_meaningful_parameters():
    rules = mine_query_rules(build(keep_rows()), P)
    assert [(r.scope, r.action, r.keep) for r in rules] == [("/list", "drop", ("id",))]
    r = rules[0]
    # a closed list: exactly the names its evidence compared; x, never seen, is kept (it may matter)
    assert r.only == ("ref", "utm") and r.text == "drop ref, utm from the query under /list"
    assert (r.support, r.disqualified) == (12, 0) and r.evidence["parameters"] == ["ref", "utm"]
    assert canonical("http://h/list?utm=z&id=7&x=1", rules) == "http://h/list?id=7&x=1"
    assert canonical("http://h/list?ref=q&id=7&utm=z", rules) == "http://h/list?id=7"


def test_bare_and_valued_items_of_one_name_do_not_crash_the_order_miner():
    rows = [("http://h/p?a&a=1", 500), ("http://h/p?a=1&a", 500), ("http://h/p", 500)]
    mine_query_rules(build(rows), P)  # a bare item and a valued one of one name: no TypeError
