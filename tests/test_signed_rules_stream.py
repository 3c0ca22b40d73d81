"""Issue 27 on the real broker: forged rule sets produced to the rules topic are refused and
counted by a worker's rules follower (agents.context.rules_follower, as every worker runs it)
when DUST_TRUSTED_KEYS is set, the validator's signed sets are applied, and a record with a
version far in the future no longer freezes its site; a tombstone deletes nothing when keys are
set (``unsigned_deletion``) and a set relabelled under another site's key applies nowhere
(``wrong_site``)."""

from __future__ import annotations

import asyncio
import base64
import json
import time
import uuid

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from dustbuster.agents.context import rules_follower
from dustbuster.agents.metrics import Metrics
from dustbuster.core.canon.admission import MAX_VERSION
from dustbuster.core.canon.rulebook import RuleBook
from dustbuster.core.model.signing import raw_public, sign_document
from dustbuster.stream.settings import Settings
from tests.test_canonizer_stream import _send

KEY, FORGER = Ed25519PrivateKey.generate(), Ed25519PrivateKey.generate()
PUB = base64.b64encode(raw_public(KEY)).decode()
NOW = int(time.time() * 1000)
SID = {"type": "parameter", "name": "sid", "action": "remove", "status": "valid"}
# the forger's rule: on the site, converging, a URL still: admission cannot refuse it, yet it makes a
# crawler skip every /story/N page as a duplicate of /N.  Only a signature tells it from the validator's.
EVIL = {"type": "substring", "alpha": "/story/", "beta": "/", "anchor_start": False, "anchor_end": False,
        "status": "valid"}


def doc(site: str, version: int, rules: list) -> dict:
    return {"site": site, "version": version, "created": time.time(), "schema": "dustbuster/ruleset@1", "rules": rules}


def rejected(metrics: Metrics) -> dict[str, float]:
    return {s.labels["reason"]: s.value for m in metrics.rule_sets_rejected.collect() for s in m.samples
            if s.name.endswith("_total") and s.value}


def test_forged_sets_on_the_topic_are_refused_and_counted_signed_ones_applied(kafka):
    prefix = "sig" + uuid.uuid4().hex[:8]
    settings = Settings(kafka_bootstrap=kafka, topic_prefix=prefix, trusted_keys=PUB)
    good = sign_document(doc("a.test", NOW, [SID]), KEY)
    tampered = dict(good, rules=[SID, EVIL])                                   # the signature of the good set, copied
    records = [
        ("a.test", good),                                                        # applied
        ("a.test", doc("a.test", NOW + 1, [SID, EVIL])),                         # unsigned
        ("a.test", sign_document(doc("a.test", NOW + 2, [SID, EVIL]), FORGER)),  # another key: bad_signature
        ("a.test", tampered | {"version": NOW + 3}),                             # bad_signature
        ("a.test", sign_document(doc("a.test", NOW, [EVIL]), KEY)),              # same version, other rules
        ("b.test", sign_document(doc("b.test", MAX_VERSION - 1, [SID]), KEY)),   # version_from_future
        ("b.test", sign_document(doc("b.test", NOW, [SID]), KEY)),               # not frozen: applied
        ("a.test", None),                                                        # a tombstone: unsigned_deletion
        ("c.test", good),                                                        # a.test's set relabelled: wrong_site
        ("test", good),                                                          # ... under a parent domain: wrong_site
    ]
    asyncio.run(_send(kafka, settings.rules_topic,
                      [(site.encode(), None if d is None else json.dumps(d).encode()) for site, d in records]))

    async def follow(book: RuleBook, metrics: Metrics) -> None:
        f = rules_follower(settings, book, metrics)
        await f.start()
        try:
            await asyncio.wait_for(f.read_to_end(), 60)
        finally:
            await f.stop()

    book, metrics = RuleBook(keys=settings.public_keys, max_skew_s=settings.max_version_skew_s), Metrics()
    asyncio.run(follow(book, metrics))
    assert rejected(metrics) == {"unsigned": 1, "bad_signature": 2, "version_reused": 1, "version_from_future": 1,
                                 "unsigned_deletion": 1, "wrong_site": 2}
    assert book.sites["a.test"].version == NOW and book.sites["b.test"].version == NOW
    assert set(book.sites) == {"a.test", "b.test"}  # the tombstone deleted nothing, the relabelled sets applied nowhere
    assert book.canonize("http://a.test/story/1?sid=2").canonical == "http://a.test/story/1"
    assert book.canonize("http://www.unrelated.test/items/7?sid=1").canonical == "http://www.unrelated.test/items/7?sid=1"

    # without trusted keys (as before issue 27): the forger's unsigned set is applied
    # (the tombstone came last for a.test: applied there; a relabelled set is refused with or without keys)
    open_book, open_metrics = RuleBook(), Metrics()
    asyncio.run(follow(open_book, open_metrics))
    assert "a.test" not in open_book.sites and set(open_book.sites) == {"b.test"}
    assert rejected(open_metrics)["wrong_site"] == 2
