"""The canonizer agent and the HTTP API in a real worker on the real broker:
publish a rule set, feed a frontier, observe canonical URLs and seen flags; publish a new version
and observe the change without a restart; junk on the frontier is rejected, the worker lives;
``dustbuster rules`` / ``canonize --from-topic`` / ``export --from-topic`` read the same topic."""

from __future__ import annotations

import asyncio
import json
import queue
import subprocess
import sys
import threading
import time
import urllib.request

from aiokafka import AIOKafkaProducer

from dustbuster.core import ParamRule, SubstringRule
from dustbuster.broker import free_port
from tests.conftest import ROOT
from tests.streamtools import Worker, read_topic, stream_env

R = SubstringRule.from_parts
SITE = "forum.test"


def ruleset(version: int, rules) -> bytes:
    return json.dumps({"site": SITE, "version": version, "created": time.time(), "schema": "dustbuster/ruleset@1",
                       "rules": [r.to_json() | {"status": "valid"} for r in rules]}).encode()


V1 = [R("http://www.", "http://", True), R("/story?id=", "/story_")]
V2 = [ParamRule("sid", "remove")] + V1


async def _send(bootstrap: str, topic: str, msgs: list[tuple[bytes | None, bytes | None]]) -> None:
    p = AIOKafkaProducer(bootstrap_servers=bootstrap, acks="all")
    await p.start()
    try:
        for k, v in msgs:
            await p.send_and_wait(topic, v, key=k)
    finally:
        await p.stop()


def send(env, topic_suffix, msgs):
    asyncio.run(_send(env["DUST_KAFKA_BOOTSTRAP"], env["DUST_TOPIC_PREFIX"] + topic_suffix, msgs))


