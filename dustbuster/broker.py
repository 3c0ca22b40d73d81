"""A real single-node Apache Kafka broker (KRaft) on loopback, from Maven Central jars.

Recipe: ../shared/notes/kafka-from-maven.md, run and timed in docs/kafka.md.  The jars come from
``mvn -f deploy/kafka/pom.xml package``; the storage dir is formatted with
``kafka.tools.StorageTool`` and the broker runs as ``java -cp 'libs/*' kafka.Kafka``.  Readiness is
the client port accepting connections (Kafka opens it only once the broker is unfenced).

Used by ``dustbuster broker start|stop|status`` (persistent data dir, pid file) and by
:mod:`dustdev.devkafka` for the tests and benchmarks (a throwaway dir and free ports).
"""

from __future__ import annotations

import base64
import logging
import os
import shutil
import signal
import socket
import subprocess
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path

from dustbuster.core.errors import StreamError

log = logging.getLogger(__name__)

KAFKA_VERSION = "4.1.1"


def broker_home() -> Path:
    """Where the broker's Maven recipe is built: ``deploy/kafka`` of a source checkout (``make``
    builds it there), else ``$DUST_BROKER_HOME``, else ``~/.cache/dustbuster/kafka``, where the
    recipe the package ships (``kafka-broker.pom.xml``, a copy of deploy/kafka/pom.xml in the wheel)
    is copied, so an installed package runs a broker too."""
    checkout = Path(__file__).resolve().parent.parent / "deploy" / "kafka"
    if (checkout / "pom.xml").is_file():
        return checkout
    return Path(os.environ.get("DUST_BROKER_HOME") or Path.home() / ".cache" / "dustbuster" / "kafka")


def libs_dir(home: Path | None = None) -> Path:
    """The folder of the broker's jars under ``home`` (:func:`broker_home`)."""
    return (home or broker_home()) / "target" / f"kafka-{KAFKA_VERSION}-libs"

LOG4J2 = """\
status = warn
appender.err.type = Console
appender.err.name = STDERR
appender.err.target = SYSTEM_ERR
appender.err.layout.type = PatternLayout
appender.err.layout.pattern = %d{ISO8601} %-5p [%c] %m%n
rootLogger.level = warn
rootLogger.appenderRef.err.ref = STDERR
logger.started.name = kafka.server.KafkaRaftServer
logger.started.level = info
"""

PROPERTIES = """\
process.roles=broker,controller
node.id=1
controller.quorum.voters=1@127.0.0.1:{cport}
listeners=PLAINTEXT://127.0.0.1:{bport},CONTROLLER://127.0.0.1:{cport}
advertised.listeners=PLAINTEXT://127.0.0.1:{bport}
inter.broker.listener.name=PLAINTEXT
controller.listener.names=CONTROLLER
listener.security.protocol.map=PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT
log.dirs={data}
offsets.topic.replication.factor=1
transaction.state.log.replication.factor=1
transaction.state.log.min.isr=1
share.coordinator.state.topic.replication.factor=1
share.coordinator.state.topic.min.isr=1
group.initial.rebalance.delay.ms={rebalance_delay_ms}
offsets.topic.num.partitions={offsets_partitions}
transaction.state.log.num.partitions=1
num.partitions=1
auto.create.topics.enable=true
log.cleaner.dedupe.buffer.size=8388608
num.network.threads={threads}
num.io.threads={threads}
background.threads=2
num.recovery.threads.per.data.dir=1
"""

JVM = ["-Xms128m", "-Xmx512m", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1", "-Djava.awt.headless=true",
       "-XX:+ExitOnOutOfMemoryError"]


def jvm_options() -> list[str]:
    """The broker's JVM options: small and quick to start by default (a laptop, CI); a benchmark on a
    many-core machine replaces them with ``DUST_BROKER_JVM`` (space-separated, e.g. ``-Xmx4g``)."""
    extra = os.environ.get("DUST_BROKER_JVM", "").split()
    return extra or list(JVM)


def broker_threads() -> int:
    """Network and I/O threads of the broker: 2, or ``DUST_BROKER_THREADS`` (1..64) for benchmarks."""
    raw = os.environ.get("DUST_BROKER_THREADS", "2")
    try:
        n = int(raw)
    except ValueError:
        raise StreamError(f"DUST_BROKER_THREADS must be a whole number, not {raw!r}") from None
    if not 1 <= n <= 64:
        raise StreamError(f"DUST_BROKER_THREADS must be between 1 and 64, not {n}")
    return n


def rebalance_delay_ms() -> int:
    """How long a new consumer group waits for more members before its first assignment: 0 (tests
    and the demo want the group at once), or ``DUST_BROKER_REBALANCE_DELAY_MS`` (0..60000) for a
    benchmark whose workers start together on a filled topic (one balanced first assignment)."""
    raw = os.environ.get("DUST_BROKER_REBALANCE_DELAY_MS", "0")
    try:
        n = int(raw)
    except ValueError:
        raise StreamError(f"DUST_BROKER_REBALANCE_DELAY_MS must be a whole number, not {raw!r}") from None
    if not 0 <= n <= 60_000:
        raise StreamError(f"DUST_BROKER_REBALANCE_DELAY_MS must be between 0 and 60000, not {n}")
    return n


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def port_open(port: int, host: str = "127.0.0.1") -> bool:
    try:
        with socket.create_connection((host, port), 0.5):
            return True
    except OSError:
        return False


