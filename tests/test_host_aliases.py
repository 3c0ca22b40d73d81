"""Host aliases from the declared origins (core/mining/hostalias.py, core/validation/aliases.py):
each origin of the sites file that is not the target is one candidate rule "^alias/" → "^target/",
decided by Figure 3 on the site's paths put under the alias.  On the simulator (four host names:
www. and the bare host show the same pages, politics. and movies. their own sections), one rule is
published for www., none for the sections; the same site served on two ports gets one port rule;
a front page that redirects names the target."""

from __future__ import annotations

import asyncio
import json
import types

from dustbuster.core.mining.hostalias import alias_candidates, alias_target
from dustbuster.core.mining.mine import mine
from dustbuster.core.urls.urllist import URLList
from dustbuster.core.validation.aliases import pointed_origins
from dustbuster.core.validation.siteconfig import parse_sites
from dustbuster.logs.reader import parse_lines
from dustbuster.sim.forum import SITE_HOSTS
from dustbuster.sim.site import SimSite, start
from dustbuster.sitevalidation import SiteCandidates, policy_of, validate_site
from dustbuster.stream.settings import Settings


def aliases(sv) -> dict[str, bool | None]:
    return {v.rule.text: v.valid for v in sv.result.verdicts
            if (v.rule.evidence or {}).get("source") == "declared_origins"}


async def validate_sim(origins_of, log_port_of=lambda ports: ports[0], ports_n: int = 1):
    sim = SimSite()
    runners, ports = [], []
    for _ in range(ports_n):
        runner, port = await start(sim)
        runners.append(runner)
        ports.append(port)
    try:
        ul = URLList()
        for rec in parse_lines(sim.log_lines(3000, port=log_port_of(ports)), "forum.test").records:
            ul.add(*rec)
        found = mine(ul)
        origins = origins_of(ports)
        sites = parse_sites(json.dumps({"forum.test": {
            "origins": origins, "allow_private": True, "resolve": {h: "127.0.0.1" for h in SITE_HOSTS},
            "robots": False, "rate_per_s": 5000, "concurrency": 8}}), "sites")
        return await validate_site(SiteCandidates(found.kept, found.param_rules(), ul.test_urls()),
                                   policy_of(sites, "forum.test", "sites"), Settings()), ports
    finally:
        for r in runners:
            await r.cleanup()


def test_one_rule_for_the_www_alias_and_none_for_the_sections():
    sv, (port,) = asyncio.run(validate_sim(lambda ports: [f"http://{h}:{ports[0]}" for h in SITE_HOSTS]))
    www = f'"^http://www.forum.test:{port}/" → "^http://forum.test:{port}/"'
    assert aliases(sv) == {www: True, f'"^http://movies.forum.test:{port}/" → "^http://forum.test:{port}/"': False,
                           f'"^http://politics.forum.test:{port}/" → "^http://forum.test:{port}/"': False}
    published = [r.text for r in sv.rules]
    assert www in published and sum("www.forum.test" in t for t in published) == 1  # one rule, not one per path


def test_the_same_site_on_two_ports_gets_one_port_rule():
    sv, ports = asyncio.run(validate_sim(lambda ports: [f"http://forum.test:{p}" for p in ports], ports_n=2))
    a, b = sorted(f"http://forum.test:{p}" for p in ports)
    assert aliases(sv) == {f'"^{b}/" → "^{a}/"': True}  # same length: the first in sort order is the target
    assert f'"^{b}/" → "^{a}/"' in [r.text for r in sv.rules]


def test_the_target_is_where_the_site_points():
    fronts = {"http://wiki.test": types.SimpleNamespace(identity=types.SimpleNamespace(
        final_url="http://www.wiki.test/Main", canonical="")),
              "http://wiki.test:8080": types.SimpleNamespace(identity=types.SimpleNamespace(
                  final_url="http://wiki.test:8080/", canonical="http://www.wiki.test/"))}
    pointed = pointed_origins(fronts)
    assert pointed == {"http://wiki.test": "http://www.wiki.test", "http://wiki.test:8080": "http://www.wiki.test"}
    origins = ["http://wiki.test", "http://www.wiki.test", "http://wiki.test:8080"]
    assert alias_target(origins, pointed) == "http://www.wiki.test"
    assert [r.text for r in alias_candidates(origins, pointed)] == [
        '"^http://wiki.test/" → "^http://www.wiki.test/"', '"^http://wiki.test:8080/" → "^http://www.wiki.test/"']
    assert alias_candidates(["http://wiki.test"]) == []
