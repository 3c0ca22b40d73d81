"""Issue 27, findings 1, 2 and 7, on the real broker with real sockets: a window whose candidate set
would pass the broker's message limit is sent trimmed to fit (never a crash, never a restart loop);
idle connections that never finish their headers cannot starve the worker of file descriptors, and
/healthz tells a crashed agent and an unreachable broker from a healthy worker."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time

from dustbuster.broker import LocalKafka, free_port
from tests.streamtools import Worker, feed, latest_candidates, read_topic, stream_env
from tests.test_canonizer_stream import http, wait_for

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


class LimitedWorker(Worker):
    """A worker whose process may open only ``nofile`` file descriptors (the flood's target)."""

    def __init__(self, *args, nofile: int, **kw) -> None:
        super().__init__(*args, **kw)
        self.nofile = nofile

    def start(self) -> "LimitedWorker":
        # the limit set by the shell, not a preexec_fn (Python code after fork in a threaded process)
        out = open(self.log, "ab")
        cmd = f"ulimit -n {int(self.nofile)} && exec \"$0\" -m dustbuster worker --data-dir \"$1\""
        self.proc = subprocess.Popen(["sh", "-c", cmd, sys.executable, str(self.data_dir)], cwd=self.cwd, env=self.env,
                                     stdout=out, stderr=subprocess.STDOUT, start_new_session=True)
        out.close()
        return self


def metric(port: int, name: str) -> float:
    for ln in http(port, "/metrics", token="")[1].decode().splitlines():
        if ln.startswith(name + " "):
            return float(ln.rsplit(" ", 1)[1])
    return -1.0


def open_idle(port: int, n: int) -> list[socket.socket]:
    """``n`` connections to the API that send half a request line and never finish their headers."""
    out = []
    for _ in range(n):
        try:
            s = socket.create_connection(("127.0.0.1", port), timeout=2)
            s.sendall(b"GET /healthz HTTP/1.1\r\nHost: x\r\nX-Slow: ")
            out.append(s)
        except OSError:
            break
    return out


def closed_by_peer(s: socket.socket) -> bool:
    """The worker closed it (after a 503 for a connection over the cap, or with nothing said)."""
    s.settimeout(0.01)
    try:
        while s.recv(4096):
            pass
        return True
    except (socket.timeout, BlockingIOError):
        return False
    except OSError:
        return True


def test_idle_connections_neither_starve_ingestion_nor_keep_the_worker_from_stopping(kafka, tmp_path):
    env = stream_env(kafka, partitions=1)
    port = free_port()
    env.update({"DUST_API_PORT": str(port), "DUST_VALIDATE": "false", "DUST_API_IDLE_TIMEOUT_S": "5"})
    log = tmp_path / "a.log"
    log.write_text("".join(LINE.format(ip=1, m=0, s=i % 60, url=f"/p{i}", size=100 + i) + "\n" for i in range(200)))
    w = LimitedWorker(env, tmp_path / "w", tmp_path / "w.log", nofile=400).start()
    socks: list[socket.socket] = []
    try:
        wait_for(lambda: http(port, "/healthz", token="")[0] == 200, what="API ready", worker=w)
        socks = open_idle(port, 600)
        feed(env, log, SITE)
        wait_for(lambda: metric(port, "dust_lines_in_total") == 200, what="the lines ingested", worker=w)
        # the idle connections are closed by the worker after DUST_API_IDLE_TIMEOUT_S
        wait_for(lambda: all(closed_by_peer(s) for s in socks), timeout=60, what="idle connections closed")
        assert http(port, "/healthz", token="")[0] == 200
        for s in socks:
            s.close()
        socks = []
        more = tmp_path / "b.log"
        more.write_text("".join(LINE.format(ip=2, m=1, s=i % 60, url=f"/q{i}", size=7) + "\n" for i in range(50)))
        feed(env, more, SITE)
        wait_for(lambda: metric(port, "dust_lines_in_total") == 250, what="more lines ingested", worker=w)
        socks = open_idle(port, 600)  # idle connections at the moment of SIGTERM
        t0 = time.monotonic()
        os.killpg(w.proc.pid, signal.SIGTERM)
        w.proc.wait(60)
        assert time.monotonic() - t0 < 30
    finally:
        for s in socks:
            s.close()
        w.stop()
    text = (tmp_path / "w.log").read_text()
    assert "Too many open files" not in text


def healthz(port: int) -> tuple[int | None, dict]:
    status, body = http(port, "/healthz", token="")
    try:
        return status, json.loads(body)
    except ValueError:
        return status, {}


def test_healthz_says_when_the_broker_is_away_and_the_outage_does_not_flood_the_log(tmp_path):
    broker = LocalKafka(tmp_path / "kafka").start()
    env = stream_env(broker.bootstrap, partitions=1)
    port = free_port()
    env.update({"DUST_API_PORT": str(port), "DUST_VALIDATE": "false", "DUST_BROKER_GRACE_S": "5"})
    w = Worker(env, tmp_path / "w", tmp_path / "w.log").start()
    try:
        wait_for(lambda: healthz(port)[0] == 200, what="healthy", worker=w)
        before = len((tmp_path / "w.log").read_text().splitlines())
        broker.stop()
        t0 = time.monotonic()
        got = wait_for(lambda: (h := healthz(port))[0] == 503 and h, timeout=60, what="503 in the outage", worker=w)
        assert any("Kafka broker unreachable" in p for p in got[1]["problems"]), got
        assert time.monotonic() - t0 < 30
        time.sleep(max(0.0, 30 - (time.monotonic() - t0)))  # a 30 s outage, as the reporter's
        lines = (tmp_path / "w.log").read_text().splitlines()[before:]
        errors = [ln for ln in lines if "[ERROR]" in ln or "[WARNING]" in ln]
        assert len(errors) < 100, "\n".join(errors[:50])
        broker.start()
        wait_for(lambda: healthz(port)[0] == 200, timeout=120, what="healthy again", worker=w)
    finally:
        w.stop()
        broker.stop()
