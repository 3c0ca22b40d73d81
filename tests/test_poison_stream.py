"""Poison records on the real broker: `dustbuster feed` never drops good lines (a line over the message
limit is rejected locally, the rest delivered, messages cut to fit); poison records on the rules
topic crash neither `dustbuster rules` / `canonize --from-topic` nor a worker, and a poison log line
costs nothing but itself."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys

from dustbuster.broker import free_port
from dustbuster.stream.producer import DEFAULT_MAX_MESSAGE_BYTES, feed
from dustbuster.core.errors import MAX_LINE_CHARS
from dustbuster.logs.reader import RejectSink, raw_lines
from tests.conftest import ROOT
from tests.streamtools import Worker, latest_candidates, read_topic, stream_env
from tests.test_canonizer_stream import http, send, wait_for
from tests.test_poison_records import GOOD, POISON_RULES

LINE = '1.2.3.4 - - [07/Mar/2004:16:05:49 -0800] "GET /p{} HTTP/1.1" 200 {}'


def rejected(port: int) -> dict[str, float]:
    """dust_rule_sets_rejected_total by reason, from the worker's /metrics."""
    out: dict[str, float] = {}
    for ln in http(port, "/metrics", token="")[1].decode().splitlines():
        if ln.startswith("dust_rule_sets_rejected_total{"):
            out[ln.split('reason="')[1].split('"')[0]] = float(ln.rsplit(" ", 1)[1])
    return out


def raw_messages(env) -> list[bytes]:
    return [m.value for m in read_topic(env["DUST_KAFKA_BOOTSTRAP"], env["DUST_TOPIC_PREFIX"] + "-raw")]


