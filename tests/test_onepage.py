"""One-page families decided on their merits (issue 28 item 4; core/validation/onepage.py): a parameter that is
a no-op on the one page that has it is published on that page's identity evidence; value-mapping,
global and broad-scope rules keep the multi-page "equal today" guard.  Decision procedure only (a
fetch function); the loopback end-to-end test is tests/test_validate_onepage.py."""

from __future__ import annotations

import asyncio
import random

from dustbuster.core.validation.round import Round
from dustbuster.core import DustParams, ParamRule
from dustbuster.core.validation.identity import page_identity
from dustbuster.core.validation.onepage import ONE_PAGE_MIN_VALUES, OnePage, one_page_of, same_page_evidence
from dustbuster.core.validation.sketch import sketch
from dustbuster.core.validation.validate import Fetched, RoundFetcher, apply_rule, validate_rule

W = "http://w.test/index.php?title="
LOGIN = "?title=Special:UserLogin"
WORDS = "market election river concert festival bridge harbor season council rally orchestra theater".split()


def text(key: str) -> str:
    rnd = random.Random(key)
    return " ".join(rnd.choice(WORDS) + str(rnd.randrange(100)) for _ in range(200))


def wiki_page(url: str, title_of=None, canonical_of=None) -> tuple[str, str, str]:
    """(title, text, canonical) of a URL of a tiny wiki: the login page ignores ``returnto``;
    Special:AllPages shows a different listing per ``page=``; other titles are articles."""
    q = dict(kv.split("=", 1) for kv in url.split("?", 1)[1].split("&"))
    t = q.get("title", "")
    if t == "Special:UserLogin":
        return "Log in - W", text("login"), ""
    if t == "Special:AllPages":
        return "All pages - W", text("all" + q.get("page", "1")), ""
    return f"{t} - W", text(t), ""


def make_fetch(page=wiki_page, with_identity: bool = True):
    async def fetch(url: str) -> Fetched:
        title, body, canon = page(url)
        html = (f"<html><head><title>{title}</title>"
                + (f'<link rel="canonical" href="{canon}">' if canon else "")
                + f"</head><body><p>{body}</p></body></html>").encode()
        ident = page_identity(url, url, [], 200, html, "text/html") if with_identity else None
        return Fetched(True, sketch(html, "text/html"), 200, identity=ident)
    return RoundFetcher(fetch)


def login_urls(n: int = 30) -> list[str]:
    return [W + "Special:UserLogin"] + [f"{W}Special:UserLogin&returnto=Page_{i}" for i in range(n)]


def verdict(rule, urls, fetch=None, params=None):
    return asyncio.run(validate_rule(rule, Round.of(urls, fetch or make_fetch(), params), seed=1))


def test_a_no_op_parameter_on_one_page_is_published():
    v = verdict(ParamRule("returnto", "remove", scope=LOGIN), login_urls())
    assert v.valid is True and v.reason == "confirmed_on_one_page", (v.valid, v.reason, v.evidence())
    assert v.distinct_pages == 1 and v.negatives == 0 and v.positives >= 10
    op = v.evidence()["one_page"]
    assert op["page"] == "/index.php?title=Special:UserLogin" and op["sufficient"] and op["values"] >= ONE_PAGE_MIN_VALUES
    assert op["identity"] == {"title": v.positives}


def test_a_global_rule_whose_evidence_is_one_page_is_decided_as_that_pages_rule():
    """The same rule stated globally: its evidence reaches the login page only (every URL it changes
    has one path and title=Special:UserLogin), so it is decided, and published, under that page's
    scope — never for the whole site (core/validation/validate.py evidence_scope)."""
    v = verdict(ParamRule("returnto", "remove"), login_urls())
    assert v.valid is True and v.reason == "confirmed_on_one_page", (v.valid, v.reason)
    assert v.rule.scope == "/index.php?title=Special:UserLogin" and v.one_page["from_scope"] == ""


def test_the_papers_language_is_never_narrowed_to_a_page():
    """With ``--language paper`` the same global rule stays global and undecided: the papers'
    language has no scopes, so a paper-language set never holds a scoped rule."""
    v = verdict(ParamRule("returnto", "remove"), login_urls(), params=DustParams(language="paper"))
    assert v.rule.scope == "" and v.valid is None and v.reason == "uninformative", (v.valid, v.reason, v.rule.text)


def test_a_parameter_that_changes_the_one_page_is_refuted():
    urls = [W + "Special:AllPages"] + [f"{W}Special:AllPages&page={k}" for k in range(2, 30)]
    v = verdict(ParamRule("page", "remove", scope="?title=Special:AllPages"), urls)
    assert v.valid is False and v.negatives >= 2, (v.valid, v.reason, v.evidence())


