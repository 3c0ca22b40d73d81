"""The one store contract of state/store.py (issue 24): the partition states of the miner and the
seen sets of the canonizer both say which input offset they applied, commit data and offset in one
RocksDB write, and are rebuilt from a changelog image.  Stores written before the contract (the
seen sets kept their offset under ``M:applied:``) stay readable: tests/data/stores_pre24 was
written by the code before it (tests/data/stores_pre24/make.py)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from dustbuster.core.params import DustParams
from dustbuster.state.partitions import Message, PartitionState
from dustbuster.state.seen import SeenStore, seen_batch, signature
from dustbuster.state.store import OffsetStore, applied_key, legacy_offset_moves

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


def test_a_pre24_seen_store_is_migrated_once(tmp_path):
    root = _copy_pre24(tmp_path)
    seen = SeenStore(root / "seen" / "p0000")
    assert seen.db.get(b"M:applied:frontier") is None and seen.db.get(applied_key("frontier")) == b"17"
    seen.close()
    again = SeenStore(root / "seen" / "p0000")  # nothing left to move
    assert again.applied("frontier") == 17
    again.close()


def test_legacy_offset_moves():
    moves = legacy_offset_moves([(b"M:applied:f", b"3"), (b"M:applied:g", b"9")])
    assert moves == {b"meta:applied:f": b"3", b"M:applied:f": None, b"meta:applied:g": b"9", b"M:applied:g": None}
    assert legacy_offset_moves([]) == {}


def test_both_stores_keep_the_one_contract(tmp_path):
    part = PartitionState(tmp_path / "parts", 0, DustParams())
    seen = SeenStore(tmp_path / "seen", 0)
    for store in (part, seen):
        assert isinstance(store, OffsetStore) and store.applied("t") == -1
    staged = part.stage_group("raw", [Message(4, "a.org", [("http://a.org/x", 200, 10)], {"lines": 1})])
    part.commit(staged)
    seen.commit(seen_batch("frontier", 4, [signature("http://a.org/x")]))
    assert part.applied("raw") == 4 and part.kv.db.get(applied_key("raw")) == b"4"
    assert seen.applied("frontier") == 4 and seen.seen_many([signature("http://a.org/x")]) == [True]
    assert part.stage_group("raw", [Message(4, "a.org", [("http://a.org/y", 200, 10)], {"lines": 1})]) is None
    part.close()
    seen.close()


def test_both_stores_rebuild_from_an_image_offset_last(tmp_path):
    part = PartitionState(tmp_path / "parts", 0, DustParams())
    seen = SeenStore(tmp_path / "seen", 0)
    seen.commit(seen_batch("frontier", 2, [signature("http://old/")]))
    calls = []
    assert seen.rebuild("frontier", 30, [signature("http://a/"), signature("http://b/")],
                        progress=lambda n, total: calls.append((n, total))) == 2
    assert seen.applied("frontier") == 30 and calls[-1] == (2, 2)
    assert seen.seen_many([signature("http://a/"), signature("http://old/")]) == [True, False]
    sites = {"a.org": {"http://a.org/p": {"h": 1, "i": 0}}}
    assert part.rebuild("raw", 12, sites, {"a.org": {"lines": 3}}) == 1
    assert part.applied("raw") == 12 and part.counters("a.org")["lines"] == 3
    assert part.dirty_sites() == [("a.org", b"rebuild:12")]
    part.close()
    seen.close()


def test_a_rebuild_cut_short_leaves_no_offset(tmp_path):
    seen = SeenStore(tmp_path / "seen", 0)
    seen.commit(seen_batch("frontier", 5, []))

    def broken():
        yield signature("http://a/")
        raise OSError("disk full")

    with pytest.raises(OSError):
        seen.rebuild("frontier", 40, broken())
    assert seen.applied("frontier") == -1  # the next message rebuilds it again
    seen.close()


def test_every_changelog_write_is_retried_in_one_place(monkeypatch, caplog):
    """The URL changelog (ingest) and the seen changelog (canonizer) writes go through
    stream/changelog.py's write_until_acked."""
    import asyncio

    from dustbuster.stream import changelog

    calls = []

    async def flaky():
        calls.append(1)
        if len(calls) < 3:
            raise ConnectionError("broker gone")

    async def no_sleep(_s):
        return None

    monkeypatch.setattr(changelog.asyncio, "sleep", no_sleep)
    asyncio.run(changelog.write_until_acked(flaky, "seen changelog write for partition 1 (offset 9)"))
    assert len(calls) == 3 and "seen changelog write for partition 1 (offset 9) failed" in caplog.text
    for agent in ("ingest.py", "canonizer.py"):
        assert "write_until_acked(" in (Path(__file__).resolve().parents[1] / "agents" / agent).read_text()


class _FailingDB:
    """A RocksDB whose next ``write`` fails as a full disk makes it fail; reads go through."""

    def __init__(self, db, failures: int = 1) -> None:
        self._db, self.failures = db, failures

    def write(self, wb) -> None:
        if self.failures:
            self.failures -= 1
            raise Exception("IO error: No space left on device: While appending to file")  # rocksdict's kind
        self._db.write(wb)

    def __getattr__(self, name):
        return getattr(self._db, name)


def _group(first: int, n: int) -> list[Message]:
    return [Message(first + i, "a.org", [(f"http://a.org/p{first + i}", 200, 100 + i)], {"lines": 1}) for i in range(n)]


def test_a_commit_that_fails_leaves_the_group_to_be_applied_again(tmp_path):
    """A full disk: RocksDB refuses the group's write.  Nothing of it may count as applied — not the
    offset, not the counters, not the URLs — so the retry stages the same group again and applies
    it; the state then equals a run where the write never failed."""
    from dustbuster.core.errors import StateError

    st = PartitionState(tmp_path / "a", 0, DustParams())
    st.commit(st.stage_group("raw", _group(0, 3)))
    assert st.applied("raw") == 2
    st.kv.db = _FailingDB(st.kv.db)
    staged = st.stage_group("raw", _group(3, 4))
    with pytest.raises(StateError, match="No space left"):
        st.commit(staged)
    assert st.applied("raw") == 2  # the old offset: the group is still to be applied
    assert st.counters("a.org")["lines"] == 3
    again = st.stage_group("raw", _group(3, 4))
    assert again is not None and again.offset == 6
    st.commit(again)
    assert st.applied("raw") == 6 and st.counters("a.org")["lines"] == 7

    ref = PartitionState(tmp_path / "b", 0, DustParams())
    ref.commit(ref.stage_group("raw", _group(0, 3)))
    ref.commit(ref.stage_group("raw", _group(3, 4)))
    assert list(st.site("a.org").urllist().infos.items()) == list(ref.site("a.org").urllist().infos.items())
    assert st.site("a.org").url_count() == ref.site("a.org").url_count() == 7
    st.kv.db = st.kv.db._db
    st.close()
    ref.close()
    reopened = PartitionState(tmp_path / "a", 0, DustParams())  # a restart keeps it
    assert reopened.applied("raw") == 6 and reopened.site("a.org").url_count() == 7
    reopened.close()


def test_a_raw_message_key_must_name_its_site():
    from dustbuster.agents.ingest import check_site_key
    from dustbuster.core.errors import ParseError

    check_site_key(b"a.test", "a.test")
    check_site_key(b"Forum.Test", "forum.test")  # the site is read lower-cased: the same site
    check_site_key(None, "a.test")  # no key: whichever partition, the whole message
    with pytest.raises(ParseError, match="site_key_mismatch"):
        check_site_key(b"b.test", "a.test")
