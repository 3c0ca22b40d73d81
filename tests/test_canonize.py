"""Canonization (thesis Figure 5.5) and the rule JSON form."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dustbuster.core import DustParams, ParamRule, RuleError, SubstringRule, URLList, canonize, mine, rule_from_json
from dustbuster.core.canon.canonize import canonical, redundancy
from dustbuster.core.model.rules import rules_from_document

R = SubstringRule.from_parts

# Figure 7: the valid rules detected in the forum site (as the paper prints them)
FORUM = [
    R(".co.il/story_", ".co.il/story?id="),
    R("&LastView=&Close=", ""),
    R(".php3?", "?"),
    R(".il/story_", ".il/story.php3?id="),
    R("&NewOnly=1&tvqz=2", "&NewOnly=1"),
    R(".co.il/thread_", ".co.il/thread?rep="),
]


@pytest.mark.parametrize(
    "url, expect",
    [
        ("http://www.f.co.il/story_12", "http://www.f.co.il/story?id=12"),
        ("http://www.f.co.il/story.php3?id=12", "http://www.f.co.il/story?id=12"),
        ("http://www.f.co.il/story?id=12&LastView=&Close=", "http://www.f.co.il/story?id=12"),
        ("http://www.f.co.il/show.php3?x=1&NewOnly=1&tvqz=2", "http://www.f.co.il/show?x=1&NewOnly=1"),
        ("http://www.f.co.il/thread_7", "http://www.f.co.il/thread?rep=7"),
        ("http://www.f.co.il/mystory_12", "http://www.f.co.il/mystory_12"),  # token-aligned only
        ("http://www.f.co.il/", "http://www.f.co.il/"),
    ],
)
def test_forum_rules_figure_7(url, expect):
    assert canonical(url, FORUM) == expect


@pytest.mark.parametrize(
    "url, expect",
    [
        ("http://www.site.com/index.html", "http://www.site.com"),
        ("http://www.site.com/d/index.html", "http://www.site.com/d"),
        ("http://www.site.com/index.html?x=1", "http://www.site.com/index.html?x=1"),  # anchored at $
        ("http://www.site.com/index.htmlx", "http://www.site.com/index.htmlx"),
    ],
)
def test_index_html_anchored(url, expect):
    assert canonical(url, [R("/index.html", "", anchor_end=True)]) == expect


def test_start_anchor():
    r = R("http://www.", "http://", anchor_start=True)
    assert canonical("http://www.a.com/http://www.b", [r]) == "http://a.com/http://www.b"
    assert canonical("x/http://www.b", [r]) == "x/http://www.b"


def test_first_occurrence_per_iteration_and_ma():
    r = [R("//", "/")]
    res = canonize("http://h/a//b//c", r)
    assert res.canonical == "http:/h/a/b/c" and res.converged
    long = "http://h/" + "//" * 30
    res = canonize(long, r, ma=10)
    assert not res.converged and res.iterations == 10  # MA bounds the work (Fig. 5.5)


def test_parameter_rules():
    rm, rep = ParamRule("sid", "remove"), ParamRule("sort", "replace", "asc")
    assert canonical("http://h/p?sid=1&a=2", [rm]) == "http://h/p?a=2"
    assert canonical("http://h/p?sid=1", [rm]) == "http://h/p"
    assert canonical("http://h/p?a=1&sid=2&sid=3", [rm]) == "http://h/p?a=1"
    assert canonical("http://h/p?xsid=1", [rm]) == "http://h/p?xsid=1"
    assert canonical("http://h/p?sort=desc&a", [rep]) == "http://h/p?sort=asc&a"
    assert canonical("http://h/p?sort", [rep]) == "http://h/p?sort"  # no value: untouched


def test_redundancy_metric():
    urls = ["http://h/a/index.html", "http://h/a", "http://h/b", "http://h/b"]
    red = redundancy(urls, [R("/index.html", "", anchor_end=True)])
    assert (red.urls, red.unique_before, red.unique_after) == (4, 3, 2)
    assert red.discovered_redundancy == pytest.approx(1 / 3)


def test_rule_json_roundtrip():
    for r in FORUM + [R("/index.html", "", anchor_end=True), R("http://www.", "http://", anchor_start=True)]:
        j = json.loads(json.dumps(r.to_json()))
        assert rule_from_json(j) == r
    p = ParamRule("sid", "replace", "0", support=4, disqualified=1)
    assert rule_from_json(p.to_json()) == p


@pytest.mark.parametrize(
    "bad",
    [
        {"type": "substring", "alpha": "a"},
        {"type": "substring", "alpha": "a", "beta": "a"},
        {"type": "substring", "alpha": 1, "beta": "b"},
        {"type": "parameter", "name": "x", "action": "explode"},
        {"type": "parameter", "name": "x", "action": "replace"},
        {"type": "parameter", "name": "a&b", "action": "remove"},
        {"type": "regex"},
        [],
    ],
)
def test_bad_rule_json(bad):
    with pytest.raises(RuleError):
        rule_from_json(bad)


def test_rules_from_document_orders_param_rules_first():
    doc = {"rules": [FORUM[0].to_json()], "param_rules": [ParamRule("sid", "remove").to_json()]}
    assert [r.type for r in rules_from_document(doc)] == ["parameter", "substring"]
    with pytest.raises(RuleError):
        rules_from_document({"nothing": 1})


# ---------------------------------------------------------------- properties

@settings(max_examples=300, deadline=None)
@given(st.text(max_size=60))
def test_canonize_never_raises(s):
    res = canonize(s, FORUM + [ParamRule("sid", "remove"), R("", "x"), R("/", "", anchor_end=True)])
    assert res.iterations <= 10


SEG = st.sampled_from(["a", "b", "index.html", "story", "1", "2", "id", "x"])
SEP = st.sampled_from(["/", "?", "=", "&", "_", "."])


@st.composite
def dusty_list(draw):
    """URL lists with planted DUST (story_N ≡ story?id=N, dir/ ≡ dir/index.html) plus noise."""
    ul = URLList()
    for i in range(draw(st.integers(3, 8))):
        size = draw(st.integers(100, 130))
        ul.add(f"http://h/story_{i}", 200, size)
        ul.add(f"http://h/story?id={i}", 200, size)
        ul.add(f"http://h/d{i}/", 200, size + 50)
        ul.add(f"http://h/d{i}/index.html", 200, size + 50)
        ul.add(f"http://h/d{i}/?sid={draw(st.integers(0, 99))}", 200, size + 50)
    for _ in range(draw(st.integers(0, 10))):
        parts = draw(st.lists(st.tuples(SEP, SEG), max_size=4))
        ul.add("http://h" + "".join(a + b for a, b in parts), 200, draw(st.integers(100, 200)))
    return ul


@settings(max_examples=40, deadline=None)
@given(dusty_list())
def test_canonize_with_engine_rules_terminates_and_is_idempotent(ul):
    result = mine(ul, DustParams(S=8))
    rules = result.substring_rules() + result.param_rules()
    assert all(r.direction in ("shrinking", "neutral") for r in rules)
    for u in ul:
        res = canonize(u, rules)
        assert res.iterations <= 10
        if res.converged:
            again = canonize(res.canonical, rules)
            assert again.canonical == res.canonical and again.iterations == 1 and not again.applied