def test_feed_rejects_a_line_over_the_message_limit_and_delivers_the_rest(kafka, tmp_path):
    env = stream_env(kafka)
    good = [LINE.format(i, i) for i in range(1300)]
    huge = "GET /" + "x" * 60_000  # under the line cap (MAX_LINE_CHARS), over a message of 50,000 bytes
    log = tmp_path / "a.log"
    log.write_text("\n".join(good[:300] + [huge] + good[300:]) + "\n")
    rej_cli = tmp_path / "rejected.tsv"
    r = subprocess.run([sys.executable, "-m", "dustbuster", "feed", str(log), "--site", "a.org", "--rejects", str(rej_cli),
                        "--max-message-bytes", "50000"], cwd=ROOT, env=env, capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    assert "fed 1300 lines" in r.stderr and f"{log}:301: a line of" in r.stderr and "Traceback" not in r.stderr
    assert f"1 lines too big for a message not sent (in {rej_cli})" in r.stderr
    assert rej_cli.read_text().startswith(f"{log}:301\toversized_message\t")
    got = [ln for v in raw_messages(env) for ln in json.loads(v)["lines"]]
    assert got == good  # in order, none lost, the huge one not sent

    # the same with --batch-lines 1 semantics, in-process, with a rejects file
    env2 = stream_env(kafka)
    rej = tmp_path / "rejects.tsv"
    with open(rej, "w", encoding="utf-8") as fh:
        stats = asyncio.run(feed(kafka, env2["DUST_TOPIC_PREFIX"] + "-raw", str(log), "a.org", batch_lines=1,
                                 rejects=RejectSink(fh), lines=raw_lines(log), max_message_bytes=50_000))
    assert (stats.lines, stats.rejected, stats.batches) == (1300, 1, 1300)
    row = rej.read_text().splitlines()
    assert len(row) == 1 and row[0].startswith(f"{log}:301\toversized_message\t")
    assert [ln for v in raw_messages(env2) for ln in json.loads(v)["lines"]] == good


def test_feed_sends_a_line_over_the_line_cap_cut(kafka, tmp_path):
    """A line over the cap is an oversized_line for mine and a worker alike: feed sends it cut to
    one character over the cap (it fits a message), never a megabyte."""
    env = stream_env(kafka)
    good = [LINE.format(i, i) for i in range(10)]
    huge = "GET /" + "x" * (1024 * 1024 + 100)
    log = tmp_path / "a.log"
    log.write_text("\n".join(good[:3] + [huge] + good[3:]) + "\n")
    stats = asyncio.run(feed(kafka, env["DUST_TOPIC_PREFIX"] + "-raw", str(log), "a.org", lines=raw_lines(log)))
    assert (stats.lines, stats.rejected) == (11, 0)
    got = [ln for v in raw_messages(env) for ln in json.loads(v)["lines"]]
    assert got == good[:3] + [huge[:MAX_LINE_CHARS + 1]] + good[3:]


def test_feed_cuts_messages_to_fit(kafka, tmp_path):
    env = stream_env(kafka)
    lines = [f"GET /{i}/" + "é\"\\" * 21000 for i in range(40)]  # ~8.4 MB as JSON (escapes grow it); under the cap
    log = tmp_path / "big.log"
    log.write_text("\n".join(lines) + "\n", encoding="utf-8")
    stats = asyncio.run(feed(kafka, env["DUST_TOPIC_PREFIX"] + "-raw", str(log), "a.org", batch_lines=500,
                             lines=raw_lines(log)))
    values = raw_messages(env)
    assert stats.lines == 40 and stats.rejected == 0 and len(values) == stats.batches > 1
    assert all(len(v) <= DEFAULT_MAX_MESSAGE_BYTES for v in values)
    assert [ln for v in values for ln in json.loads(v)["lines"]] == lines


def test_poison_rule_sets_on_the_topic_crash_no_consumer(kafka, tmp_path):
    env = stream_env(kafka, window=1.0)
    port = free_port()
    env.update({"DUST_API_PORT": str(port), "DUST_VALIDATE": "false"})
    site = "poison.test"
    send(env, "-rules", [(site.encode(), json.dumps(GOOD).encode())])
    send(env, "-rules", [(site.encode(), v) for v in POISON_RULES])  # each now the site's latest value in turn
    send(env, "-rules", [(b"other.test", POISON_RULES[0])])  # the only value of its site
    w = Worker(env, tmp_path / "w", tmp_path / "w.log").start()
    try:
        wait_for(lambda: http(port, "/healthz", token="")[0] == 200, what="API ready", worker=w)
        st, body = http(port, f"/sites/{site}/rules", token="")
        assert st == 200 and json.loads(body)["version"] == 1  # the set before the poison
        m = http(port, "/metrics", token="")[1].decode()
        assert 'dust_rule_sets_rejected_total{reason="non_finite_number"}' in m
        assert 'dust_rule_sets_rejected_total{reason="too_deep"}' in m

        # a poison log line (1e400) among 100 good ones: the good ones are ingested, the bad one rejected
        lines = [json.dumps({"url": f"/p{i}", "status": 200, "size": i + 1}) for i in range(100)]
        lines.insert(50, '{"url":"/x","sketch":[1e400]}')
        log = tmp_path / "p.jsonl"
        log.write_text("\n".join(lines) + "\n")
        r = subprocess.run([sys.executable, "-m", "dustbuster", "feed", str(log), "--site", "j.test", "-q"], cwd=ROOT,
                           env=env, capture_output=True, text=True, timeout=120)
        assert r.returncode == 0, r.stderr
        cands = latest_candidates(env, {"j.test": 101}, workers=[w])
        assert cands["j.test"]["stats"]["records"] == 100, cands["j.test"]["stats"]
        rejects = [json.loads(m.value) for m in read_topic(kafka, env["DUST_TOPIC_PREFIX"] + "-rejects")]
        assert [(x["reason"], x["line"]) for x in rejects] == [("non_finite_number", '{"url":"/x","sketch":[1e400]}')]

        # new poison after start: still alive, still the old set
        before = rejected(port)
        send(env, "-rules", [(site.encode(), POISON_RULES[0]), (site.encode(), POISON_RULES[1])])
        wait_for(lambda: sum(rejected(port).values()) == sum(before.values()) + 2, what="the new poison counted", worker=w)
        after = rejected(port)
        assert after["non_finite_number"] == before["non_finite_number"] + 1
        assert after["bad_record"] == before["bad_record"] + 1
        assert json.loads(http(port, f"/sites/{site}/rules", token="")[1])["version"] == 1
        assert w.alive() and "Crashed" not in w.log.read_text()
    finally:
        w.stop()

    run = lambda *a, stdin="": subprocess.run([sys.executable, "-m", "dustbuster", *a], cwd=ROOT, env=env, input=stdin,
                                              capture_output=True, text=True, timeout=120)
    r = run("rules")
    assert r.returncode == 0 and "Traceback" not in r.stderr, r.stderr
    assert site in r.stdout and "other.test" not in r.stdout and "Infinity" not in r.stdout
    r = run("canonize", "--from-topic", "--tsv", stdin="http://www.poison.test/a\nhttp://other.test/b\n")
    assert r.returncode == 0 and "Traceback" not in r.stderr, r.stderr
    assert r.stdout.splitlines() == ["http://www.poison.test/a\thttp://poison.test/a", "http://other.test/b\thttp://other.test/b"]
