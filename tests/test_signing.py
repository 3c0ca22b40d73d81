"""Issue 27, finding 4: signed rule sets (dustbuster.core.model.signing; docs/canonizer.md "Signed rule
sets").  A consumer with trusted keys refuses unsigned and wrongly signed sets, counted; without
keys it admits as before.  dustcanon.py verifies in pure Python what ``cryptography`` signs."""

from __future__ import annotations

import base64
import json

import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from hypothesis import given, settings
from hypothesis import strategies as st

import dustcanon
from dustbuster.core.errors import ConfigError, RuleError
from dustbuster.core.canon.rulebook import RuleBook
from dustbuster.core.model.signing import (content_bytes, key_id, load_private_key, new_key, parse_key_list,
                                     public_key_bytes, raw_public, sign_document, trusted_keys, verify_document)

SITE = "d4.test"
DOC = {"site": SITE, "version": 3, "created": 1795650000.123456, "schema": "dustbuster/ruleset@1",
       "rules": [{"type": "parameter", "name": "sid", "action": "remove", "status": "valid", "display": "remove sid=*"},
                 {"type": "substring", "alpha": "http://www.", "beta": "http://", "anchor_start": True,
                  "anchor_end": False, "status": "valid", "display": "\"^http://www.\" → \"^http://\""}],
       "stats": {"note": "é ü 漢字"}}
KEY = Ed25519PrivateKey.generate()
OTHER = Ed25519PrivateKey.generate()
PUB = base64.b64encode(raw_public(KEY)).decode()
OTHER_PUB = base64.b64encode(raw_public(OTHER)).decode()


def wire(doc):
    """Through JSON, as a consumer receives it (with Faust's namespace field added on the way)."""
    return json.loads(json.dumps(doc | {"__faust": {"ns": "dustbuster.ruleset.v1"}}))


def test_a_signed_set_verifies_after_the_wire_and_a_changed_one_does_not():
    signed = sign_document(DOC, KEY)
    keys = trusted_keys([PUB])
    assert verify_document(wire(signed), keys) == key_id(raw_public(KEY))
    tampered = wire(signed)
    tampered["rules"][0]["name"] = "id"
    with pytest.raises(RuleError, match="bad_signature"):
        verify_document(tampered, keys)
    with pytest.raises(RuleError, match="unsigned"):
        verify_document(DOC, keys)
    with pytest.raises(RuleError, match="bad_signature"):          # signed by a key nobody trusts
        verify_document(sign_document(DOC, OTHER), keys)
    assert content_bytes(signed) == content_bytes(wire(DOC)) and content_bytes(DOC).isascii()


REFUSED = [("unsigned", lambda: DOC), ("bad_signature", lambda: sign_document(DOC, OTHER)),
           ("bad_signature", lambda: sign_document(DOC, KEY) | {"version": 4}),
           ("bad_signature", lambda: sign_document(DOC, KEY) | {"signature": {"alg": "ed25519", "key_id": "x", "sig": "!"}}),
           ("bad_signature", lambda: sign_document(DOC, KEY) | {"signature": "forged"})]


@pytest.mark.parametrize("reason, make", REFUSED, ids=[f"{r}-{i}" for i, (r, _) in enumerate(REFUSED)])
def test_every_consumer_with_keys_refuses_unsigned_and_wrongly_signed_sets(reason, make):
    book = RuleBook(keys=trusted_keys([PUB]))
    mod = dustcanon.RuleBook(keys=[PUB])
    for update in (book.update, mod.update):
        with pytest.raises((RuleError, dustcanon.Rejected)) as got:
            update(SITE, wire(make()))
        assert got.value.reason == reason, got.value
    assert book.rejected == {reason: 1} and not book.sites and not mod.sites
    with pytest.raises(dustcanon.Rejected, match=reason):
        dustcanon.RuleSet(wire(make()), keys=[PUB])


