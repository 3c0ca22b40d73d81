"""The dashboard in a real headless Chromium (tests/browser.py), asserting what a person sees.

1. In-process: the worker's API (agents/api.py) on loopback with a dashboard state the test
   changes step by step — the token asked for, a site after its first window, candidate rules
   marked "likely, not validated", a validation round in progress then finished, a published rule
   whose evidence opens (and stays open when a new version comes), links only for http(s) URLs.
2. End to end: a real worker on the real broker, the simulated forum on loopback, its log fed:
   the page shows the candidate rules after a window, then the validated rule set with evidence
   (sample pairs that link to the simulator's pages), its version and the discovered redundancy.
"""

from __future__ import annotations

import time
from collections import Counter

from dustbuster.agents.api import make_api
from dustbuster.agents.dashboard_state import DashboardState
from dustbuster.core import ParamRule, SubstringRule
from dustbuster.core.canon.rulebook import RuleBook
from dustbuster.broker import free_port, port_open
from dustbuster.agents.metrics import Metrics

from dustdev.dashboard import record_versions
from tests.apiserver import ApiThread
from tests.browser import chrome, open_rule, screenshot, visible_text, wait
from tests.streamtools import Worker, feed, stream_env
from tests.simsite import start_sim_site, write_sim_log, write_sites

R = SubstringRule.from_parts
TOKEN = "s3cret-token"


class Follower:  # what record_versions wraps: the rules follower's update callback
    def __init__(self, book: RuleBook) -> None:
        self.on_update = book.update


def ruleset(version: int, extra: list[dict]) -> dict:
    sid = ParamRule("sid", "remove", status="valid", evidence={
        "positives": 95, "negatives": 0, "skipped": 1, "fetches": 190, "applicable": 3, "samples": [
            ["http://forum.test/story_1?sid=9", "http://forum.test/story_1", "similar"],
            ["javascript:alert(1)//?sid=1", "javascript:alert(1)//", "similar"]]}).to_json()
    return {"site": "forum.test", "version": version, "created": 1795650000.0 + version, "rules": [sid] + extra,
            "stats": {"candidates": 3, "fetches": 400, "set_check": {"passed": True, "rounds": 1, "fetches": 30,
                                                                    "positives": 20, "negatives": 0, "dropped": []}}}