def http(port: int, path: str, body: dict | None = None, token: str = "tok"):
    req = urllib.request.Request(f"http://127.0.0.1:{port}{path}", data=json.dumps(body).encode() if body is not None else None,
                                 headers={"Authorization": f"Bearer {token}", "Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(req, timeout=10) as r:
            return r.status, r.read()
    except urllib.error.HTTPError as e:
        return e.code, e.read()
    except OSError:
        return None, b""


def wait_for(fn, timeout=90.0, what="condition", worker=None):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if worker is not None:
            assert worker.alive(), worker.log.read_text()[-3000:]
        got = fn()
        if got:
            return got
        time.sleep(0.3)
    raise AssertionError(f"timed out waiting for {what}" + (f"\n{worker.log.read_text()[-3000:]}" if worker else ""))


def outputs(env) -> list[dict]:
    return [json.loads(m.value) for m in read_topic(env["DUST_KAFKA_BOOTSTRAP"], env["DUST_TOPIC_PREFIX"] + "-canonical")]


def site_version(port):
    st, body = http(port, f"/sites/{SITE}/rules")
    return json.loads(body)["version"] if st == 200 else None


def test_frontier_canonical_seen_and_live_rule_update(kafka, tmp_path):
    env = stream_env(kafka, window=3600)
    port = free_port()
    env.update({"DUST_API_PORT": str(port), "DUST_API_TOKEN": "tok", "DUST_VALIDATE": "false"})
    w = Worker(env, tmp_path / "w", tmp_path / "w.log").start()
    follow = None
    try:
        wait_for(lambda: http(port, "/healthz", token="")[0] == 200, what="API ready", worker=w)
        send(env, "-rules", [(SITE.encode(), ruleset(1, V1))])
        wait_for(lambda: site_version(port) == 1, what="rule set v1 in the worker", worker=w)

        batch1 = ["http://www.forum.test/story?id=5", "http://forum.test/story_5", "HTTP://WWW.FORUM.TEST:80/story?id=6#c",
                  "http://forum.test/story_6?sid=a", "http://forum.test/story_6?sid=b"]
        send(env, "-frontier", [(SITE.encode(), json.dumps({"urls": batch1}).encode()),
                                (SITE.encode(), b"\xff\xfe junk"), (SITE.encode(), b'{"urls": [1, 2]}'),
                                (SITE.encode(), ("http://forum.test/ok\nhttp://forum.test/" + "x" * 9000).encode())])
        out = wait_for(lambda: (o := outputs(env)) and len(o) >= 6 and o, what="canonical URLs", worker=w)
        got = [(o["url"], o["canonical"], o["seen"], o["version"]) for o in out]
        assert got == [
            ("http://www.forum.test/story?id=5", "http://forum.test/story_5", False, 1),
            ("http://forum.test/story_5", "http://forum.test/story_5", True, 1),
            ("HTTP://WWW.FORUM.TEST:80/story?id=6#c", "http://forum.test/story_6", False, 1),
            ("http://forum.test/story_6?sid=a", "http://forum.test/story_6?sid=a", False, 1),
            ("http://forum.test/story_6?sid=b", "http://forum.test/story_6?sid=b", False, 1),
            ("http://forum.test/ok", "http://forum.test/ok", False, 1),
        ]
        assert out[0]["rules"] == ['"^http://www." → "^http://"', '"/story?id=" → "/story_"'] and out[0]["site"] == SITE
        rejects = [json.loads(m.value) for m in read_topic(kafka, env["DUST_TOPIC_PREFIX"] + "-rejects")]
        assert sorted(r["reason"] for r in rejects) == ["bad_encoding", "bad_record", "url_too_long"]

        # a crawler following the rules topic sees each version as it comes
        follow = subprocess.Popen([sys.executable, "-m", "dustbuster", "rules", "--site", SITE, "--follow", "--json"], cwd=ROOT,
                                  env=env, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
        lines: queue.Queue = queue.Queue()
        threading.Thread(target=lambda: [lines.put(x) for x in follow.stdout], daemon=True).start()
        assert json.loads(lines.get(timeout=60))["version"] == 1

        # a new version: applied without a restart
        send(env, "-rules", [(SITE.encode(), ruleset(2, V2))])
        assert json.loads(lines.get(timeout=60))["version"] == 2
        wait_for(lambda: site_version(port) == 2, what="rule set v2 in the worker", worker=w)
        send(env, "-frontier", [(SITE.encode(), json.dumps({"urls": ["http://www.forum.test/story?id=6&sid=zz",
                                                                     "http://forum.test/story_7?sid=q"]}).encode())])
        out = wait_for(lambda: (o := outputs(env)) and len(o) >= 8 and o, what="v2 answers", worker=w)
        assert [(o["canonical"], o["seen"], o["version"]) for o in out[6:]] == [
            ("http://forum.test/story_6", True, 2), ("http://forum.test/story_7", False, 2)]
        assert out[6]["rules"][0] == "remove sid=*"

        # the HTTP API of the same worker
        st, body = http(port, "/canonicalize", {"urls": ["http://www.forum.test/story?id=9&sid=1"]})
        res = json.loads(body)
        assert st == 200 and res["results"][0]["canonical"] == "http://forum.test/story_9" and res["versions"] == {SITE: 2}
        assert http(port, "/sites", token="wrong")[0] == 401
        st, body = http(port, "/metrics")
        m = body.decode()
        assert 'dust_canonizations_total{source="frontier"} 8.0' in m and "dust_duplicates_skipped_total 2.0" in m
        assert "dust_rule_sets 1.0" in m and 'dust_rejects_total{reason="bad_encoding"} 1.0' in m
        # the frontier's URLs went on to the raw topic as URL lists of their site (issue 28 item 5)
        lists = [json.loads(m.value) for m in read_topic(kafka, env["DUST_TOPIC_PREFIX"] + "-raw")]
        assert all(b["format"] == "urls" and b["source"] == "frontier" and b["site"] == SITE for b in lists)
        assert [u for b in lists for u in b["lines"]] == [o["url"] for o in out]
        assert 'dust_listed_urls_sent_total{source="frontier"} 8.0' in m

        # crawler-side commands read the same topic
        run = lambda *a, stdin="": subprocess.run([sys.executable, "-m", "dustbuster", *a], cwd=ROOT, env=env, input=stdin,
                                                  capture_output=True, text=True, timeout=60)
        r = run("rules", "--site", SITE, "--json")
        assert r.returncode == 0, r.stderr
        assert json.loads(r.stdout)["version"] == 2
        r = run("rules", "--site", SITE)  # for a person: one rule a line with its evidence
        assert r.returncode == 0 and r.stdout.startswith(f"{SITE}  v2  published ") and "3 rules" in r.stdout
        assert "    1. remove sid=*\n" in r.stdout and "status valid" in r.stdout, r.stdout
        r = run("canonize", "--from-topic", "--tsv", stdin="http://www.forum.test/story?id=1&sid=2\nhttp://else.test/a/./b\n")
        assert r.stdout.splitlines() == ["http://www.forum.test/story?id=1&sid=2\thttp://forum.test/story_1",
                                         "http://else.test/a/./b\thttp://else.test/a/b"], r.stderr
        r = run("export", "--from-topic", "--site", SITE, "--to", "nutch")
        assert r.returncode == 0 and r.stdout.count("<regex>") == 3
        r = run("rules", "--site", "nope.test")
        assert r.returncode == 2 and "no rule set" in r.stderr

        # a tombstone removes the site's rules
        send(env, "-rules", [(SITE.encode(), None)])
        wait_for(lambda: http(port, f"/sites/{SITE}/rules")[0] == 404, what="tombstone applied", worker=w)
        assert json.loads(lines.get(timeout=60)) == {"site": SITE, "deleted": True}
        assert w.alive()
    finally:
        if follow is not None:
            follow.kill()
            follow.wait(10)
        w.stop()


def test_seen_set_survives_restart_and_rebuilds_from_changelog(kafka, tmp_path):
    """Seen flags are per frontier partition in RocksDB: a restarted worker still knows them, and a
    worker with no local copy (the partition moved) rebuilds them from the seen changelog."""
    env = stream_env(kafka, window=3600, partitions=1)
    env["DUST_VALIDATE"] = "false"
    urls = [f"http://forum.test/p{i}" for i in range(50)]

    def run_worker(data, n_expected):
        w = Worker(env, data, tmp_path / "w.log").start()
        try:
            return wait_for(lambda: (o := outputs(env)) and len(o) >= n_expected and o, what="answers", worker=w)
        finally:
            w.stop()

    send(env, "-frontier", [(SITE.encode(), json.dumps({"urls": urls}).encode())])
    first = run_worker(tmp_path / "a", 50)
    assert not any(o["seen"] for o in first)
    send(env, "-frontier", [(SITE.encode(), json.dumps({"urls": urls[:10]}).encode())])
    again = run_worker(tmp_path / "a", 60)[50:]
    assert [o["seen"] for o in again] == [True] * 10  # same data dir: local RocksDB
    send(env, "-frontier", [(SITE.encode(), json.dumps({"urls": urls[5:15] + ["http://forum.test/new"]}).encode())])
    moved = run_worker(tmp_path / "b", 71)[60:]  # fresh data dir: rebuilt from the changelog
    assert [o["seen"] for o in moved] == [True] * 10 + [False]
    assert "rebuilt 50 seen signatures" in (tmp_path / "w.log").read_text()
