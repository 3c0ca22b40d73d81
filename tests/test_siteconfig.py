"""The sites file parsed once (dustbuster.core.validation.siteconfig, Settings.sites), the renamed sketch
threshold, and the dead-letter record built in one place."""

from __future__ import annotations

import json
from dataclasses import replace

import pytest

from dustbuster.core.errors import ConfigError
from dustbuster.core.validation.siteconfig import SiteConfig, parse_sites
from dustbuster.core.errors import REJECT_EXCERPT_CHARS
from dustbuster.stream.records import dead_letter
from dustbuster.stream.settings import Settings


def test_parse_sites_reads_every_field_with_the_defaults():
    sites = parse_sites(json.dumps({
        "a.test": {"origins": ["http://a.test:80", "https://www.a.test"], "allow_private": True,
                   "resolve": {"WWW.A.test": "127.0.0.1"}, "robots": False, "rate_per_s": 3, "concurrency": "2"},
        "b.test": {"origins": []}, "c.test": None, "d.test": {"origins": ["http://d.test"]}}))
    assert sites["a.test"] == SiteConfig(("http://a.test:80", "https://www.a.test"), True, {"www.a.test": "127.0.0.1"},
                                         False, 3.0, 2)
    assert not sites["b.test"].fetchable and not sites["c.test"].fetchable
    assert sites["d.test"] == SiteConfig(("http://d.test",)) and sites["d.test"].fetchable


@pytest.mark.parametrize("text, words", [
    ("not json", "not JSON"),
    ("[]", "must be a JSON object"),
    ('{"a": [1]}', "site 'a': must be a JSON object"),
    ('{"a": {"origins": "http://a"}}', "'origins' must be a list"),
    ('{"a": {"origins": ["http://a"], "resolve": ["x"]}}', "'resolve' must map"),
    ('{"a": {"origins": ["http://a"], "rate_per_s": "fast"}}', "site 'a'"),
])
def test_a_malformed_sites_file_is_a_config_error(text, words):
    with pytest.raises(ConfigError, match=words):
        parse_sites(text, "sites.json")


def test_settings_parse_the_sites_file_once_when_used(tmp_path):
    conf = tmp_path / "sites.json"
    conf.write_text(json.dumps({"a.test": {"origins": ["http://a.test"]}}))
    s = Settings(validator_sites=conf)
    assert s.sites["a.test"].origins == ("http://a.test",)
    conf.write_text("garbage")  # read once, at its first use (the validator's start-up)
    assert s.sites["a.test"].origins == ("http://a.test",)
    assert Settings().sites == {}
    missing = Settings.from_env({"DUST_VALIDATOR_SITES": str(tmp_path / "none.json")})  # the other commands run
    with pytest.raises(ConfigError, match="no such sites file"):
        missing.sites
    with pytest.raises(ConfigError, match="not JSON"):
        replace(s, window_s=5.0).sites  # a new settings object reads the file again


def test_sketch_threshold_and_its_old_name():
    assert Settings.from_env({"DUST_SKETCH_THRESHOLD": "0.5"}).params.sketch_threshold == 0.5
    with pytest.raises(ConfigError, match="DUST_SKETCH_THRESHOLD"):
        Settings.from_env({"DUST_SKETCH_MIN_EQUAL": "0.5"})
    with pytest.raises(ConfigError, match="DUST_SKETCH_THRESHOLD"):  # even beside the new one: never ignored
        Settings.from_env({"DUST_SKETCH_MIN_EQUAL": "0.5", "DUST_SKETCH_THRESHOLD": "0.5"})


def test_site_policies_from_the_parsed_file(tmp_path):
    from dustbuster.sitevalidation import configured_policy, site_policy

    conf = tmp_path / "sites.json"
    conf.write_text(json.dumps({"a.test": {"origins": ["HTTP://A.test:80/x"], "concurrency": 2}, "b.test": {}}))
    s = Settings(validator_sites=conf)
    p = site_policy(s, "a.test")
    assert p.origins == frozenset({"http://a.test"}) and p.per_host_concurrency == 2 and not p.allow_private
    assert site_policy(s, "b.test") is None and site_policy(s, "c.test") is None
    assert configured_policy(conf, "a.test") == p
    with pytest.raises(ConfigError, match="has no origins for site 'b.test'"):
        configured_policy(conf, "b.test")
    with pytest.raises(ConfigError, match="no such sites file"):
        configured_policy(tmp_path / "none.json", "a.test")


def test_dead_letter_keeps_an_excerpt():
    r = dead_letter("bad_json", "d", "x" * 5000, topic="t", partition=1, offset=2, site="s")
    assert (r.reason, r.detail, r.site, r.topic, r.partition, r.offset) == ("bad_json", "d", "s", "t", 1, 2)
    assert r.line == "x" * REJECT_EXCERPT_CHARS
    assert dead_letter("r", "", b"\xff" + b"y" * 5000, topic="t", partition=0, offset=0).line == "\ufffd" + "y" * 999
    assert dead_letter("r", "", None, topic="t", partition=0, offset=0).line == ""