def test_dashboard_in_a_browser_token_rules_evidence_versions(tmp_path):
    book, state = RuleBook(), DashboardState()
    follower = Follower(book)
    record_versions(follower, book, state.versions)
    api = ApiThread(make_api(book, Metrics(), token=TOKEN, dashboard=state)).start()
    d = chrome()
    try:
        d.get(f"http://127.0.0.1:{api.port}/")
        # the token is asked for; a wrong one is refused, the right one opens the page
        wait(d, lambda d: d.find_element("id", "token").is_displayed(), 30, "the token form")
        d.find_element("id", "token").send_keys("wrong")
        d.find_element("id", "token-submit").click()
        wait(d, lambda d: d.find_element("id", "token-error").is_displayed(), 30, "'token refused'")
        d.find_element("id", "token").clear()
        d.find_element("id", "token").send_keys(TOKEN)
        d.find_element("id", "token-submit").click()
        wait(d, lambda d: "No site yet" in visible_text(d, "#empty"), 30, "the empty dashboard")

        # a window: the site appears with its traffic and its candidate rules, marked as such
        urls = ["http://www.forum.test/story?id=1", "http://forum.test/story_1", "http://forum.test/story?id=1&sid=9",
                "http://forum.test/story_2", "http://forum.test/story?id=2"]
        cands = [R("/story?id=", "/story_").to_json() | {"support": 12, "support_high": 14},
                 R("/", "").to_json() | {"support": 2, "support_high": 2}]
        for k, lines in enumerate((300, 700)):
            api.call(state.add_candidates, "forum.test", time.time() - 60 + k * 30, {
                "site": "forum.test", "window": 10 + k, "rules": cands, "param_rules": [],
                "stats": {"lines": lines, "urls": 4 + k}, "test_urls": urls})
        wait(d, lambda d: "forum.test" in visible_text(d, "#sites tbody"), 30, "the site row")
        rows = wait(d, lambda d: [e for e in d.find_elements("css selector", "#candidates tbody tr") if e.is_displayed()],
                    30, "candidate rows")
        assert '"/story?id=" → "/story_"' in rows[0].text and "likely, not validated" in rows[0].text
        assert "UNSAFE" in rows[1].text  # "/" → "" would mangle every URL
        wait(d, lambda d: "lines in: 700" in visible_text(d, "#traffic") and "unique URLs: 5" in visible_text(d, "#traffic")
             and "2 windows" in visible_text(d, "#traffic"), 30, "both windows in the traffic panel")
        assert "No validated rule set" in visible_text(d, "#published")

        # a validation round in progress, live
        counts: Counter = Counter()
        rp = api.call(state.rounds.begin, "forum.test", {"window": 11, "rules": cands, "param_rules": [{}, {}]})
        api.call(rp.watch, counts)
        counts["ok"] += 57
        api.call(rp.verdict, type("V", (), {"valid": True, "reason": ""})())
        api.call(rp.verdict, type("V", (), {"valid": False, "reason": ""})())
        wait(d, lambda d: "2 of 4" in visible_text(d, "#round") and "57" in visible_text(d, "#round"), 30, "round progress")
        assert "in progress" in visible_text(d, "#round")
        screenshot(d, "dashboard-inprocess-round.png", tmp_path, publish=False)  # made-up data: not for docs

        # the round publishes version 1: the rule set with evidence, the version log
        story = R("/story?id=", "/story_", status="valid", evidence={"positives": 40, "negatives": 1}).to_json()
        api.call(follower.on_update, "forum.test", ruleset(1, [story]))
        api.call(state.rounds.end, rp, object())
        wait(d, lambda d: "Version 1" in visible_text(d, "#published"), 30, "the published set")
        wait(d, lambda d: "a new rule-set version published" in visible_text(d, "#round"), 30, "the finished round")
        assert "v1" in visible_text(d, "#versions") and "+ remove sid=*" in visible_text(d, "#versions")
        # 5 URLs → www.forum.test/story_1, forum.test/story_1 (twice), forum.test/story_2 (twice): 3
        assert "40.0 %" in visible_text(d, "#redundancy")
        rule = d.find_element("css selector", '#published details.rule[data-rule="remove sid=*"]')
        assert not rule.find_element("css selector", ".evidence").is_displayed()
        rule.find_element("tag name", "summary").click()
        ev = wait(d, lambda d: rule.find_element("css selector", ".evidence").is_displayed()
                  and rule.find_element("css selector", ".evidence"), 30, "the evidence panel")
        assert "positives: 95" in ev.text and "negatives: 0" in ev.text and "fetches: 190" in ev.text
        links = [a.get_attribute("href") for a in ev.find_elements("css selector", "ul.samples a")]
        assert links == ["http://forum.test/story_1?sid=9", "http://forum.test/story_1"]  # javascript: is text only
        assert "javascript:alert(1)//?sid=1" in ev.text
        assert "Test URLs it changes: 1 of the site's 5 newest URLs" in ev.text
        assert [a.get_attribute("href") for a in ev.find_elements("css selector", "ul.changes a")] == [
            "http://forum.test/story?id=1&sid=9", "http://forum.test/story?id=1"]

        # version 2 drops a rule: the version log says so, the open evidence stays open
        api.call(follower.on_update, "forum.test", ruleset(2, []))
        wait(d, lambda d: "Version 2" in visible_text(d, "#published"), 30, "version 2")
        assert '− "/story?id=" → "/story_"' in visible_text(d, "#versions")
        rule = d.find_element("css selector", '#published details.rule[data-rule="remove sid=*"]')
        assert rule.find_element("css selector", ".evidence").is_displayed()
        # no script error and no failed load but the 401s of the token step
        errors = [e for e in d.get_log("browser") if "401" not in e["message"]] if hasattr(d, "get_log") else []
        assert errors == [], errors
    finally:
        d.quit()
        api.stop()


