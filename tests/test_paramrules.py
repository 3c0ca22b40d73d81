"""Parameter substitution rules (thesis §5.3)."""

from __future__ import annotations

from dustbuster.core import DustParams, URLList, canonical, mine
from dustbuster.core.mining.paramrules import detect_param_rules
from dustbuster.core.urls.query import remove_param, replace_param, split


def site():
    """sid never changes content; page does; sort=asc|desc changes little (same size)."""
    ul = URLList()
    for art in range(6):
        base = 2000 + 300 * art
        ul.add(f"http://h/article?id={art}", 200, base)
        for sid in ("A1", "B2", "C3"):
            ul.add(f"http://h/article?id={art}&sid={sid}", 200, base)
        for page in range(1, 4):
            ul.add(f"http://h/list?page={page}&cat={art}", 200, 700 * page + art)
    return ul


def test_detects_sid_not_page():
    kept, cands = detect_param_rules(site())
    names = {(c.name, c.action) for c in kept}
    assert ("sid", "remove") in names and ("sid", "replace") in names
    assert not any(n == "page" for n, _ in names)
    sid_remove = next(c for c in kept if (c.name, c.action) == ("sid", "remove"))
    assert sid_remove.support == 18 and sid_remove.disqualified == 0
    page = next(c for c in cands if (c.name, c.action) == ("page", "replace"))
    assert page.support == 0 and page.disqualified == 12
    sid_replace = next(c for c in kept if (c.name, c.action) == ("sid", "replace"))
    assert sid_replace.value == "A1"  # ties → smallest value


def test_default_value_most_common():
    ul = URLList()
    for i in range(5):
        for v in ("x", "y", "y"):
            ul.add(f"http://h/p{i}?v={v}{'' if v == 'x' else i}", 200, 10)
    kept, cands = detect_param_rules(ul, DustParams(param_min_urls=3))
    rep = next(c for c in cands if c.action == "replace")
    assert rep.value == "x"


def test_min_ratio_and_popularity():
    ul = site()
    kept, _ = detect_param_rules(ul, DustParams(param_min_urls=100))
    assert kept == []


def test_mine_emits_param_rules_and_canonizes():
    r = mine(site())
    rules = r.param_rules()
    assert rules[0].name == "sid" and rules[0].action == "remove"
    assert canonical("http://h/article?id=9&sid=ZZ", rules) == "http://h/article?id=9"


def test_query_helpers():
    assert split("http://h/p") == ("http://h/p", None)
    assert split("http://h/p?") == ("http://h/p", [])
    assert split("http://h/p?a=1&b&c=") == ("http://h/p", [("a", "1"), ("b", None), ("c", "")])
    assert remove_param("http://h/p?a=1&b=2", "a") == "http://h/p?b=2"
    assert remove_param("http://h/p?a=1", "a") == "http://h/p"
    assert replace_param("http://h/p?a=1&a=2", "a", "0") == "http://h/p?a=0&a=0"