def ensure_libs(quiet: bool = True) -> Path:
    """Fetch the broker's jars with Maven once (~/.m2 caches them), into :func:`libs_dir`."""
    home = broker_home()
    libs = libs_dir(home)
    if libs.is_dir() and any(libs.glob("kafka_2.13-*.jar")):
        return libs
    if not shutil.which("mvn") or not shutil.which("java"):
        raise StreamError("the local Kafka broker needs Java 17 and Maven (mvn) on PATH "
                          "(or point DUST_KAFKA_BOOTSTRAP at a running broker)")
    pom = home / "pom.xml"
    if not pom.is_file():  # an installed package: its copy of the recipe, built in the cache
        home.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(Path(__file__).resolve().parent / "kafka-broker.pom.xml", pom)
    t0 = time.perf_counter()
    cmd = ["mvn", "-B", "-q", "-f", str(pom), "package", f"-Dkafka.version={KAFKA_VERSION}"]
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0:
        raise StreamError(f"mvn could not fetch the Kafka jars:\n{r.stdout[-2000:]}{r.stderr[-2000:]}")
    log.info("fetched Kafka %s jars into %s in %.1fs", KAFKA_VERSION, libs, time.perf_counter() - t0)
    return libs


def cluster_id() -> str:
    """A KRaft cluster id (22 characters of URL-safe base64) that does not start with ``-``: the
    storage tool would read such an id as an option and fail (one start in 64)."""
    while True:
        cid = base64.urlsafe_b64encode(uuid.uuid4().bytes).rstrip(b"=").decode()
        if not cid.startswith("-"):
            return cid


@dataclass
class LocalKafka:
    """One broker+controller node.  ``start()`` formats (once) and launches; ``stop()`` ends it."""

    data_dir: Path
    bport: int = 0
    cport: int = 0
    offsets_partitions: int = 1
    proc: subprocess.Popen | None = field(default=None, repr=False)
    timings: dict = field(default_factory=dict)

    @property
    def bootstrap(self) -> str:
        return f"127.0.0.1:{self.bport}"

    @property
    def log_file(self) -> Path:
        return self.data_dir / "broker.log"

    def _write_config(self) -> tuple[Path, Path]:
        self.data_dir.mkdir(parents=True, exist_ok=True)
        props = self.data_dir / "server.properties"
        logcfg = self.data_dir / "log4j2.properties"
        props.write_text(PROPERTIES.format(bport=self.bport, cport=self.cport, data=self.data_dir / "kraft",
                                           offsets_partitions=self.offsets_partitions,
                                           threads=broker_threads(), rebalance_delay_ms=rebalance_delay_ms()))
        logcfg.write_text(LOG4J2)
        return props, logcfg

    def start(self, timeout: float = 120.0) -> "LocalKafka":
        libs = ensure_libs()
        self.bport = self.bport or free_port()
        self.cport = self.cport or free_port()
        props, logcfg = self._write_config()
        java = ["java", *jvm_options(), f"-Dlog4j2.configurationFile={logcfg}", "-cp", f"{libs}/*"]
        t0 = time.perf_counter()
        if not (self.data_dir / "kraft" / "meta.properties").exists():
            cluster = cluster_id()
            r = subprocess.run([*java, "kafka.tools.StorageTool", "format", "-t", cluster, "-c", str(props), "-g"],
                               capture_output=True, text=True, timeout=120)
            if r.returncode != 0:
                raise StreamError(f"formatting the Kafka storage failed:\n{r.stdout[-1500:]}{r.stderr[-1500:]}")
        self.timings["format_s"] = time.perf_counter() - t0
        t1 = time.perf_counter()
        out = open(self.log_file, "ab")
        self.proc = subprocess.Popen([*java, "kafka.Kafka", str(props)], stdout=out, stderr=subprocess.STDOUT,
                                     start_new_session=True)
        out.close()
        (self.data_dir / "broker.pid").write_text(f"{self.proc.pid} {self.bport} {self.cport}\n")
        deadline = time.monotonic() + timeout
        while not port_open(self.bport):
            if self.proc.poll() is not None:
                raise StreamError(f"the Kafka broker exited ({self.proc.returncode}):\n{self.tail()}")
            if time.monotonic() > deadline:
                self.stop()
                raise StreamError(f"the Kafka broker did not open port {self.bport} in {timeout:.0f}s:\n{self.tail()}")
            time.sleep(0.1)
        self.timings["start_s"] = time.perf_counter() - t1
        log.info("Kafka up on %s (format %.1fs, start %.1fs)", self.bootstrap, self.timings["format_s"], self.timings["start_s"])
        return self

    def tail(self, n: int = 3000) -> str:
        try:
            return self.log_file.read_text(errors="replace")[-n:]
        except OSError:
            return ""

    def stop(self, timeout: float = 20.0) -> None:
        if self.proc is None or self.proc.poll() is not None:
            return
        self.proc.terminate()  # Kafka's shutdown hook: a clean shutdown
        try:
            self.proc.wait(timeout)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait(10)
        pid = self.data_dir / "broker.pid"
        if pid.exists():
            pid.unlink()


def read_pidfile(data_dir: Path) -> tuple[int, int, int] | None:
    try:
        pid, bport, cport = (int(x) for x in (data_dir / "broker.pid").read_text().split())
    except (OSError, ValueError):
        return None
    try:
        os.kill(pid, 0)
    except OSError:
        return None
    return pid, bport, cport


def stop_pid(pid: int, timeout: float = 20.0) -> None:
    os.kill(pid, signal.SIGTERM)
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            os.kill(pid, 0)
        except OSError:
            return
        time.sleep(0.2)
    os.kill(pid, signal.SIGKILL)