def test_rotation_several_keys_and_no_keys_as_before():
    book = RuleBook(keys=parse_key_list(f"{PUB}, {OTHER_PUB}"))
    mod = dustcanon.RuleBook(keys=[PUB, OTHER_PUB])
    for update in (book.update, mod.update):
        update(SITE, wire(sign_document(DOC, KEY)))
        update(SITE, wire(sign_document(DOC | {"version": 4}, OTHER)))       # the new key takes over
    assert book.sites[SITE].version == mod.sites[SITE].version == 4
    plain_book, plain_mod = RuleBook(), dustcanon.RuleBook()
    plain_book.update(SITE, wire(DOC))
    plain_mod.update(SITE, wire(DOC))                                        # no key configured: unsigned is fine
    assert plain_book.canonize("http://www.d4.test/?sid=1").canonical == "http://d4.test/"


def test_keys_read_as_base64_or_pem_and_private_keys_from_pem():
    pem_pub = KEY.public_key().public_bytes(serialization.Encoding.PEM,
                                            serialization.PublicFormat.SubjectPublicKeyInfo).decode()
    assert public_key_bytes(pem_pub) == public_key_bytes(PUB) == raw_public(KEY)
    assert dustcanon._keys([pem_pub]) == dustcanon._keys(PUB) == trusted_keys([PUB])
    pem, pub = new_key()
    assert base64.b64encode(raw_public(load_private_key(pem))).decode() == pub
    with pytest.raises(ConfigError):
        public_key_bytes("not a key")


# ------------------------------------------------------------------ dustcanon's Ed25519 against cryptography

@settings(max_examples=40, deadline=None)
@given(st.binary(max_size=300), st.integers(0, 63), st.integers(0, 7))
def test_dustcanon_verifies_what_cryptography_signs_and_nothing_else(message, byte, bit):
    key = Ed25519PrivateKey.generate()
    pub, sig = raw_public(key), key.sign(message)
    assert dustcanon.ed25519_verify(pub, message, sig)
    flipped = bytearray(sig)
    flipped[byte] ^= 1 << bit
    assert not dustcanon.ed25519_verify(pub, message, bytes(flipped))                  # tampered signature
    assert not dustcanon.ed25519_verify(pub, message + b"x", sig)                      # tampered message
    assert not dustcanon.ed25519_verify(raw_public(OTHER), message, sig)               # wrong key


def test_dustcanon_refuses_a_non_canonical_s_as_openssl_does():
    """S + L verifies the same equation but is not the canonical encoding (RFC 8032 §5.1.7: S < L)."""
    from cryptography.exceptions import InvalidSignature

    msg = b"rule set"
    sig = KEY.sign(msg)
    s = int.from_bytes(sig[32:], "little") + dustcanon._L
    malleated = sig[:32] + s.to_bytes(32, "little")
    assert not dustcanon.ed25519_verify(raw_public(KEY), msg, malleated)
    with pytest.raises(InvalidSignature):
        KEY.public_key().verify(malleated, msg)
    assert not dustcanon.ed25519_verify(raw_public(KEY)[:31], msg, sig)                # a short key
    assert not dustcanon.ed25519_verify(b"\xff" * 32, msg, sig)                        # not a point


# ------------------------------------------------------------------ the command line: keys, canonize --rules

def test_keys_command_and_canonize_with_a_trusted_key(tmp_path, capsys, monkeypatch):
    import io
    import os
    import stat

    from dustbuster.cli import main
    from dustbuster.stream.settings import read_signing_key

    monkeypatch.delenv("DUST_TRUSTED_KEYS", raising=False)
    key_file = tmp_path / "rules.key"
    assert main(["keys", "-o", str(key_file), "--public", str(tmp_path / "rules.pub")]) == 0
    public = capsys.readouterr().out.strip()
    assert stat.S_IMODE(os.stat(key_file).st_mode) == 0o600
    assert (tmp_path / "rules.pub").read_text().strip() == public
    assert main(["keys", "-o", str(key_file)]) == 2                      # never overwritten
    signed, unsigned = tmp_path / "signed.json", tmp_path / "unsigned.json"
    signed.write_text(json.dumps(sign_document(DOC, read_signing_key(key_file))))
    unsigned.write_text(json.dumps(DOC))
    for path, want in ((signed, 0), (unsigned, 2)):
        monkeypatch.setattr("sys.stdin", io.TextIOWrapper(io.BytesIO(b"http://www.d4.test/?sid=1\n")))
        assert main(["-q", "canonize", "--rules", str(path), "--trusted-key", public]) == want, path
    out, err = capsys.readouterr()
    assert out == "http://d4.test/\n" and "unsigned" in err


