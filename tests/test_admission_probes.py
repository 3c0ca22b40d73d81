"""Issue 27, finding 3: admission checks every rule on URLs built from the rule itself, bounds
versions by the consumer's clock, and counts a version reused with other content
(dustbuster.core.canon.admission, dustbuster.core.canon.rulebook, dustcanon.py alike; docs/canonizer.md "Admission")."""

from __future__ import annotations

import json
import time

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import dustcanon
from dustbuster.core import SubstringRule
from dustbuster.core.canon.admission import MAX_VERSION, admit_rules, rule_probes
from dustbuster.core.errors import RuleError
from dustbuster.core.model.pattern import _PH, PatternRule
from dustbuster.core.canon.rulebook import RuleBook
from dustbuster.core.model.rules import rule_from_json

SITE = "p1.test"


def sub(alpha, beta, start=False, end=False):
    return SubstringRule.from_parts(alpha, beta, start, end, status="valid").to_json()


def pat(alpha, beta, start=False):
    pre = "\x02" if start else ""
    return PatternRule(pre + alpha, pre + beta, status="valid").to_json()


# rules that the fixed probe list never exercises: each harms only URLs that contain its α
HIDDEN = [
    # the issue's example: /secret/… alone moves to another host
    ("off_site", sub("http://p1.test/secret/", "http://evil.example/secret/", start=True)),
    ("off_site", sub("p1.test/secret/", "evil.example/secret/")),
    ("off_site", pat("http://p1.test/secret/{word}", "http://evil.example/{word}", start=True)),
    # "/private/" stripped with the slashes: http://p1.test/private/x → http://p1.testx (another host)
    ("off_site", sub("/private/", "")),
    # the path after /private/ becomes the host's name: http://p1.test/private/x → http://p1.test.evil.example/x
    ("off_site", sub("/private/", ".evil.example/")),
    # a space in the output: no longer a URL
    ("not_a_url", sub("/private/", "/ ")),
    ("not_a_url", sub("/private/", "\n/")),
    # a subdomain's name rewritten: http://a.p1.test/ → http://evil.test/
    ("off_site", sub("a.p1", "evil")),
    ("not_a_url", sub("sid=", "s\x00id=")),
]


@pytest.mark.parametrize("reason, rule", HIDDEN, ids=[f"{r}-{i}" for i, (r, _) in enumerate(HIDDEN)])
def test_a_rule_that_harms_only_its_own_urls_is_refused(reason, rule):
    doc = {"site": SITE, "version": 5, "rules": [rule]}
    with pytest.raises(RuleError) as got:
        admit_rules(SITE, doc)
    assert got.value.reason == reason, got.value
    with pytest.raises(dustcanon.Rejected) as also:
        dustcanon.RuleBook().update(SITE, json.loads(json.dumps(doc)))
    assert also.value.reason == reason, also.value


def test_the_issue_example_is_not_applied_by_the_rule_book_nor_dustcanon():
    doc = {"site": SITE, "version": 5, "rules": [HIDDEN[0][1]]}
    book, mod = RuleBook(normalize=False), dustcanon.RuleBook()
    for update in (book.update, mod.update):
        with pytest.raises((RuleError, dustcanon.Rejected)):
            update(SITE, json.loads(json.dumps(doc)))
    assert book.canonize("http://p1.test/secret/x?sid=1").canonical == "http://p1.test/secret/x?sid=1"
    assert mod.canonize("http://p1.test/secret/x?sid=1") == "http://p1.test/secret/x?sid=1"
    assert book.rejected == {"off_site": 1}


def test_rule_probes_are_few_and_put_alpha_where_it_can_match():
    rule = rule_from_json(sub("/private/", "/"))
    urls = rule_probes(SITE, rule)
    assert 3 <= len(urls) <= 8
    assert "http://p1.test/private/x?sid=1" in urls
    assert any("/a/private/" in u for u in urls) and any("?" in u.split("/private/")[0] for u in urls)
    scoped = rule_from_json({"type": "parameter", "name": "sid", "action": "remove", "scope": "/forum",
                             "status": "valid"})
    assert any(u.startswith("http://p1.test/forum/") and "sid=" in u for u in rule_probes(SITE, scoped))


