from __future__ import annotations

import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
DATA = ROOT / "tests" / "data"
LOGS = DATA / "logs"
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))


@pytest.fixture
def logs_dir() -> Path:
    return LOGS


@pytest.fixture(scope="session")
def kafka() -> str:
    """Bootstrap address of a real Kafka broker (see dustdev.devkafka)."""
    from dustdev.devkafka import kafka_bootstrap

    with kafka_bootstrap() as bootstrap:
        yield bootstrap
