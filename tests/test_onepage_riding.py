"""Issue 23: one page = the path plus a query-parameter scope's fixed values (core/validation/onepage.py); the
URLs' other parameters ride along.  The traps: riding parameters that select other pages, a dropped
parameter that matters beside them, a path scope (stays strict).  Decision procedure only, on the
tiny wiki of tests/test_onepage.py (a fetch function); the loopback end-to-end check is
tests/test_validate_onepage.py."""

from __future__ import annotations

from dustbuster.core import ParamRule
from dustbuster.core.validation.onepage import one_page_of
from dustbuster.core.validation.validate import apply_rule
from tests.test_onepage import LOGIN, W, make_fetch, text, verdict, wiki_page

RIDERS = ("", "&returntoquery=oldid%3D{i}", "&utm_source=feed", "&returntoquery=search%3D{i}&utm_medium=mail")


def riding_login_urls(n: int = 40) -> list[str]:
    """The login page linked from every page: returnto= and, on some links, other parameters."""
    return [W + "Special:UserLogin"] + [f"{W}Special:UserLogin&returnto=Page_{i}" + RIDERS[i % 4].format(i=i)
                                        for i in range(n)]


def page_of(rule, urls):
    return one_page_of(rule, lambda u: apply_rule(rule, u), urls)


def test_other_parameters_ride_along_in_a_query_scope():
    rule = ParamRule("returnto", "remove", scope=LOGIN)
    assert page_of(rule, riding_login_urls()) == "/index.php?title=Special:UserLogin"
    v = verdict(rule, riding_login_urls())
    assert v.valid is True and v.reason == "confirmed_on_one_page", (v.valid, v.reason, v.evidence())
    assert v.negatives == 0 and v.one_page["identities"] == 1


def test_a_path_scope_keeps_one_path_and_query():
    """A path scope fixes no value: the riding parameters make several pages there, the normal guard."""
    urls = [u.replace("index.php?title=Special:UserLogin", "login.php?x=1") for u in riding_login_urls()]
    rule = ParamRule("returnto", "remove", scope="/login.php")
    assert page_of(rule, urls) is None


def listing(url: str):
    """Special:AllPages: ``page=`` selects the listing (each its own text); ``from=`` moves it too;
    ``returnto=`` and ``uselang=`` change nothing but (uselang) the title's language."""
    title, body, canon = wiki_page(url)
    q = dict(kv.split("=", 1) for kv in url.split("?", 1)[1].split("&"))
    if q.get("title") == "Special:AllPages":
        body = text("all" + q.get("page", "1") + "from" + q.get("from", ""))
    if q.get("uselang") == "de":
        title = title.replace("All pages", "Alle Seiten").replace("Log in", "Anmelden")
    return title, body, canon


ALL = "?title=Special:AllPages"


def test_a_dropped_parameter_that_matters_beside_riding_selectors_is_refuted():
    """page= rides along and selects listings; from= (dropped) moves every listing: negatives."""
    urls = [f"{W}Special:AllPages&page={k % 3 + 1}&from=P{k}" for k in range(30)]
    rule = ParamRule("from", "remove", scope=ALL)
    assert page_of(rule, urls) == "/index.php?title=Special:AllPages"  # riding page= makes it "one page"
    v = verdict(rule, urls, make_fetch(listing))
    assert v.valid is False and v.negatives >= 2, (v.valid, v.reason, v.evidence())


def test_riding_selectors_that_show_other_identities_are_not_one_page():
    """uselang= rides along and renames the page (the same text, another title): the positives show
    two identities, so no one-page decision; the sketches are one page, so the normal guard leaves
    the rule undecided (it never merges on one page's say-so what names itself twice)."""
    urls = [W + "Special:UserLogin"] + [f"{W}Special:UserLogin&returnto=Page_{i}&uselang={('en', 'de')[i % 2]}"
                                        for i in range(40)]
    rule = ParamRule("returnto", "remove", scope=LOGIN)
    assert page_of(rule, urls) == "/index.php?title=Special:UserLogin"
    v = verdict(rule, urls, make_fetch(listing))
    assert v.valid is None and v.reason == "uninformative", (v.valid, v.reason, v.evidence())
    assert v.one_page["identities"] == 2 and "identities" in v.one_page["why_not"]


def test_a_no_op_beside_riding_page_selectors_is_decided_on_many_pages():
    """returnto= is a no-op on every listing page= selects: positives on several pages, so the
    normal guard decides (not the one-page one)."""
    urls = [f"{W}Special:AllPages&page={k % 6 + 1}&returnto=P{k}" for k in range(40)]
    rule = ParamRule("returnto", "remove", scope=ALL)
    v = verdict(rule, urls, make_fetch(listing))
    assert v.valid is True and v.reason == "confirmed" and v.distinct_pages >= 3, (v.valid, v.reason, v.evidence())
    assert not v.one_page