GOOD_RULES = [sub("/private/", "/"), sub("http://www.", "http://", start=True), sub("/index.html", "/", end=True),
              pat("/story/{digits}/print", "/story/{digits}"), sub("?sid=", "?x=")]


def test_ordinary_rules_still_pass_their_own_probes():
    got = admit_rules(SITE, {"site": SITE, "version": 5, "rules": GOOD_RULES})
    assert got is not None and len(got[1]) == len(GOOD_RULES)
    dustcanon.RuleBook().update(SITE, json.loads(json.dumps({"version": 5, "rules": GOOD_RULES})))


# ------------------------------------------------------------------ versions

def test_a_version_from_the_far_future_is_refused_and_does_not_freeze_the_site():
    now = 1_790_000_000.0
    book = RuleBook(clock=lambda: now)
    mod = dustcanon.RuleBook(clock=lambda: now)
    doc = {"site": SITE, "version": 3, "rules": GOOD_RULES}
    for update in (book.update, mod.update):
        update(SITE, json.loads(json.dumps(doc)))            # old small-integer versions stay readable
        with pytest.raises((RuleError, dustcanon.Rejected)) as got:
            update(SITE, json.loads(json.dumps(doc | {"version": MAX_VERSION - 1})))
        assert got.value.reason == "version_from_future"
        update(SITE, json.loads(json.dumps(doc | {"version": int(now * 1000)})))   # a real version applies
    assert book.sites[SITE].version == mod.sites[SITE].version == int(now * 1000)
    assert book.rejected == {"version_from_future": 1}


def test_the_skew_allowed_is_a_setting():
    now = time.time()
    doc = {"site": SITE, "version": int(now * 1000) + 3_600_000, "rules": GOOD_RULES}   # an hour ahead
    assert admit_rules(SITE, doc, now_ms=int(now * 1000)) is not None                   # default skew: a day
    with pytest.raises(RuleError, match="version_from_future"):
        admit_rules(SITE, doc, now_ms=int(now * 1000), max_skew_ms=60_000)
    with pytest.raises(dustcanon.Rejected, match="version_from_future"):
        dustcanon.RuleBook(max_skew_s=60).update(SITE, doc)


def test_the_same_version_with_other_content_is_counted():
    doc = {"site": SITE, "version": 7, "rules": GOOD_RULES}
    other = doc | {"rules": GOOD_RULES[:1]}
    book, mod = RuleBook(normalize=False), dustcanon.RuleBook()
    for update in (book.update, mod.update):
        update(SITE, json.loads(json.dumps(doc)))
        update(SITE, json.loads(json.dumps(doc)))                 # the same set read again: silently kept
        with pytest.raises((RuleError, dustcanon.Rejected)) as got:
            update(SITE, json.loads(json.dumps(other)))
        assert got.value.reason == "version_reused"
    assert book.rejected == {"version_reused": 1} and len(book.sites[SITE].rules) == len(GOOD_RULES)
    assert mod.canonize("http://p1.test/index.html") == "http://p1.test/"


PIECES = st.sampled_from(["/", "http://", "https://", "www.", "p1.test", "p1", "a.p1", "test/", "/secret/", "?", "&",
                          "sid=", "=", "x", "7", ".", ":8080", "#", "{digits}", "{word}"])


@settings(max_examples=300, deadline=None)
@given(st.lists(PIECES, min_size=1, max_size=5), st.lists(PIECES, max_size=3), st.booleans(), st.booleans(),
       st.sampled_from(["p1.test", "www.p1.test", "", "localhost"]))
def test_dustcanon_builds_the_same_probes_as_the_core(alpha, beta, start, end, site):
    """The same URLs from the same rule (dustcanon.py copies dustbuster.core.canon.admission.rule_probes)."""
    a, b = "".join(alpha), "".join(beta)
    kind = "pattern" if len(_PH.findall(a)) == 1 else "substring"
    r = {"type": kind, "alpha": a, "beta": _PH.sub("", b), "anchor_start": start, "anchor_end": end, "status": "valid"}
    try:
        core = rule_from_json(r)
        mine = dustcanon._rule(r)
    except (RuleError, ValueError, KeyError):
        return
    hosts = [site, "www." + site] if "." in site else ["example.com", "www.example.com"]
    assert dustcanon._rule_probes(hosts, mine) == rule_probes(site, core), (r, site)
