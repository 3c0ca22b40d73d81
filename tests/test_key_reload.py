"""Trusted keys change without a restart (DUST_TRUSTED_KEYS_FILE: stream/keyfile.py, agents/keyreload.py,
``RuleBook.set_keys``): a key taken out of the file is revoked at once — every held set it signed is
dropped, counted and named — and a key put in admits the newest set refused for want of it."""

from __future__ import annotations

import logging

import pytest

from dustbuster.agents.keyreload import apply_keys
from dustbuster.core.canon.rulebook import RuleBook, trust_warnings
from dustbuster.core.errors import ConfigError, RuleError
from dustbuster.core.model.signing import parse_key_list, sign_document
from dustbuster.stream.keyfile import KeyFile, read_key_file
from dustbuster.stream.settings import Settings
from tests.test_signing import DOC, KEY, OTHER, OTHER_PUB, PUB, wire

A, B = "a.test", "b.test"


def doc_of(site: str, key) -> dict:
    return wire(sign_document(DOC | {"site": site}, key))


def test_a_revoked_key_drops_its_sets_and_an_added_key_admits_the_ones_refused():
    book = RuleBook(keys=parse_key_list(f"{PUB} {OTHER_PUB}"))
    book.update(A, doc_of(A, KEY))
    book.update(B, doc_of(B, OTHER))
    assert book.canonize("http://www.a.test/x?sid=1").canonical == "http://a.test/x"
    dropped, admitted = book.set_keys(parse_key_list(OTHER_PUB))  # KEY is compromised: revoked
    assert dropped == [A] and admitted == [] and sorted(book.sites) == [B]
    assert book.canonize("http://www.a.test/x?sid=1").canonical == "http://www.a.test/x?sid=1"
    assert book.rejected["key_revoked"] == 1 and book.refused_only() == {A: "key_revoked"}
    assert any("a.test (key_revoked)" in w for w in trust_warnings(book))
    with pytest.raises(RuleError):  # a set signed by the revoked key is refused from now on
        book.update(A, doc_of(A, KEY))
    bad = book.bad
    dropped, admitted = book.set_keys(parse_key_list(f"{PUB} {OTHER_PUB}"))  # trusted again
    assert dropped == [] and admitted == [A] and book.bad == bad and book.refused_only() == {}
    dropped, admitted = book.set_keys({})  # no keys: nothing checked, nothing dropped
    assert dropped == [] and sorted(book.sites) == [A, B]


def test_a_set_refused_before_its_key_was_trusted_is_admitted_when_it_is():
    book = RuleBook(keys=parse_key_list(PUB))
    with pytest.raises(RuleError):
        book.update(B, doc_of(B, OTHER))
    rejected = dict(book.rejected)
    assert book.set_keys(parse_key_list(PUB)) == ([], [])  # still no key for it: not counted twice
    assert book.rejected == rejected
    assert book.set_keys(parse_key_list(f"{PUB},{OTHER_PUB}")) == ([], [B])


def test_the_keys_file_is_read_again_when_it_changes_and_a_bad_one_keeps_the_keys(tmp_path, caplog):
    path = tmp_path / "keys"
    path.write_text(f"# the validator's keys\n{PUB}\n{OTHER_PUB}  # the new one\n")
    watched = KeyFile(path)
    assert len(watched.keys) == 2 and watched.changed() is None  # unchanged: nothing to do
    path.write_text(f"{OTHER_PUB}\n")
    assert list(watched.changed() or {}) == list(parse_key_list(OTHER_PUB))
    path.write_text("not a key\n")
    with caplog.at_level(logging.WARNING):
        assert watched.changed() is None and len(watched.keys) == 1  # a half-written file drops nothing
    assert "is not valid" in caplog.text
    path.unlink()
    assert watched.changed() is None and len(watched.keys) == 1
    with pytest.raises(ConfigError, match="cannot read the trusted keys file"):
        read_key_file(path)


def test_the_setting_joins_the_file_and_the_variable(tmp_path, caplog):
    path = tmp_path / "keys"
    path.write_text(f"{OTHER_PUB}\n")
    s = Settings.from_env({"DUST_TRUSTED_KEYS": PUB, "DUST_TRUSTED_KEYS_FILE": str(path)})
    assert s.public_keys == parse_key_list(f"{PUB} {OTHER_PUB}")
    book = RuleBook(keys=s.public_keys)
    book.update(A, doc_of(A, OTHER))
    with caplog.at_level(logging.WARNING):
        dropped, _ = apply_keys(book, {}, parse_key_list(PUB), path)  # the file emptied: its key revoked
    assert dropped == [A] and "1 sites lost their rule set (key revoked): a.test" in caplog.text


def test_an_emptied_or_missing_file_never_turns_the_checks_off(tmp_path):
    path = tmp_path / "keys"
    path.write_text("# none yet\n")
    with pytest.raises(ConfigError, match="holds no key"):
        KeyFile(path)
    path.write_text(f"{PUB}\n")
    watched = KeyFile(path)
    path.write_text("# all removed\n")
    assert watched.changed() is None and list(watched.keys) == list(parse_key_list(PUB))


def test_live_rules_revoke_a_key_from_their_keys_file(tmp_path):
    from dustbuster.rulesource import LiveRules

    keys, rules = tmp_path / "keys", tmp_path / "rules.jsonl"
    keys.write_text(f"{PUB}\n{OTHER_PUB}\n")
    import json

    rules.write_text("\n".join(json.dumps(d) for d in (doc_of(A, KEY), doc_of(B, OTHER))) + "\n")
    live = LiveRules(str(rules), keys_file=keys)
    live._load_file(rules)
    assert sorted(live.versions()) == [A, B]
    keys.write_text(f"{OTHER_PUB}\n")
    assert live.reload_keys() and sorted(live.versions()) == [B]
    assert live.canonize("http://www.a.test/x?sid=1").canonical == "http://www.a.test/x?sid=1"
    assert not live.reload_keys()  # unchanged


def test_a_revoked_sets_site_admits_no_older_set_but_the_one_set_aside():
    book = RuleBook(keys=parse_key_list(f"{PUB} {OTHER_PUB}"))
    old = wire(sign_document(DOC | {"site": A, "version": 3}, OTHER))  # signed before a rotation
    new = wire(sign_document(DOC | {"site": A, "version": 5}, KEY))
    book.update(A, old)
    book.update(A, new)
    assert book.set_keys(parse_key_list(OTHER_PUB)) == ([A], [])  # KEY revoked
    with pytest.raises(RuleError):
        book.update(A, old)  # replayed: older than the set dropped
    assert A not in book.sites
    assert book.set_keys(parse_key_list(f"{PUB} {OTHER_PUB}")) == ([], [A])  # KEY trusted again: v5 back
    assert book.sites[A].version == 5
