"""Query-to-path mappings (core/model/ruletypes/querypath.py, core/mining/querypath.py): a parameter
whose value names the page in the path (``/w/index.php?title=X`` ↔ ``/wiki/X``) is one rule that
keeps the rest of the query a query; the substring rule that glues it onto the path is refused
before any fetch (core/canon/rulecheck.py ``glues_query``).  A small wiki-like site decides them by
fetching: the mapping is valid on many pages, ``?title=X&action=history`` keeps its history view."""

from __future__ import annotations

import asyncio
import random

import pytest
from hypothesis import given, strategies as st

import dustcanon
from dustbuster.core.canon.canonize import Canonizer
from dustbuster.core.errors import RuleError
from dustbuster.core.mining.mine import mine
from dustbuster.core.mining.querypath import mine_query_paths
from dustbuster.core.model.rules import SubstringRule, rule_from_json
from dustbuster.core.model.ruletypes.querypath import QueryPathRule, plain_value
from dustbuster.core.urls.urllist import URLList
from dustbuster.core.validation.identity import page_identity
from dustbuster.core.validation.round import Round
from dustbuster.core.validation.sketch import sketch
from dustbuster.core.validation.validate import Fetched, RoundFetcher, validate, validate_rule

H = "http://w.test"
TITLES = [f"Page_{i}" for i in range(30)] + ["Help:Contents", "A/B", "Caf%C3%A9"]
RULE = QueryPathRule("/w/index.php", "title", "/wiki/")


@pytest.mark.parametrize("url,want", [
    (f"{H}/w/index.php?title=Main_Page", f"{H}/wiki/Main_Page"),
    (f"{H}/w/index.php?title=Main_Page&action=history", f"{H}/wiki/Main_Page?action=history"),
    (f"{H}/w/index.php?oldid=5&title=A/B&diff=prev", f"{H}/wiki/A/B?oldid=5&diff=prev"),
    (f"{H}/w/index.php?title=Main_Page#toc", f"{H}/wiki/Main_Page#toc"),
    (f"{H}/w/index.php?title=A+B", f"{H}/w/index.php?title=A+B"),            # "+": a space in a query only
    (f"{H}/w/index.php?title=A%2FB", f"{H}/w/index.php?title=A%2FB"),        # an escaped "/" is not a path's "/"
    (f"{H}/w/index.php?title=", f"{H}/w/index.php?title="),                  # no value
    (f"{H}/w/index.php?title=A&title=B", f"{H}/w/index.php?title=A&title=B"),  # twice: which one?
    (f"{H}/w/index.php?title=../x", f"{H}/w/index.php?title=../x"),          # a dot segment
    (f"{H}/w/index.php/x?title=A", f"{H}/w/index.php/x?title=A"),            # another path
    (f"{H}/w/index.phpx?title=A", f"{H}/w/index.phpx?title=A"),
    (f"{H}/w/index.php?xtitle=A", f"{H}/w/index.php?xtitle=A"),
])
def test_the_value_moves_into_the_path_and_the_rest_stays_a_query(url, want):
    assert RULE.rewrite(url) == want
    assert dustcanon._QueryPath(RULE.to_json()).rewrite(url) == want
    assert Canonizer([RULE])(url) == want  # one step: the output has no title= left


def test_json_round_trip_and_refusals():
    assert rule_from_json(RULE.to_json()) == RULE
    assert RULE.text == "/w/index.php?title=X → /wiki/X (the rest of the query kept)"
    for bad in ({"scope": "w/index.php"}, {"prefix": "/wiki?"}, {"name": "a=b"}, {"prefix": "//x/"}):
        with pytest.raises(RuleError):
            rule_from_json(RULE.to_json() | bad)


@given(st.text(alphabet="aZ09._~:!$'()*,;@-/%+&=?#C3A9F2", max_size=12))
def test_a_value_moves_only_when_it_reads_the_same_in_a_path(v):
    out = RULE.rewrite(f"{H}/w/index.php?title={v}&x=1")
    if plain_value(v):
        assert out == f"{H}/wiki/{v}?x=1"
    assert dustcanon._QueryPath(RULE.to_json()).rewrite(f"{H}/w/index.php?title={v}&x=1") == out
    assert "&" not in out.split("#", 1)[0].split("?", 1)[0]  # never query text glued onto the path


