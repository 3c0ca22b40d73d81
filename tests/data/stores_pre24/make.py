"""How tests/data/stores_pre24 was written: a partition store and a seen store in the layout before
issue 24's store contract, by the code of commit 1a235e8 (``.venv/bin/python
tests/data/stores_pre24/make.py tests/data/stores_pre24`` there; the LOG and LOCK files removed).
It calls the old API (``SeenStore.commit(sigs, topic, offset)``), so it does not run on later code."""
import shutil, sys
from pathlib import Path
from dustbuster.core.params import DustParams
from dustbuster.state.partitions import PartitionState, Message
from dustbuster.state.seen import SeenStore, signature
out = Path(sys.argv[1]); shutil.rmtree(out, ignore_errors=True)
st = PartitionState(out / "partitions", 0, DustParams())
recs = [(f"http://a.org/p{k}", 200, 100 + k) for k in range(5)]
st.commit(st.stage_group("raw", [Message(41, "a.org", recs, {"lines": 5})]))
assert st.applied("raw") == 41
st.kv.db.flush(); st.kv.compact(); st.close()
seen = SeenStore(out / "seen" / "p0000")
seen.commit([signature("http://a.org/p1"), signature("http://a.org/p2")], "frontier", 17)
assert seen.applied("frontier") == 17
seen.db.flush(); seen.db.compact_range(None, None); seen.close()
