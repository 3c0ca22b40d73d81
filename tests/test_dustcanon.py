"""The dependency-free crawler module dustcanon.py gives the service's canonical URLs."""

from __future__ import annotations

import json
import subprocess
import sys

from hypothesis import given, settings
from hypothesis import strategies as st

import pytest

import dustcanon
from dustbuster.core.errors import RuleError
from dustbuster.core.normalize import normalize
from dustbuster.core.rulebook import RuleBook
from tests.test_canonizer import rule_list, url

from tests.conftest import ROOT


@settings(max_examples=400, deadline=None)
@given(rule_list, st.lists(url, max_size=5), st.sampled_from(["valid", "likely", "invalid"]))
def test_same_as_service(rules, urls, status):
    doc = {"site": "www.h.com", "version": 2, "rules": [r.to_json() | {"status": status} for r in rules]}
    book = RuleBook(normalize=False)
    mod = dustcanon.RuleBook()
    try:  # both admit the set, or both reject it (docs/canonizer.md "Admission")
        book.update("www.h.com", doc)
    except RuleError as exc:
        with pytest.raises(dustcanon.Rejected):
            mod.update("www.h.com", json.loads(json.dumps(doc)))
        assert status != "valid" or exc.reason != "unvalidated_rule"
        return
    mod.update("www.h.com", json.loads(json.dumps(doc)))
    assert status == "valid" or not rules
    rs = dustcanon.RuleSet(doc)
    for u in urls:
        want = book.canonize(u).canonical
        assert mod.canonize(u) == want
        assert rs.canonize(u) == book.canonize(u, site="www.h.com").canonical


def test_normalize_hook_and_mine_documents(tmp_path):
    doc = {"param_rules": [{"type": "parameter", "name": "sid", "action": "remove"}],
           "rules": [{"type": "substring", "alpha": "http://www.", "beta": "http://", "anchor_start": True}]}
    p = tmp_path / "r.json"
    p.write_text(json.dumps(doc))
    with pytest.raises(dustcanon.Rejected, match="unvalidated_rule"):  # mine's candidates: only when asked
        dustcanon.load(p, normalize=normalize)
    rs = dustcanon.load(p, normalize=normalize, unvalidated=True)
    assert rs("HTTP://WWW.H.COM:80/a/../b?sid=1#f") == "http://h.com/b"
    assert dustcanon.canonize("http://www.h.com/?sid=2", doc, unvalidated=True) == "http://h.com/"


def test_admission_like_the_service():
    ok = {"type": "parameter", "name": "sid", "action": "remove", "status": "valid"}
    book = dustcanon.RuleBook()
    book.update("d4.test", {"version": 2, "rules": [ok]})
    bad = [({"version": 3, "rules": [{"type": "substring", "alpha": "http://d4.test/", "beta": "http://evil.example/",
                                      "anchor_start": True, "status": "valid"}]}, "off_site"),
           ({"version": 3, "rules": [{"type": "substring", "alpha": "/", "beta": "", "status": "valid"}]}, "not_a_url"),
           ({"version": 3, "rules": [{"type": "substring", "alpha": "", "beta": "x", "status": "valid"}]}, "self_feeding"),
           ({"version": 1, "rules": [ok]}, "stale_version"), ({"version": float("inf"), "rules": []}, "bad_version"),
           ({"version": 3, "rules": [dict(ok, status="likely")]}, "unvalidated_rule"), ({"version": 3, "rules": 5}, "bad_record")]
    for doc, reason in bad:
        with pytest.raises(dustcanon.Rejected) as got:
            book.update("d4.test", doc)
        assert got.value.reason == reason
        service = RuleBook()
        service.update("d4.test", {"version": 2, "rules": [ok]})
        with pytest.raises(RuleError) as want:
            service.update("d4.test", doc)
        assert want.value.reason == reason
    assert book.sites["d4.test"].version == 2 and book.canonize("http://d4.test/?sid=1") == "http://d4.test/"


def test_module_imports_nothing_outside_the_standard_library():
    code = ("import sys; sys.path.insert(0, '.'); import dustcanon; bad = [m for m in sys.modules if m.split('.')[0] in "
            "('dustbuster','yarl','ahocorasick','numpy','faust','aiohttp')]; print(bad)")
    out = subprocess.run([sys.executable, "-I", "-c", code], cwd=ROOT, capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"
