"""dustbuster.crawlee: a real Crawlee-for-Python crawl (ParselCrawler, tests/crawlee_crawl.py, one
process each) of the simulator on loopback, judged against the simulator's truth as the Scrapy
crawls are (tests/test_scrapy.py): with the validated rules as unique keys, each page is
downloaded about once and none is lost."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

pytest.importorskip("crawlee", reason="Crawlee is not installed (pip install -e '.[crawlee]')")

from dustbuster.core.canon.rulebook import RuleBook  # noqa: E402
from tests.conftest import ROOT  # noqa: E402
from tests.test_scrapy import SEEDS, page, sim  # noqa: E402,F401 (the simulator fixture, shared)


def crawlee_crawl(sim, name: str, *args: str) -> dict:
    out = sim["tmp"] / f"crawlee-{name}.json"
    r = subprocess.run([sys.executable, str(ROOT / "tests" / "crawlee_crawl.py"), str(sim["seeds"]), str(out), *args],
                       cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stderr[-3000:]
    doc = json.loads(out.read_text())
    doc["log"] = r.stderr
    return doc


def test_crawlee_downloads_each_page_once_and_loses_none(sim):
    seeds = sim["seeds"].read_text().split()
    pages = {page(u) for u in seeds}
    book = RuleBook()
    book.update("forum.test", json.loads(sim["rules"].read_text()))
    plain = crawlee_crawl(sim, "plain")
    keyed = crawlee_crawl(sim, "keys", "--rules", str(sim["rules"]))
    for doc in (plain, keyed):
        assert {page(r["url"]) for r in doc["responses"]} == pages  # every distinct page downloaded
        assert doc["stats"]["requests_failed"] == 0
    assert len(plain["responses"]) >= 0.9 * SEEDS  # Crawlee's own keys merge only a few aliases
    assert len(pages) <= len(keyed["responses"]) <= 1.1 * len(pages), (len(keyed["responses"]), len(pages))
    canon = [book.canonize(r["url"]).canonical for r in keyed["responses"]]
    assert len(canon) == len(set(canon))
    assert {r["url"] for r in keyed["responses"]} <= set(seeds)  # key-only: the URLs linked are the ones fetched
    s = keyed["stats"]
    assert s["dustbuster/requests"] == SEEDS and s["dustbuster/rewritten"] > 0
    assert "Crawlee requests keyed" in keyed["log"]


def test_keys_transform_and_request(tmp_path):
    from dustbuster.core import ParamRule
    from dustbuster.crawlee import DustKeys

    rules = tmp_path / "rules.json"
    rules.write_text(json.dumps({"site": "forum.test", "version": 1,
                                 "rules": [ParamRule("sid", "remove", status="valid").to_json()]}))
    keys = DustKeys(str(rules))
    r = keys.request("http://forum.test/story?id=5&sid=9")
    assert r.url == "http://forum.test/story?id=5&sid=9" and r.unique_key == "http://forum.test/story?id=5"
    assert keys.transform({"url": "http://forum.test/a?sid=1"})["unique_key"] == "http://forum.test/a"
    own = {"url": "http://forum.test/a?sid=1", "unique_key": "mine"}
    assert keys.transform(dict(own)) == own  # a key of its own is kept
    post = {"url": "http://forum.test/a?sid=1", "method": "POST"}
    assert "unique_key" not in keys.transform(dict(post))
    assert keys.request("http://forum.test/a?sid=1", method="POST").unique_key != "http://forum.test/a"
    assert keys.counts == {"requests": 2, "rewritten": 2}
    keys.stop()


def test_keys_apply_only_signed_sets_when_trusted_keys_are_given(tmp_path):
    from dustbuster.core import ParamRule
    from dustbuster.core.model.signing import load_private_key, new_key, sign_document
    from dustbuster.crawlee import DustKeys

    pem, public = new_key()
    doc = {"site": "forum.test", "version": 1, "rules": [ParamRule("sid", "remove", status="valid").to_json()]}
    unsigned, signed = tmp_path / "unsigned.json", tmp_path / "signed.json"
    unsigned.write_text(json.dumps(doc))
    signed.write_text(json.dumps(sign_document(doc, load_private_key(pem))))
    keys = DustKeys(str(signed), keys=public, wait_s=1)
    assert keys.request("http://forum.test/a?sid=1").unique_key == "http://forum.test/a"
    keys.stop()
    keys = DustKeys(str(unsigned), keys=[public], wait_s=1)
    try:
        u = keys.request("http://forum.test/a?sid=1").unique_key
    except Exception as exc:  # no rule set could be applied: said, not a silent pass
        u = type(exc).__name__
    assert u != "http://forum.test/a" and keys.rules.refused["unsigned"] == 1
    keys.stop()
