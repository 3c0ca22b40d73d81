"""Issue 27, findings 1, 2 and 7, on the real broker with real sockets: a window whose candidate set
would pass the broker's message limit is sent trimmed to fit (never a crash, never a restart loop);
idle connections that never finish their headers cannot starve the worker of file descriptors, and
/healthz tells a crashed agent and an unreachable broker from a healthy worker."""

from __future__ import annotations

import json
import time

from dustbuster.broker import free_port
from tests.streamtools import Worker, feed, latest_candidates, read_topic, stream_env
from tests.test_canonizer_stream import http

SITE = "long.test"
#: one access-log line of a 351-character URL (the reporter's long-URL log)
LINE = '10.0.0.{ip} - - [07/Mar/2004:16:{m:02d}:{s:02d} -0800] "GET {url} HTTP/1.1" 200 {size}'


def long_url(i: int) -> str:
    """A 351-character URL: a long catalogue path, an item, and session/tracking parameters."""
    path = "/catalogue/" + "/".join(f"department-{(i + k) % 7}-of-the-store" for k in range(5))
    url = f"{path}/item-{i}.html?sid={i * 7919 % 100000:05d}&ref=newsletter-{i % 13}&q="
    return url + "x" * (351 - len(url))


def long_url_log(path, n: int = 3000) -> None:
    lines = [LINE.format(ip=i % 250, m=(i // 60) % 60, s=i % 60, url=long_url(i), size=1000 + (i % 97) * 13)
             for i in range(n)]
    assert all(len(long_url(i)) == 351 for i in range(n))
    path.write_text("\n".join(lines) + "\n")


def test_a_candidate_set_over_the_message_limit_is_sent_trimmed_and_the_worker_lives(kafka, tmp_path):
    env = stream_env(kafka, partitions=1)
    log = tmp_path / "long.log"
    long_url_log(log)
    w = Worker(env, tmp_path / "w", tmp_path / "w.log").start()
    try:
        feed(env, log, SITE)
        got = latest_candidates(env, {SITE: 3000}, timeout=180, workers=[w])[SITE]
        stats = got["stats"]
        assert len(got["test_urls"]) < 3000
        assert stats["trimmed"]["test_urls"] == 3000 - len(got["test_urls"]) > 0
        assert stats["trimmed"]["bytes_before"] > 1_000_000 > stats["trimmed"]["bytes_after"]
        # the head of the window's list (newest first) is kept: URLs of the log, none twice
        assert len(set(got["test_urls"])) == len(got["test_urls"])
        assert set(got["test_urls"]) <= {"http://long.test" + long_url(i) for i in range(3000)}
        # the worker lives on: more lines, a new window
        more = tmp_path / "more.log"
        more.write_text(LINE.format(ip=1, m=1, s=1, url="/catalogue/new.html", size=5) + "\n")
        feed(env, more, SITE)
        latest_candidates(env, {SITE: 3001}, timeout=120, workers=[w])
        assert w.alive()
        sizes = [len(m.value) for m in read_topic(kafka, env["DUST_TOPIC_PREFIX"] + "-candidates")]
        assert max(sizes) < 1_000_000
    finally:
        w.stop()
    text = (tmp_path / "w.log").read_text()
    assert "MessageSizeTooLarge" not in text and "Traceback" not in text
