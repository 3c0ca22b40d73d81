"""``dustbuster broker``: start, stop or ask about the local single-node Kafka broker
(:mod:`dustbuster.broker`)."""

from __future__ import annotations

import argparse
from pathlib import Path

from dustbuster.core.errors import DustError


def add_parser(sub, common) -> argparse.ArgumentParser:
    b = sub.add_parser("broker", parents=[common], help="start/stop the local single-node Kafka (KRaft) broker",
                       description="A real Apache Kafka broker on 127.0.0.1, from Maven Central jars "
                       "(deploy/kafka/pom.xml; needs Java 17 and mvn).  'start' is idempotent and "
                       "returns once the broker serves clients; data persist in --data-dir.")
    b.add_argument("action", choices=("start", "stop", "status"), help="start (idempotent), stop, or say whether it runs")
    b.add_argument("--data-dir", default="var/kafka", help="persistent data dir (default %(default)s)")
    b.add_argument("--port", type=int, default=9092, help="client port (default %(default)s)")
    b.add_argument("--controller-port", type=int, default=9093, help="controller port (default %(default)s)")
    return b


def run(a: argparse.Namespace) -> int:
    from dustbuster.broker import LocalKafka, port_open, read_pidfile, stop_pid

    data = Path(a.data_dir).resolve()
    running = read_pidfile(data)
    if a.action == "status":
        if running and port_open(running[1]):
            print(f"running: pid {running[0]}, bootstrap 127.0.0.1:{running[1]}")
            return 0
        print("not running")
        return 3
    if a.action == "stop":
        if not running:
            print("not running")
            return 0
        stop_pid(running[0])
        (data / "broker.pid").unlink(missing_ok=True)
        print(f"stopped pid {running[0]}")
        return 0
    if running and port_open(running[1]):
        print(f"already running: pid {running[0]}, bootstrap 127.0.0.1:{running[1]}")
        return 0
    if port_open(a.port):
        raise DustError(f"port {a.port} is taken by another process: choose --port")
    k = LocalKafka(data, bport=a.port, cport=a.controller_port, offsets_partitions=3).start()
    assert k.proc is not None  # start() made it
    print(f"started: pid {k.proc.pid}, bootstrap {k.bootstrap} (format {k.timings['format_s']:.1f}s, "
          f"start {k.timings['start_s']:.1f}s); log {k.log_file}")
    return 0