def test_dashboard_of_a_real_worker_shows_rules_after_a_window_and_their_evidence(kafka, tmp_path):
    sim, port = start_sim_site()
    d = None
    w = None
    try:
        log = tmp_path / "sim.log"
        write_sim_log(port, log, 5000)
        conf = tmp_path / "sites.json"
        # a moderate fetch rate: the round lasts long enough for a person (and the test) to watch it
        write_sites(conf, port, rate_per_s=150)
        env = stream_env(kafka, window=3.0)
        api = free_port()
        env.update({"DUST_VALIDATOR_SITES": str(conf), "DUST_API_PORT": str(api), "DUST_API_TOKEN": TOKEN})
        w = Worker(env, tmp_path / "w", tmp_path / "w.log").start()
        d = chrome()
        for _ in range(600):  # the worker's API comes up after its start
            assert w.alive(), (tmp_path / "w.log").read_text()[-3000:]
            if port_open(api):
                break
            time.sleep(0.2)
        d.get(f"http://127.0.0.1:{api}/#token={TOKEN}")  # a link with the token: kept for the tab, taken off the URL
        wait(d, lambda d: "No site yet" in visible_text(d, "#empty"), 120, "the empty dashboard")
        assert "token" not in d.current_url

        feed(env, log, "forum.test")
        # after a window: the site, its traffic and its candidate rules, not validated
        wait(d, lambda d: "forum.test" in visible_text(d, "#sites tbody"), 180, "the site after a window")
        rows = wait(d, lambda d: [e.text for e in d.find_elements("css selector", "#candidates tbody tr") if e.is_displayed()],
                    60, "candidate rules")
        assert any("story?id=" in r and "story_" in r for r in rows), rows
        assert all("likely, not validated" in r for r in rows)
        # the validator's round, seen in progress or already finished
        wait(d, lambda d: "in progress" in visible_text(d, "#round") or "Last round" in visible_text(d, "#round"),
             300, "a validation round")
        if "in progress" in visible_text(d, "#round"):
            screenshot(d, "dashboard-round.png", tmp_path)
        # the published rule set (the validator may publish a few versions as windows come: wait
        # for one that removes sid), its version, the redundancy it discovers
        wait(d, lambda d: "Version" in visible_text(d, "#published"), 300, "the published rule set")
        wait(d, lambda d: d.find_elements("css selector", '#published details.rule[data-rule="remove sid=*"]'), 300,
             "the rule that removes sid")

        def redundancy(d) -> float:
            text = visible_text(d, "#redundancy [data-k=redundancy]")
            return float(text.split()[0]) if text else 0.0
        wait(d, lambda d: redundancy(d) > 30, 300, "a discovered redundancy over 30 %")
        assert "v1" in visible_text(d, "#versions")
        # every rule's evidence opens on a click; sample pairs link to the simulator's pages
        names = wait(d, lambda d: [e.get_attribute("data-rule") for e in d.find_elements("css selector", "#published details.rule")],
                     30, "the published rules")
        sample_links = []
        for name in names:
            got = open_rule(d, name)
            if got is None:  # a newer version without it came meanwhile
                continue
            text, samples, changes = got
            assert "positives:" in text and "Test URLs it changes" in text, text
            assert all(f":{port}/" in h for h in samples + changes), (samples, changes)
            sample_links += samples
        assert sample_links
        wait(d, lambda d: "passed" in visible_text(d, "#published [data-k=set-check]"), 30, "the set-level check")
        d.refresh()  # closes the evidence panels again (the token stays for the tab): one open for the picture
        wait(d, lambda d: d.find_elements("css selector", "#published details.rule"), 60, "the page again")
        open_rule(d, "remove sid=*")
        screenshot(d, "dashboard.png", tmp_path)
    finally:
        if d is not None:
            d.quit()
        if w is not None:
            w.stop()
        sim.terminate()
        sim.wait(10)
