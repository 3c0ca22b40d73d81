"""Issue 23 end to end over loopback (the simulator's wiki, sim/wiki.py, with the validator's real
fetcher): the log never holds the bare login URL (every login link carries ``returnto=``, as on
MediaWiki) and some login links carry other parameters (``utm_source=``, ``returntoquery=``).
The miner reads ``remove returnto=* where title=Special:UserLogin`` off the replace groups (thesis
§5.3), and the validator publishes it on the login page with the other parameters riding along;
``remove page=*`` on the listings and the Recent page's returnto stay unpublished."""

from __future__ import annotations

import asyncio

import pytest

from dustbuster.core.urls.urllist import URLList
from dustbuster.sim.site import SimSite
from dustbuster.sim.wiki import LOGIN, RECENT
from tests.test_validate_onepage import PAGE, validation_round

RETURNTO = f"remove returnto=* where title={LOGIN}"
RIDERS = ("", "&utm_source=feed", "&returntoquery=oldid%3D{k}", "")


def _urllist(site: SimSite, port: int, lines: int) -> URLList:
    """The wiki's log, bare login URLs left out, riders added to some login links."""
    ul = URLList()
    for k, line in enumerate(site.log_lines(lines, port=port)):
        host, rest = line.split(" ", 1)
        target, tail = rest.split('"GET ', 1)[1].split(" HTTP/1.1\" ")
        if target.endswith(f"title={LOGIN}"):
            continue  # never linked bare
        if f"title={LOGIN}&" in target:
            target += RIDERS[k % 4].format(k=k % 50)
        status, size = tail.split()[:2]
        ul.add(f"http://{host}{target}", int(status), int(size))
    return ul


async def _round(lines: int = 4000):
    return await validation_round(_urllist, lines)


@pytest.fixture(scope="module")
def riding_round():
    return asyncio.run(_round())


def test_the_login_page_never_linked_bare_is_published_with_riders(riding_round):
    mined, sv, urls = riding_round
    assert not any(u.endswith(f"title={LOGIN}") for u in urls)
    assert any("utm_source=feed" in u and LOGIN in u for u in urls)
    login = next(r for r in mined if r.text == RETURNTO)
    assert login.support >= 10 and login.disqualified == 0
    verdicts = {v.rule.text: v for v in sv.result.verdicts}
    v = verdicts[RETURNTO]
    assert v.valid is True and v.reason == "confirmed_on_one_page", (v.valid, v.reason, v.evidence())
    assert v.one_page["page"] == f"/index.php?title={LOGIN}" and v.one_page["identities"] == 1
    assert RETURNTO in {r.text for r in sv.rules}


def test_the_meaningful_parameters_stay_unpublished(riding_round):
    mined, sv, _ = riding_round
    published = {r.text for r in sv.rules}
    verdicts = {v.rule.text: v for v in sv.result.verdicts}
    assert verdicts[PAGE.text].valid is False and PAGE.text not in published
    params = [r for r in sv.rules if r.type == "parameter"]  # (a host-alias rule is published too)
    assert not any(r.name == "returnto" and (not r.scope or RECENT in r.scope) for r in params)
    assert not any(r.name == "page" for r in params)
