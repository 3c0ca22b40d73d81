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


# ---- consumers: a set's host rules name the hosts it covers (core/model/hostrules.py) ----

def _alias_doc(site: str, alpha_host: str, beta_host: str, version: int = 1) -> dict:
    return {"site": site, "version": version, "rules": [
        {"type": "substring", "alpha": f"http://{alpha_host}/", "beta": f"http://{beta_host}/", "anchor_start": True,
         "status": "valid"},
        {"type": "parameter", "name": "sid", "action": "remove", "status": "valid"}]}


def test_a_set_keyed_by_the_www_host_covers_the_bare_host_in_every_consumer():
    import dustcanon
    from dustbuster.core.canon.rulebook import RuleBook

    doc = _alias_doc("www.wiki.test", "www.wiki.test", "wiki.test")  # the site points to the bare host
    book, mod = RuleBook(), dustcanon.RuleBook()
    assert book.update("www.wiki.test", doc).hosts == ("www.wiki.test", "wiki.test")
    mod.update("www.wiki.test", doc)
    for url, want in [("http://wiki.test/a?sid=1", "http://wiki.test/a"),        # the alias: found by its host
                      ("http://www.wiki.test/a?sid=1", "http://wiki.test/a"),    # the site: moved to the alias
                      ("http://en.wiki.test/a?sid=1", "http://en.wiki.test/a"),  # below the alias
                      ("http://other.test/a?sid=1", "http://other.test/a?sid=1")]:
        assert book.canonize(url, normalize=False).canonical == want, url
        assert mod.canonize(url) == want, url
    assert book.canonize("http://wiki.test/a?sid=1").site == "www.wiki.test"


def test_a_site_keyed_by_a_host_wins_over_another_sets_alias_and_a_removed_set_frees_it():
    import dustcanon
    from dustbuster.core.canon.rulebook import RuleBook

    own = {"site": "wiki.test", "version": 1, "rules": [
        {"type": "parameter", "name": "utm", "action": "remove", "status": "valid"}]}
    for book in (RuleBook(), dustcanon.RuleBook()):
        book.update("www.wiki.test", _alias_doc("www.wiki.test", "www.wiki.test", "wiki.test"))
        book.update("wiki.test", own)
        res = book.canonize("http://wiki.test/a?sid=1&utm=2")
        assert (res if isinstance(res, str) else res.canonical) == "http://wiki.test/a?sid=1"  # its own set
        book.update("wiki.test", None)
        res = book.canonize("http://wiki.test/a?sid=1&utm=2")
        assert (res if isinstance(res, str) else res.canonical) == "http://wiki.test/a?utm=2"  # the alias again
        book.update("www.wiki.test", None)
        res = book.canonize("http://wiki.test/a?sid=1&utm=2")
        assert (res if isinstance(res, str) else res.canonical) == "http://wiki.test/a?sid=1&utm=2"


def test_an_unsigned_host_rule_joins_only_the_www_twin_and_a_signed_one_any_declared_alias():
    import dustcanon
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
    from cryptography.hazmat.primitives.serialization import Encoding, PublicFormat

    from dustbuster.core.canon.rulebook import RuleBook
    from dustbuster.core.errors import RuleError
    from dustbuster.core.model.signing import key_id, sign_document

    old_name = _alias_doc("wiki.test", "old-wiki.test", "wiki.test")  # an old name of the site
    book, mod = RuleBook(), dustcanon.RuleBook()
    book.update("wiki.test", old_name)  # admitted (moves the old name onto the site) but covers no other host
    mod.update("wiki.test", old_name)
    assert book.sites["wiki.test"].hosts == ("wiki.test",) and mod.sites["wiki.test"].hosts == ("wiki.test",)
    assert book.canonize("http://old-wiki.test/a?sid=1", normalize=False).canonical == "http://old-wiki.test/a?sid=1"
    hijack = _alias_doc("wiki.test", "wiki.test", "evil.test")  # unsigned: the site moved to another host
    try:
        book.update("wiki.test", dict(hijack, version=2))
        raise AssertionError("admitted")
    except RuleError as exc:
        assert exc.reason == "off_site"
    try:
        mod.update("wiki.test", dict(hijack, version=2))
        raise AssertionError("admitted")
    except dustcanon.Rejected as exc:
        assert exc.reason == "off_site"

    key = Ed25519PrivateKey.generate()
    raw = key.public_key().public_bytes(Encoding.Raw, PublicFormat.Raw)
    signed = sign_document(dict(old_name, version=3), key)
    book = RuleBook(keys={key_id(raw): raw})
    assert book.update("wiki.test", signed).hosts == ("wiki.test", "old-wiki.test")
    assert book.canonize("http://old-wiki.test/a?sid=1", normalize=False).canonical == "http://wiki.test/a"
    import base64
    mod = dustcanon.RuleBook(keys=[base64.b64encode(raw).decode()])
    mod.update("wiki.test", signed)
    assert mod.canonize("http://old-wiki.test/a?sid=1") == "http://wiki.test/a"


