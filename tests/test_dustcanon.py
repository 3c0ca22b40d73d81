"""The dependency-free crawler module dustcanon.py gives the service's canonical URLs."""

from __future__ import annotations

import json
import subprocess
import sys

from hypothesis import given, settings
from hypothesis import strategies as st

import dustcanon
from dust.normalize import normalize
from dust.rulebook import RuleBook
from tests.test_canonizer import rule_list, url

from tests.conftest import ROOT


@settings(max_examples=400, deadline=None)
@given(rule_list, st.lists(url, max_size=5), st.sampled_from(["valid", "likely", "invalid"]))
def test_same_as_service(rules, urls, status):
    doc = {"site": "www.h.com", "version": 2, "rules": [r.to_json() | {"status": status} for r in rules]}
    book = RuleBook(normalize=False)
    book.update("www.h.com", doc)
    mod = dustcanon.RuleBook()
    mod.update("www.h.com", json.loads(json.dumps(doc)))
    rs = dustcanon.RuleSet(doc)
    for u in urls:
        want = book.canonicalize(u).canonical
        assert mod.canonicalize(u) == want
        assert rs.canonicalize(u) == book.canonicalize(u, site="www.h.com").canonical


def test_normalize_hook_and_mine_documents(tmp_path):
    doc = {"param_rules": [{"type": "parameter", "name": "sid", "action": "remove"}],
           "rules": [{"type": "substring", "alpha": "http://www.", "beta": "http://", "anchor_start": True}]}
    p = tmp_path / "r.json"
    p.write_text(json.dumps(doc))
    rs = dustcanon.load(p, normalize=normalize)
    assert rs("HTTP://WWW.H.COM:80/a/../b?sid=1#f") == "http://h.com/b"
    assert dustcanon.canonicalize("http://www.h.com/?sid=2", doc) == "http://h.com/"


def test_module_imports_nothing_outside_the_standard_library():
    code = ("import sys; sys.path.insert(0, '.'); import dustcanon; bad = [m for m in sys.modules if m.split('.')[0] in "
            "('dust','yarl','ahocorasick','numpy','faust','aiohttp')]; print(bad)")
    out = subprocess.run([sys.executable, "-I", "-c", code], cwd=ROOT, capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"
