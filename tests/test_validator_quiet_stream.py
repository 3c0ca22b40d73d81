"""The validator goes quiet, through the real broker and a site on loopback whose pages link to URLs
made for each answer (``sim-site --fresh-links``: every fetch shows links never seen, as real sites'
"from" views and tokens do).  A log fed once, then ten windows more: after the rounds the log needed,
nothing is fetched and no rule-set version is published, though every round's links went back to
the raw topic as listed URLs (agents/windows.py sends no set that only listed URLs changed;
agents/validator.py runs no round for decided candidates; fetch/pacer.py keeps the site's budget)."""

from __future__ import annotations

import json
import time
import urllib.request

from dustbuster.broker import free_port
from tests.simsite import start_sim_site, write_sim_log, write_sites
from tests.streamtools import Worker, feed, latest_candidates, read_topic, stream_env

SITE = "forum.test"


def site_state(api: int) -> dict:
    with urllib.request.urlopen(f"http://127.0.0.1:{api}/dashboard/state.json?site={SITE}", timeout=10) as r:
        return json.loads(r.read())


def metric(api: int, name: str) -> float:
    with urllib.request.urlopen(f"http://127.0.0.1:{api}/metrics", timeout=10) as r:
        lines = r.read().decode().splitlines()
    return sum(float(x.rsplit(" ", 1)[1]) for x in lines if x.startswith(name) and not x.startswith("#"))


def detail(state: dict) -> dict:
    return state.get("detail") or {}


def settled(api: int, w: Worker, window: float, quiet_windows: int = 4, timeout: float = 300) -> float:
    """Wait until no round runs and the fetch count stays put for ``quiet_windows`` windows; the count."""
    deadline = time.monotonic() + timeout
    last, same = -1.0, 0
    while time.monotonic() < deadline:
        assert w.alive(), w.log.read_text()[-3000:]
        now = metric(api, "dust_fetches_total")
        running = detail(site_state(api)).get("round")
        same = same + 1 if now == last and running is None else 0
        if same >= quiet_windows:
            return now
        last = now
        time.sleep(window)
    raise AssertionError(f"the validator never settled: {w.log.read_text()[-3000:]}")


def test_fed_once_then_ten_windows_fetch_nothing_and_publish_nothing(kafka, tmp_path):
    sim, port = start_sim_site("--fresh-links")
    try:
        log = write_sim_log(port, tmp_path / "sim.log", 3000)
        window = 1.0
        env = stream_env(kafka, window=window)
        env["DUST_VALIDATOR_SITES"] = str(write_sites(tmp_path / "sites.json", port, rate_per_s=1000))
        env["DUST_API_PORT"] = str(api := free_port())
        w = Worker(env, tmp_path / "w", tmp_path / "w.log").start()
        try:
            feed(env, log, SITE)
            latest_candidates(env, {SITE: 3000}, workers=[w], timeout=180)
            fetched = settled(api, w, window)
            versions = len(read_topic(kafka, env["DUST_TOPIC_PREFIX"] + "-rules"))
            sets = len(read_topic(kafka, env["DUST_TOPIC_PREFIX"] + "-candidates"))
            links_sent = metric(api, 'dust_listed_urls_sent_total{source="validator-links"}')
            time.sleep(10 * window)
            assert w.alive(), w.log.read_text()[-3000:]
            after = metric(api, "dust_fetches_total")
            budget = detail(site_state(api)).get("fetch_budget")
            unchanged = metric(api, "dust_candidate_sets_unchanged_total")
            skipped = metric(api, 'dust_validation_rounds_skipped_total{why="decided"}')
            over_budget = metric(api, 'dust_validation_rounds_skipped_total{why="fetch_budget"}')
            versions_after = len(read_topic(kafka, env["DUST_TOPIC_PREFIX"] + "-rules"))
            sets_after = len(read_topic(kafka, env["DUST_TOPIC_PREFIX"] + "-candidates"))
        finally:
            w.stop()
    finally:
        sim.terminate()
        sim.wait(10)
    assert versions >= 1 and links_sent > 0  # rules were published, and the fetched pages' links went back
    assert after == fetched, (fetched, after)  # ten windows: not one fetch
    assert versions_after == versions and sets_after == sets  # no new version, no new candidate set
    assert unchanged > 0 or skipped > 0  # the links reached a window, which sent nothing (or a round was skipped)
    assert budget is not None and budget["per_hour"] == 10_000 and budget["used_last_hour"] >= fetched > 0
    # quiet because the evidence is decided, not because the hour's budget ran out (which also stops a loop)
    assert over_budget == 0 and budget["refused"] == 0 and fetched < budget["per_hour"] / 2, (fetched, budget)
