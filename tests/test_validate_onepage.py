"""Issue 28 item 4 end to end: one-page families on the simulator's wiki (sim/wiki.py, ``SimSite(wiki=True)``)
over loopback HTTP with the validator's real fetcher.  The miner proposes ``remove returnto=* where
title=Special:UserLogin`` (one login page, many return-to targets); it is published on that page's
identity evidence.  ``remove page=*`` on the one listing page (a different listing per page) is
refuted, and the mined value-mapping rule ``page=* → page=K`` stays undecided ("equal today")."""

from __future__ import annotations

import asyncio

import pytest

from dustbuster.sitevalidation import SiteCandidates
from dustbuster.core import ParamRule, mine
from dustbuster.core.urls.urllist import URLList
from dustbuster.fetch.client import FetchPolicy
from dustbuster.sim.forum import SITE_HOSTS
from dustbuster.sim.site import SimSite, start
from dustbuster.sim.wiki import LISTING, LOGIN
from dustbuster.sitevalidation import validate_site
from dustbuster.stream.settings import Settings

RETURNTO = f"remove returnto=* where title={LOGIN}"
PAGE = ParamRule("page", "remove", scope=f"?title={LISTING}")


def _urllist(site: SimSite, port: int, lines: int) -> URLList:
    ul = URLList()
    for line in site.log_lines(lines, port=port):
        host, rest = line.split(" ", 1)
        target, tail = rest.split('"GET ', 1)[1].split(" HTTP/1.1\" ")
        status, size = tail.split()[:2]
        ul.add(f"http://{host}{target}", int(status), int(size))
    return ul


async def validation_round(urllist_of=_urllist, lines: int = 4000):
    """One validation round over loopback on the simulated wiki: the log read by ``urllist_of(site,
    port, lines)``, its returnto/page parameter rules mined and validated with PAGE; (mined, sv, urls)."""
    site = SimSite(wiki=True)
    runner, port = await start(site)
    origins = frozenset(f"http://{h}:{port}" for h in SITE_HOSTS)
    policy = FetchPolicy(origins=origins, allow_private=True, resolve={h: "127.0.0.1" for h in SITE_HOSTS},
                         robots=False, rate_per_s=0, per_host_concurrency=8)
    ul = urllist_of(site, port, lines)
    mined = [r for r in mine(ul).param_rules() if r.name in ("returnto", "page")]
    urls = [u for u in dict.fromkeys(ul.urls()) if "/index.php" in u]
    try:
        sv = await validate_site(SiteCandidates([], [*mined, PAGE], urls), policy, Settings())
    finally:
        await runner.cleanup()
    return mined, sv, urls


async def _round(lines: int = 4000):
    mined, sv, _ = await validation_round(_urllist, lines)
    return mined, sv


@pytest.fixture(scope="module")
def wiki_round():
    return asyncio.run(_round())


def test_one_page_families_on_the_wiki(wiki_round):
    mined, sv = wiki_round
    assert RETURNTO in {r.text for r in mined}
    mapping = next(r for r in mined if r.name == "page")
    assert mapping.action == "replace"  # sizes alike on the listings: a value-mapping candidate
    verdicts = {v.rule.text: v for v in sv.result.verdicts}
    published = {r.text for r in sv.rules}

    login = verdicts[RETURNTO]
    assert login.valid is True and login.reason == "confirmed_on_one_page", (login.valid, login.reason, login.evidence())
    assert RETURNTO in published
    op = login.one_page
    assert op["page"] == f"/index.php?title={LOGIN}" and op["sufficient"] and op["values"] >= 5
    assert op["identity"] == {"title": login.positives} and login.negatives == 0
    # one page on each of the site's hosts: every host holding a share of the URLs showed positives
    assert sum(f["required"] > 0 for f in login.families) == len(SITE_HOSTS)
    assert all(f["positives"] >= f["required"] for f in login.families)

    page = verdicts[PAGE.text]
    assert page.valid is False and PAGE.text not in published, (page.valid, page.reason, page.samples[:3])

    value = verdicts[mapping.text]
    assert value.valid is None and value.reason == "uninformative" and mapping.text not in published


def test_dustbuster_rules_shows_the_one_page_decision(wiki_round, capsys):
    from dustbuster.cli.rules import _print_readable

    _, sv = wiki_round
    doc = {"site": "s", "version": 1, "created": 0, "rules": [r.to_json() for r in sv.rules], "stats": sv.stats(2)}
    _print_readable("s", doc)
    out = capsys.readouterr().out
    assert f"decided on one page /index.php?title={LOGIN}: " in out and "values of returnto, same page by title" in out
