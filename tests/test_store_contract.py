"""The one store contract of state/store.py (issue 24): the partition states of the miner and the
seen sets of the canonizer both say which input offset they applied, commit data and offset in one
RocksDB write, and are rebuilt from a changelog image.  Stores written before the contract (the
seen sets kept their offset under ``M:applied:``) stay readable: tests/data/stores_pre24 was
written by the code before it (tests/data/stores_pre24/make.py)."""

from __future__ import annotations

import shutil
from pathlib import Path

from dustbuster.core.params import DustParams
from dustbuster.state.partitions import PartitionState
from dustbuster.state.seen import SeenStore, signature

PRE24 = Path(__file__).parent / "data" / "stores_pre24"


def _copy_pre24(tmp_path: Path) -> Path:
    dst = tmp_path / "stores"
    shutil.copytree(PRE24, dst)
    return dst


def test_pre24_partition_store_is_read(tmp_path):
    root = _copy_pre24(tmp_path)
    st = PartitionState(root / "partitions", 0, DustParams())
    assert st.applied("raw") == 41
    assert st.site("a.org").url_count() == 5 and st.counters("a.org")["lines"] == 5
    st.close()


def test_pre24_seen_store_is_read(tmp_path):
    root = _copy_pre24(tmp_path)
    seen = SeenStore(root / "seen" / "p0000")
    assert seen.applied("frontier") == 17
    assert seen.seen_many([signature("http://a.org/p1"), signature("http://a.org/p3")]) == [True, False]
    seen.close()