def test_the_api_answer_of_a_signed_set_still_verifies():
    """GET /sites/{site}/rules hands the document on as published (a consumer such as
    dustbuster.rulesource verifies it again)."""
    import asyncio

    from aiohttp.test_utils import TestClient, TestServer

    from dustbuster.agents.api import make_api
    from dustbuster.agents.metrics import Metrics

    book = RuleBook(keys=trusted_keys([PUB]))
    book.update(SITE, wire(sign_document(DOC, KEY)))

    async def go():
        async with TestClient(TestServer(make_api(book, Metrics(), ready=lambda: True), host="127.0.0.1")) as c:
            r = await c.get(f"/sites/{SITE}/rules")
            return await r.json()

    got = asyncio.run(go())
    assert verify_document(got, trusted_keys([PUB])) and dustcanon.RuleSet(got, keys=[PUB]).version == 3


def test_rulesource_and_scrapy_settings_refuse_unsigned_sets(tmp_path, monkeypatch):
    from scrapy.settings import Settings as ScrapySettings

    from dustbuster.rulesource import LiveRules
    from dustbuster.scrapy import live_rules

    monkeypatch.delenv("DUST_TRUSTED_KEYS", raising=False)
    path = tmp_path / "rules.jsonl"
    other = dict(DOC, site="other.test")
    path.write_text(json.dumps(sign_document(DOC, KEY)) + "\n" + json.dumps(other) + "\n")
    lr = LiveRules(str(path), keys=[PUB]).start()
    try:
        assert lr.versions() == {SITE: 3} and lr.refused == {"unsigned": 1}
    finally:
        lr.stop()
    scr = live_rules(ScrapySettings({"DUSTBUSTER_RULES": str(path), "DUSTBUSTER_TRUSTED_KEYS": [PUB]})).start()
    try:
        assert scr.versions() == {SITE: 3} and scr.refused == {"unsigned": 1}
    finally:
        scr.stop()
    open_lr = LiveRules(str(path)).start()                      # no key: both, as before
    try:
        assert open_lr.versions() == {SITE: 3, "other.test": 3}
    finally:
        open_lr.stop()


def test_with_keys_a_tombstone_is_refused_counted_and_the_signed_set_kept():
    """A null record cannot carry a signature: with trusted keys it deletes nothing (counted as
    ``unsigned_deletion``); a signed set with no rules is how the validator removes a site's rules,
    and it keeps the version, so the older signed set cannot be replayed after it."""
    old = wire(sign_document(DOC, KEY))
    book, mod = RuleBook(keys=trusted_keys([PUB])), dustcanon.RuleBook(keys=[PUB])
    for update in (book.update, mod.update):
        update(SITE, old)
        with pytest.raises((RuleError, dustcanon.Rejected)) as got:
            update(SITE, None)
        assert got.value.reason == "unsigned_deletion"
    assert book.rejected == {"unsigned_deletion": 1} and book.sites[SITE].version == 3 and SITE in mod.sites
    url = "http://www.d4.test/a?sid=1"
    assert book.canonize(url).canonical == mod.canonize(url) == "http://d4.test/a"
    empty = wire(sign_document(DOC | {"version": 4, "rules": []}, KEY))
    for update in (book.update, mod.update):
        update(SITE, empty)
    assert book.canonize(url).canonical == mod.canonize(url) == url and book.sites[SITE].rules == ()
    for update in (book.update, mod.update):
        with pytest.raises((RuleError, dustcanon.Rejected), match="stale_version"):
            update(SITE, old)
    open_book, open_mod = RuleBook(), dustcanon.RuleBook()  # without keys, a tombstone deletes as before
    for update in (open_book.update, open_mod.update):
        update(SITE, old)
        update(SITE, None)
    assert not open_book.sites and not open_mod.sites


