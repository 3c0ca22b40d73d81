"""Records of the rules topic applied to a rule book: junk is counted and skipped, never applied."""

from __future__ import annotations

import json

from dustbuster.core.canon.rulebook import RuleBook
from dustbuster.stream.rulesview import TopicFollower

GOOD = {"site": "forum.test", "version": 1, "rules": [
    {"type": "substring", "alpha": "http://www.", "beta": "http://", "anchor_start": True, "status": "valid"}]}


def follower():
    book = RuleBook()
    return TopicFollower("127.0.0.1:1", "t-rules", book.update), book


def test_junk_records_are_skipped_and_the_previous_set_kept():
    f, book = follower()
    f.apply(b"forum.test", json.dumps(GOOD).encode())
    for key, value in [
        (b"forum.test", b"\xff\xfe"),                                   # not UTF-8 / JSON
        (b"forum.test", b"[1, 2]"),                                     # not an object
        (b"forum.test", b'{"version": 2}'),                             # no rules list
        (b"forum.test", b'{"version": 2, "rules": [{"type": "nope"}]}'),  # a bad rule
        (b"forum.test", b'{"version": "x", "rules": []}'),              # bad version
        (None, json.dumps(GOOD).encode()),                              # no site key
        (b"", json.dumps(GOOD).encode()),
    ]:
        f.apply(key, value, "t-rules/0@9")
    assert f.bad == 7 and f.read == 8
    assert book.sites["forum.test"].version == 1
    assert book.canonize("http://www.forum.test/x").canonical == "http://forum.test/x"


def test_new_version_and_tombstone():
    f, book = follower()
    f.apply(b"Forum.Test", json.dumps(GOOD).encode())
    f.apply(b"forum.test", json.dumps(GOOD | {"version": 2, "rules": []}).encode())
    assert book.sites["forum.test"].version == 2
    assert book.canonize("http://www.forum.test/x").canonical == "http://www.forum.test/x"
    f.apply(b"forum.test", None)
    assert "forum.test" not in book.sites and f.bad == 0
