"""Finding a real Kafka broker for the tests, in the order the project promises:

1. ``DUST_KAFKA_BOOTSTRAP`` if set;
2. testcontainers' Kafka module when a Docker engine answers;
3. the project's own local KRaft broker (dustbuster.broker, jars from deploy/kafka/pom.xml).
"""

from __future__ import annotations

import logging
import os
import shutil
import tempfile
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator

log = logging.getLogger(__name__)


def _docker_answers() -> bool:
    try:
        import docker  # testcontainers' dependency

        client = docker.from_env(timeout=3)
        client.ping()
        return True
    except Exception:  # no engine, no socket, no permission: all mean "not here"
        return False


@contextmanager
def kafka_bootstrap() -> Iterator[str]:
    env = os.environ.get("DUST_KAFKA_BOOTSTRAP")
    if env:
        yield env
        return
    if _docker_answers():
        from testcontainers.kafka import KafkaContainer

        with KafkaContainer() as kc:
            yield kc.get_bootstrap_server()
        return
    from dustbuster.broker import LocalKafka

    tmp = Path(tempfile.mkdtemp(prefix="dust-kafka-"))
    broker = LocalKafka(tmp)
    try:
        broker.start()
        log.info("local Kafka for tests on %s (%s)", broker.bootstrap, broker.timings)
        yield broker.bootstrap
    finally:
        broker.stop()
        shutil.rmtree(tmp, ignore_errors=True)
