"""Mining again under the valid rules (core/canon/canonlist.py, sitevalidation.canonical_round): a
campaign parameter that always comes with another has no pair of its own in the log, and one among
the canonical forms once removing the other is valid; `dustbuster validate` decides it then."""

from __future__ import annotations

import asyncio

from aiohttp import web

from dustbuster.core.canon.canonlist import canonized_list
from dustbuster.core.mining.mine import mine
from dustbuster.core.urls.urllist import URLList
from dustbuster.core.validation.siteconfig import parse_sites
from dustbuster.sitevalidation import SiteCandidates, policy_of, validate_site
from dustbuster.stream.settings import Settings


async def _item(request: web.Request) -> web.Response:  # an item's page, whatever else the query says
    words = f"words of item {request.query['id']} " * 40
    return web.Response(text=f"<title>item {request.query['id']}</title><p>{words}", content_type="text/html")


def _log(port: int) -> URLList:
    ul = URLList()
    for i in range(60):
        base = f"http://shop.test:{port}/item?id={i}"
        for u in (base, f"{base}&src=feed", f"{base}&src=news&medium=mail"):
            ul.add(u, 200, 900 + i)
    return ul


async def _validate(remined: bool):
    app = web.Application()
    app.router.add_get("/item", _item)
    runner = web.AppRunner(app)
    await runner.setup()
    await web.TCPSite(runner, "127.0.0.1", 0).start()
    port = runner.addresses[0][1]
    try:
        ul = _log(port)
        found = mine(ul)
        sites = parse_sites('{"shop.test": {"origins": ["http://shop.test:%d"], "allow_private": true, '
                            '"resolve": {"shop.test": "127.0.0.1"}, "robots": false, "rate_per_s": 1000}}' % port)

        def remine(valid):
            forms = canonized_list(ul, valid)
            again = mine(forms)
            return SiteCandidates(again.kept, again.param_rules(), forms.test_urls())

        cands = SiteCandidates(found.kept, found.param_rules(), ul.test_urls())
        sv = await validate_site(cands, policy_of(sites, "shop.test", "test"), Settings(),
                                 remine=remine if remined else None)
        return sv, port
    finally:
        await runner.cleanup()


def test_a_parameter_seen_only_beside_another_is_learned_under_the_valid_rules():
    before, _ = asyncio.run(_validate(remined=False))
    assert not any("medium" in r.text for r in before.rules), [r.text for r in before.rules]
    sv, port = asyncio.run(_validate(remined=True))
    texts = [r.text for r in sv.rules]
    assert any("remove src=*" in t for t in texts) and any("remove medium=*" in t for t in texts), texts
    assert sv.setcheck.passed is True
    from dustbuster.core.canon.canonize import Canonizer

    canon = Canonizer(sv.rules)
    assert canon(f"http://shop.test:{port}/item?id=3&src=news&medium=mail") == f"http://shop.test:{port}/item?id=3"


def test_the_canonical_list_merges_what_one_page_was_observed_as():
    ul = _log(8000)
    forms = canonized_list(ul, [])
    assert forms.urls() == ul.urls()  # no rule: the same list
    from dustbuster.core.model.rules import ParamRule

    forms = canonized_list(ul, [ParamRule("src", "remove", status="valid")])
    assert len(forms) == 120 and forms.info("http://shop.test:8000/item?id=3").hits == 2
    assert forms.info("http://shop.test:8000/item?id=3&medium=mail").interval == (903, 903)
