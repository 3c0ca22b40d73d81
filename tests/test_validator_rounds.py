"""Validation rounds over real HTTP (the simulator): publish, stay quiet while nothing changes,
drop a rule that stopped holding, keep rules through an outage, and remove a site whose rules were
all refuted (a tombstone)."""

from __future__ import annotations

import asyncio
import time
import json

from dustbuster.agents.validator import RoundParts, validation_round
from dustbuster.core.mining.mine import mine
from dustbuster.sim.forum import SITE_HOSTS
from dustbuster.sim.site import SimSite, start
from dustbuster.state.verdicts import VerdictStore
from dustbuster.logs.reader import parse_lines
from dustbuster.stream.records import CandidateSet
from dustbuster.stream.settings import Settings

HOSTS = SITE_HOSTS  #: the simulator's four hosts


def candidates(site: SimSite, port: int) -> CandidateSet:
    from dustbuster.core.urls.urllist import URLList

    ul = URLList()
    for rec in parse_lines(site.log_lines(8000, port=port), "forum.test").records:
        ul.add(*rec)
    doc = mine(ul).to_json()
    return CandidateSet(site="forum.test", window=1, rules=doc["rules"], stats=doc["stats"], params=doc["params"], test_urls=list(ul))


def sim_sites(path, port: int):
    """The sites file that lets the validator fetch the in-process simulator on ``port`` (its four hosts)."""
    path.write_text(json.dumps({"forum.test": {
        "origins": [f"http://{h}:{port}" for h in HOSTS], "allow_private": True,
        "resolve": {h: "127.0.0.1" for h in HOSTS}, "rate_per_s": 2000, "concurrency": 8}}))
    return path


def test_rounds_publish_keep_drop_and_tombstone(tmp_path):
    async def go():
        sim = SimSite()
        runner, port = await start(sim)
        conf = sim_sites(tmp_path / "sites.json", port)
        cand = candidates(sim, port)
        store = VerdictStore(tmp_path / "verdicts")
        sent: list = []

        async def publish(site, value):
            sent.append(value)

        settings = Settings(validator_sites=conf, verdict_ttl_s=3600)
        first = await validation_round("forum.test", cand, RoundParts(settings, store, publish))
        again = await validation_round("forum.test", cand, RoundParts(settings, store, publish))
        sent_after_again = len(sent)
        sim.broken.add("story_alias")
        expired = Settings(validator_sites=conf, verdict_ttl_s=0)
        third = await validation_round("forum.test", cand, RoundParts(expired, store, publish))
        sim.broken.add("all")  # an outage: nothing can be decided, nothing is dropped
        outage = await validation_round("forum.test", cand, RoundParts(expired, store, publish))
        sim.broken = {"distinct"}  # the site lost all its DUST: every rule is refuted
        fourth = await validation_round("forum.test", cand, RoundParts(expired, store, publish))
        await runner.cleanup()
        store.close()
        return first, again, third, outage, fourth, sent, sent_after_again

    t0_ms = int(time.time() * 1000)
    first, again, third, outage, fourth, sent, sent_after_again = asyncio.run(go())
    assert outage == "unchanged"
    t1 = [r["display"] for r in first.rules]
    # versions are the publish time in ms (issue 27; dustbuster.core.model.ruleversion), growing from round to round
    assert t0_ms <= first.version <= time.time() * 1000 and any("story_" in t for t in t1)
    # the same candidates while their verdicts hold: no round at all (nothing fetched), nothing re-published
    assert again == "skipped" and sent_after_again == 1
    t3 = [r["display"] for r in third.rules]
    # story?id=N ↔ story_N stopped holding: refuted and dropped (rules whose u is now a soft error
    # are undecided and kept as they were: only a refutation removes a rule)
    assert third.version > first.version and len(t3) > 0
    to_story_ = [r["display"] for r in third.rules if r["type"] == "substring" and "story?id=" in r["alpha"]
                 and r["beta"].endswith("story_")]
    assert any(r["type"] == "substring" and "story?id=" in r["alpha"] and r["beta"].endswith("story_")
               for r in first.rules)
    assert to_story_ == []  # every rule that sends URLs to the broken story_N pages is gone
    assert fourth is None and sent[-1] is None  # tombstone: the site's rules are gone
    assert len(sent) == 3


def test_unconfigured_sites_are_never_fetched(tmp_path):
    async def go():
        store = VerdictStore(tmp_path / "v")
        cand = CandidateSet(site="semicomplete.com", window=1, rules=[{"type": "substring", "alpha": "/a", "beta": "/b"}],
                            stats={}, params={}, test_urls=["http://semicomplete.com/a"])
        sent = []

        async def publish(site, value):
            sent.append(value)

        out = [await validation_round("semicomplete.com", cand, RoundParts(Settings(), store, publish))]
        conf = tmp_path / "s.json"
        conf.write_text(json.dumps({"other.org": {"origins": ["http://other.org"]}}))
        out.append(await validation_round("semicomplete.com", cand, RoundParts(Settings(validator_sites=conf), store, publish)))
        store.close()
        return out, sent

    out, sent = asyncio.run(go())
    assert out == ["unconfigured", "unconfigured"] and sent == []


def test_with_a_signing_key_a_site_without_valid_rules_gets_a_signed_empty_set(tmp_path):
    """Consumers with trusted keys refuse tombstones (nothing signs a null record): the validator
    that signs removes a site's rules with a signed set of no rules, newer than the last one, which
    those consumers apply."""
    from dustbuster.agents.validator import send_decision
    from dustbuster.core.canon.rulebook import RuleBook
    from dustbuster.core.model.ruleversion import PUBLISH, TOMBSTONE, VersionDecision
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

    from dustbuster.core.model.signing import key_id, raw_public

    key, sent = Ed25519PrivateKey.generate(), []

    async def publish(site, rs):
        sent.append(None if rs is None else json.loads(json.dumps(rs.to_representation())))

    rule = {"type": "parameter", "name": "sid", "action": "remove", "status": "valid", "display": "remove sid=*"}
    verdicts = VerdictStore(tmp_path / "v")
    asyncio.run(send_decision("a.test", VersionDecision(PUBLISH, 5), [rule], {}, verdicts, publish, key=key))
    asyncio.run(send_decision("a.test", VersionDecision(TOMBSTONE, 6), [], {}, verdicts, publish, key=key))
    assert sent[1] is not None and sent[1]["rules"] == [] and sent[1]["version"] == 6 and "signature" in sent[1]
    book = RuleBook(keys={key_id(raw_public(key)): raw_public(key)})
    book.update("a.test", sent[0])
    assert book.canonize("http://a.test/x?sid=1").canonical == "http://a.test/x"
    book.update("a.test", sent[1])
    assert book.canonize("http://a.test/x?sid=1").canonical == "http://a.test/x?sid=1"
    asyncio.run(send_decision("a.test", VersionDecision(TOMBSTONE, 7), [], {}, verdicts, publish))  # no key: a tombstone
    assert sent[2] is None
    verdicts.close()