def test_a_page_that_prints_its_own_host_is_the_same_page_under_each_alias():
    """Every page says which host served it and links its permalink absolutely (a feed, a wiki's
    footer): the alias rule is decided on pages whose sketches write the site's host names as one
    word (core/validation/sketch.py site_hosts_pattern); without it the pages would differ."""
    import random as _random

    from aiohttp import web

    from dustbuster.core.validation.sketch import site_hosts_pattern, sketch
    from tests.loopback import serve

    def body(host: str, path: str) -> bytes:
        rnd = _random.Random(path)
        text = " ".join(f"w{rnd.randrange(3000)}" for _ in range(120))
        return (f"<html><body><p>{text}</p><p>You are reading http://{host}{path} on {host.split(':')[0]}.</p>"
                f"<p>{text[::-1]}</p></body></html>").encode()

    async def page(request: web.Request) -> web.Response:
        if not request.path.startswith("/p/"):
            return web.Response(status=404)
        return web.Response(body=body(request.host, request.path_qs), content_type="text/html")

    a, b = body("www.host.test:80", "/p/1"), body("host.test:80", "/p/1")
    assert sketch(a) != sketch(b)  # the host alone makes them differ
    pattern = site_hosts_pattern(["host.test", "www.host.test"])
    assert sketch(a, hosts=pattern) == sketch(b, hosts=pattern)

    async def run():
        app = web.Application()
        app.router.add_get("/{tail:.*}", page)
        runner, port = await serve(app)
        try:
            origins = [f"http://host.test:{port}", f"http://www.host.test:{port}"]
            sites = parse_sites(json.dumps({"host.test": {
                "origins": origins, "allow_private": True, "resolve": {"host.test": "127.0.0.1", "www.host.test": "127.0.0.1"},
                "robots": False, "rate_per_s": 5000, "concurrency": 8}}), "sites")
            tests = [f"http://host.test:{port}/p/{i}" for i in range(60)]
            return await validate_site(SiteCandidates([], [], tests), policy_of(sites, "host.test", "sites"), Settings()), port
        finally:
            await runner.cleanup()

    sv, port = asyncio.run(run())
    assert aliases(sv) == {f'"^http://www.host.test:{port}/" → "^http://host.test:{port}/"': True}, aliases(sv)


def test_rules_anchored_on_an_alias_move_onto_its_target():
    from dustbuster.core.canon.canonize import Canonizer
    from dustbuster.core.model.rules import SubstringRule
    from dustbuster.core.validation.aliases import onto_targets

    host = SubstringRule.from_parts("http://www.w.test/", "http://w.test/", anchor_start=True)
    lit = SubstringRule.from_parts("http://www.w.test/old/", "http://www.w.test/new/", anchor_start=True)
    half = SubstringRule.from_parts("http://www.w.test/p.php?id=", "http://w.test/p_", anchor_start=True)
    other = SubstringRule.from_parts("http://x.test/a", "http://x.test/b", anchor_start=True)
    moved = onto_targets([host, lit, half, other])
    assert [r.text for r in moved] == ['"^http://www.w.test/" → "^http://w.test/"',
                                       '"^http://w.test/old/" → "^http://w.test/new/"',
                                       '"^http://w.test/p.php?id=" → "^http://w.test/p_"',
                                       '"^http://x.test/a" → "^http://x.test/b"']
    assert moved[1].evidence["moved_from"] == lit.text
    before, after = Canonizer([host, lit, half]), Canonizer(moved[:3])
    for path, want in (("old/1", "http://w.test/new/1"), ("p.php?id=3", "http://w.test/p_3")):
        assert after("http://www.w.test/" + path) == after("http://w.test/" + path) == want  # by either host: one form
        assert before("http://w.test/" + path) != want  # the literals never fired on the target's URLs
    assert onto_targets([lit, other]) == [lit, other]  # no host rule: nothing moves
