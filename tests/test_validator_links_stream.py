"""Issue 28 item 5 through the real broker: a worker's validator rounds on the simulated site send
the links of the pages they fetched to the raw topic, as ``format: "urls"`` batches of the site
(agents/listedlinks.py), counted in ``dust_listed_urls_sent_total``; the ingest agent lists them, and a
later window's test URLs carry them to the next round (the whole loop of item 5): the next window
that the log changes (listed URLs alone send no candidate set)."""

from __future__ import annotations

import json
import time
import urllib.request

from dustdev.devsim import SITE_HOSTS
from dustbuster.broker import free_port
from tests.simsite import start_sim_site, write_sim_log, write_sites
from tests.streamtools import Worker, feed, read_topic, stream_env


def link_batches(env: dict, worker: Worker, timeout: float = 180) -> list[tuple[bytes, dict]]:
    """The raw topic's batches of the validator's links, once there is one."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        assert worker.alive(), worker.log.read_text()[-3000:]
        msgs = [(m.key, json.loads(m.value)) for m in read_topic(env["DUST_KAFKA_BOOTSTRAP"], env["DUST_TOPIC_PREFIX"] + "-raw")]
        found = [(k, d) for k, d in msgs if d.get("source") == "validator-links"]
        if found:
            return found
        time.sleep(2)
    raise AssertionError(f"no links on the raw topic: {worker.log.read_text()[-3000:]}")


def test_a_round_sends_the_links_of_its_pages_to_the_raw_topic(kafka, tmp_path):
    sim, port = start_sim_site()
    try:
        log = tmp_path / "sim.log"
        write_sim_log(port, log, 3000)
        env = stream_env(kafka, window=2.0)
        env["DUST_VALIDATOR_SITES"] = str(write_sites(tmp_path / "sites.json", port, rate_per_s=1000))
        env["DUST_API_PORT"] = str(api := free_port())
        w = Worker(env, tmp_path / "w", tmp_path / "w.log").start()
        try:
            feed(env, log, "forum.test")
            link_batches(env, w)
            time.sleep(3 * float(env["DUST_WINDOW_S"]))  # the windows and rounds the links bring (none sends them again)
            # the links alone send no candidate set (agents/windows.py window_key); the next lines of the log do
            feed(env, write_sim_log(port, tmp_path / "more.log", 20), "forum.test")
            with urllib.request.urlopen(f"http://127.0.0.1:{api}/metrics", timeout=10) as r:
                metrics = r.read().decode()
            batches = link_batches(env, w)  # read after the metrics: every batch they counted is here
            cands = [json.loads(m.value) for m in read_topic(kafka, env["DUST_TOPIC_PREFIX"] + "-candidates")]
            # the ingest agent lists them: a later window's test URLs carry them to the next round
            expected = {f"http://{h}:{port}/s{i}" for h in SITE_HOSTS for i in range(5)}
            listed_in = wait_for_test_urls(env, w, expected)
        finally:
            w.stop()
    finally:
        sim.terminate()
        sim.wait(10)
    # the simulator's pages link to /s0 … /s4 of their host (sim/site.py); the round fetched every host's front page
    expected = {f"http://{h}:{port}/s{i}" for h in SITE_HOSTS for i in range(5)}
    assert all(k == b"forum.test" and d["site"] == "forum.test" and d["format"] == "urls" for k, d in batches)
    sent = [u for _, d in batches for u in d["lines"]]
    assert sorted(sent) == sorted(expected)  # each once: a later round sends only what it has not sent
    assert len(cands) >= 2 and not expected & set(cands[0]["test_urls"])  # none was logged: all new to the site
    counted = [float(line.rsplit(" ", 1)[1]) for line in metrics.splitlines()
               if line.startswith('dust_listed_urls_sent_total{source="validator-links"}')]
    assert counted == [len(expected)]
    assert "links of fetched pages sent as listed URLs" in (tmp_path / "w.log").read_text()
    assert listed_in["stats"]["listed"] >= len(expected)


def wait_for_test_urls(env: dict, worker: Worker, urls: set[str], timeout: float = 180) -> dict:
    """The first candidate set whose test URLs hold all of ``urls``, once there is one."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        assert worker.alive(), worker.log.read_text()[-3000:]
        for m in read_topic(env["DUST_KAFKA_BOOTSTRAP"], env["DUST_TOPIC_PREFIX"] + "-candidates"):
            d = json.loads(m.value)
            if urls <= set(d.get("test_urls", [])):
                return d
        time.sleep(2)
    raise AssertionError(f"no candidate set with the listed links: {worker.log.read_text()[-3000:]}")