@pytest.mark.parametrize("key", ["b.test", "test", "D4.TEST.evil", ""])
def test_a_set_applies_only_under_the_site_it_names(key):
    """The signature covers the ``site`` field: a.test's signed set produced under b.test, or under a
    parent domain (which would hand it to every host below it), is refused as ``wrong_site`` by the
    rule book and by dustcanon.py, signed or not."""
    signed = wire(sign_document(DOC, KEY))
    for book in (RuleBook(keys=trusted_keys([PUB])), RuleBook()):
        with pytest.raises(RuleError, match="wrong_site"):
            book.update(key or "x", signed)
        assert book.rejected == {"wrong_site": 1} and not book.sites
    for mod in (dustcanon.RuleBook(keys=[PUB]), dustcanon.RuleBook()):
        with pytest.raises(dustcanon.Rejected, match="wrong_site"):
            mod.update(key or "x", signed)
        assert not mod.sites
    assert dustcanon.RuleBook().canonize("http://www.unrelated.test/a?sid=1") == "http://www.unrelated.test/a?sid=1"
    book = RuleBook(keys=trusted_keys([PUB]))
    book.update(SITE.upper(), signed)  # the site's own name, in any case, is the site
    assert book.sites[SITE].version == 3


def test_a_signed_set_must_name_its_site():
    unnamed = {k: v for k, v in DOC.items() if k != "site"}
    with pytest.raises(RuleError, match="wrong_site"):
        RuleBook(keys=trusted_keys([PUB])).update(SITE, wire(sign_document(unnamed, KEY)))
    with pytest.raises(dustcanon.Rejected, match="wrong_site"):
        dustcanon.RuleBook(keys=[PUB]).update(SITE, wire(sign_document(unnamed, KEY)))
    RuleBook().update(SITE, wire(unnamed))  # an unsigned hand-written set without the field: as keyed


def test_after_a_rotation_a_site_left_without_rules_is_said(tmp_path, caplog):
    """A key dropped from the consumers while a site's only set was signed with it: the set is
    refused (bad_signature) and the site has no rules at all; the consumer says so, and says when
    it applies sets unauthenticated (no trusted keys)."""
    import logging

    from dustbuster.core.canon.rulebook import trust_warnings
    from dustbuster.rulesource import LiveRules

    book = RuleBook(keys=trusted_keys([OTHER_PUB]))  # KEY was rotated out
    with pytest.raises(RuleError, match="bad_signature"):
        book.update(SITE, wire(sign_document(DOC, KEY)))
    book.update("e5.test", wire(sign_document(DOC | {"site": "e5.test"}, OTHER)))
    assert book.refused_only() == {SITE: "bad_signature"}
    assert trust_warnings(book) == [f"1 sites have no rule set: every set read for them was refused: {SITE} (bad_signature)"]
    assert "unauthenticated" in trust_warnings(RuleBook())[0]

    rules = tmp_path / "rules.jsonl"
    rules.write_text(json.dumps(sign_document(DOC, KEY)) + "\n")
    with caplog.at_level(logging.WARNING, logger="dustbuster.rulesource"):
        LiveRules(str(rules), keys=OTHER_PUB).start()
        LiveRules(str(rules), keys="").start()
    said = [r.getMessage() for r in caplog.records]
    assert any(f"{SITE} (bad_signature)" in m for m in said) and any("unauthenticated" in m for m in said)


def test_a_signed_removal_of_a_host_does_not_hide_its_parent_domains_rules():
    """www.d4.test's rules all refuted: the signing validator publishes an empty signed set for it.
    A URL of www.d4.test then gets d4.test's rules, as it would after a tombstone, not none."""
    parent = wire(sign_document(DOC, KEY))
    empty = wire(sign_document({"site": "www.d4.test", "version": 9, "rules": []}, KEY))
    book, mod = RuleBook(keys=trusted_keys([PUB])), dustcanon.RuleBook(keys=[PUB])
    for update in (book.update, mod.update):
        update(SITE, parent)
        update("www.d4.test", empty)
    url = "http://www.d4.test/a?sid=1"
    assert book.canonize(url).canonical == mod.canonize(url) == "http://d4.test/a"
    assert book.canonize(url, site="www.d4.test").canonical == url  # named explicitly: its own (empty) set
