"""The crawlers' own jars for the tests that load each export into its consumer
(tests/test_consumers.py): Heritrix 3's canonicalization classes with the Spring they run in, and
StormCrawler's URL filters, fetched from Maven Central by ``deploy/crawlers/pom.xml`` (the pattern
of deploy/kafka: ``mvn package`` copies them into the ignored ``deploy/crawlers/target/libs``;
~/.m2 caches them).  Nutch's regex normalizer plugin and the ClearURLs add-on are not published
as packages: tests/java/NutchRegexRun.java and tests/js/clearurls_port.js repeat their code paths.
"""

from __future__ import annotations

import logging
import shutil
import subprocess
import time
from pathlib import Path

log = logging.getLogger(__name__)

ROOT = Path(__file__).resolve().parent.parent
POM = ROOT / "deploy" / "crawlers" / "pom.xml"
LIBS = ROOT / "deploy" / "crawlers" / "target" / "libs"
#: a jar of each consumer: present when the last fetch completed
MARKERS = ("heritrix/heritrix-modules-*.jar", "stormcrawler/storm-crawler-core-*.jar")


class Unavailable(RuntimeError):
    """Java, Maven or the jars cannot be had here (the message says which)."""


def have_libs() -> bool:
    return all(any(LIBS.glob(m)) for m in MARKERS)


def ensure_libs(timeout: float = 600) -> Path:
    """:data:`LIBS`, fetched with Maven first when a jar is missing; raises :class:`Unavailable`."""
    if not shutil.which("java"):
        raise Unavailable("no java on PATH (Debian: default-jdk-headless)")
    if have_libs():
        return LIBS
    if not shutil.which("mvn"):
        raise Unavailable("no mvn on PATH to fetch the crawlers' jars (Debian: maven)")
    t0 = time.perf_counter()
    try:
        r = subprocess.run(["mvn", "-B", "-q", "-f", str(POM), "package"], capture_output=True, text=True,
                           timeout=timeout)
    except subprocess.TimeoutExpired:
        raise Unavailable(f"mvn did not fetch the crawlers' jars within {timeout:.0f} s") from None
    if r.returncode != 0 or not have_libs():
        raise Unavailable(f"mvn could not fetch the crawlers' jars ({POM.relative_to(ROOT)}):\n"
                          f"{r.stdout[-1500:]}{r.stderr[-1500:]}")
    log.info("fetched the crawlers' jars into %s in %.1fs", LIBS, time.perf_counter() - t0)
    return LIBS


def classpath(consumer: str, *extra: Path) -> str:
    """The ``-cp`` of one consumer's jars (``heritrix`` or ``stormcrawler``), ``extra`` first."""
    return ":".join([str(p) for p in extra] + [str(LIBS / consumer / "*")])


__all__ = ["LIBS", "POM", "Unavailable", "classpath", "ensure_libs", "have_libs"]