def test_a_value_mapping_rule_on_one_page_stays_undecided():
    rule = ParamRule("returnto", "replace", "Main_Page", scope=LOGIN)
    assert one_page_of(rule, lambda u: apply_rule(rule, u), login_urls()) is None
    v = verdict(rule, login_urls() + [f"{W}Special:UserLogin&returnto=Main_Page"])
    assert v.valid is None and v.reason == "uninformative"


def test_a_scope_that_holds_two_pages_needs_the_normal_evidence():
    """``title=`` varies under /index.php: the path scope holds every article, so no one-page decision;
    the articles' returnto is a no-op too, but two pages are fewer than 3."""
    urls = login_urls() + [f"{W}Main&returnto=Page_{i}" for i in range(30)]
    rule = ParamRule("returnto", "remove", scope="/index.php")
    assert one_page_of(rule, lambda u: apply_rule(rule, u), urls) is None
    v = verdict(rule, urls)
    assert v.valid is None and v.reason == "uninformative", (v.valid, v.reason)


def test_a_global_rule_never_decides_on_one_page():
    rule = ParamRule("returnto", "remove")
    assert one_page_of(rule, lambda u: apply_rule(rule, u), login_urls()) is None


def test_too_few_values_stay_undecided_unfetched():
    urls = [W + "Special:UserLogin"] + [f"{W}Special:UserLogin&returnto=Page_{i % 4}&x={i}" for i in range(30)]
    rule = ParamRule("returnto", "remove", scope=LOGIN)
    assert one_page_of(rule, lambda u: apply_rule(rule, u), urls) is None  # and x= makes 30 pages anyway
    four = [W + "Special:UserLogin"] + [f"{W}Special:UserLogin&returnto=Page_{i}" for i in range(4)]
    assert one_page_of(rule, lambda u: apply_rule(rule, u), four) is None


def test_positives_without_identity_evidence_do_not_decide():
    """The same text with no title and no canonical (or a fetch function without identities): the
    text alone is not enough on one page."""
    untitled = make_fetch(lambda u: ("", *wiki_page(u)[1:]))
    v = verdict(ParamRule("returnto", "remove", scope=LOGIN), login_urls(), untitled)
    assert v.valid is None and v.reason == "uninformative"
    assert v.one_page["identity"] == {"none": v.positives} and "without same-page identity" in v.one_page["why_not"]
    v = verdict(ParamRule("returnto", "remove", scope=LOGIN), login_urls(), make_fetch(with_identity=False))
    assert v.valid is None and v.reason == "uninformative"


def test_one_negative_blocks_a_one_page_decision():
    """One return-to target shows another page (5 % of the pairs: Figure 3 would still accept)."""
    def page(u):
        t, body, c = wiki_page(u)
        return (t, text("odd"), c) if u.endswith("returnto=Page_7") else (t, body, c)
    v = verdict(ParamRule("returnto", "remove", scope=LOGIN), login_urls(40), make_fetch(page))
    assert v.negatives == 1 and v.valid is None and v.reason == "uninformative", (v.valid, v.reason, v.negatives)
    assert v.one_page["why_not"] == "1 negative(s)"


def test_same_page_evidence():
    def f(url, title="Log in", canon="", chain=()):
        html = f"<title>{title}</title>" + (f'<link rel="canonical" href="{canon}">' if canon else "")
        return Fetched(True, None, 200, identity=page_identity(url, url, list(chain), 200, html.encode(), "text/html"))
    u, v = "http://h/l?r=1", "http://h/l"
    assert same_page_evidence(f(u), f(v), "similar") == "title"
    assert same_page_evidence(f(u, ""), f(v, ""), "similar") == ""
    assert same_page_evidence(f(u, canon="/l"), f(v, canon="/l"), "similar") == "canonical"
    assert same_page_evidence(f(u, canon="/l"), f(v), "similar") == ""  # one side declaring: not enough
    assert same_page_evidence(f(u), f(v), "same_target") == "redirect"
    assert same_page_evidence(Fetched(True), f(v), "similar") == ""
    op = OnePage("http://h/l", "r")
    for k in range(ONE_PAGE_MIN_VALUES):
        op.positive(f"http://h/l?r={k}", f(u), f(v), "similar")
    assert op.why_not(0) == "" and op.to_json(0)["sufficient"] and op.why_not(1)


def test_a_cached_verdict_keeps_the_scope_its_evidence_reached():
    from dustbuster.core.validation.verdict import cached_verdict

    v = verdict(ParamRule("returnto", "remove"), login_urls())
    again = cached_verdict(ParamRule("returnto", "remove"), {"valid": True, **v.evidence()})
    assert again.rule.scope == v.rule.scope == "/index.php?title=Special:UserLogin"