def _log(titles=TITLES, size=lambda t: 2000 + 37 * len(t) + sum(map(ord, t)), path_size=None) -> URLList:
    ul = URLList()
    for t in titles:
        ul.add(f"{H}/wiki/{t}", 200, (path_size or size)(t))
        ul.add(f"{H}/w/index.php?title={t}", 200, size(t))
        ul.add(f"{H}/w/index.php?title={t}&action=history", 200, size(t) + 900)
    return ul


def test_mined_from_the_log_as_one_rule_not_one_per_page():
    rules = mine_query_paths(_log())
    assert [r.text for r in rules] == [RULE.text]
    assert rules[0].support == len(TITLES) and rules[0].evidence["similar_ratio"] == 1.0
    assert any(r.type == "query_path" for r in mine(_log()).general)  # in mine's extended language


def test_not_mined_on_too_few_pages_nor_where_the_sizes_differ():
    assert mine_query_paths(_log(TITLES[:2])) == []
    assert mine_query_paths(_log(path_size=lambda t: random.Random(t).randrange(1000, 90000))) == []


# --- deciding by fetching: a fetch function of a small wiki ----------------------------------------

def _page(url: str) -> str | None:
    path, _, q = url[len(H):].partition("?")
    params = dict(kv.split("=", 1) for kv in q.split("&") if "=" in kv)
    if path.startswith("/wiki/"):
        title, action = path[len("/wiki/"):], params.get("action", "view")
    elif path == "/w/index.php" and "title" in params:
        title, action = params["title"], params.get("action", "view")
    else:
        return None
    if "&" in title:  # "/wiki/X&action=history": the wiki reads the title up to the "&"
        title = title.split("&", 1)[0]
    if title not in TITLES:
        return None
    rnd = random.Random(title + action)
    return " ".join(f"w{rnd.randrange(5000)}" for _ in range(300))


def _fetcher(fetched: list[str] | None = None) -> RoundFetcher:
    async def fetch(url: str) -> Fetched:
        if fetched is not None:
            fetched.append(url)
        text = _page(url)
        if text is None:
            return Fetched(False, None, 404, reason="status_404")
        html = f"<html><body><p>{text}</p></body></html>".encode()
        return Fetched(True, sketch(html, "text/html"), 200, identity=page_identity(url, url, [], 200, html, "text/html"))
    return RoundFetcher(fetch)


def _tests() -> list[str]:
    return [u for t in TITLES for u in (f"{H}/w/index.php?title={t}", f"{H}/w/index.php?title={t}&action=history",
                                         f"{H}/wiki/{t}")]


def test_the_mapping_is_valid_on_many_pages_and_keeps_the_history_view():
    v = asyncio.run(validate_rule(RULE, Round.of(_tests(), _fetcher()), seed=1))
    assert v.valid is True and v.negatives == 0 and v.distinct_pages >= 5, (v.valid, v.reason, v.evidence())


def test_the_substring_rule_that_glues_the_query_onto_the_path_is_not_published():
    """``…?title=X&action=history`` → ``/wiki/X&action=history`` shows X, not its history: the
    parameter strata (core/validation/paramstrata.py, ``drops action``) draw those URLs and the
    rule is not valid; the mapping is."""
    glue = SubstringRule("/w/index.php?title=", "/wiki/")
    res = asyncio.run(validate(Round.of(_tests(), _fetcher()), [glue], [RULE]))
    verdicts = {v.rule.text: v for v in res.verdicts}
    assert verdicts[RULE.text].valid is True
    assert glue.text not in [r.text for r in res.valid], verdicts.get(glue.text)


def test_a_mapping_subsumed_only_by_a_refuted_rule_is_checked_again_in_its_place():
    """The set check drops a rule that changes no test URL after the rules before it; when one of
    those is then refuted and dropped, the rule it hid is back (core/validation/setcheck.py)."""
    from dustbuster.core.model.rules import canonization_order
    from dustbuster.core.validation.setcheck import check_rule_set

    hides = SubstringRule("/w/index.php", "/wiki", status="valid")  # /wiki?title=X: no page there
    mapping = QueryPathRule("/w/index.php", "title", "/wiki/", status="valid")
    sc = asyncio.run(check_rule_set(canonization_order([hides, mapping]), Round.of(_tests(), _fetcher())))
    assert [r.text for r in sc.rules] == [mapping.text], sc.stats()
    assert [r.text for r, _ in sc.dropped] == [hides.text]
