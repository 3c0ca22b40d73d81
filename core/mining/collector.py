"""The cyclic garbage collector made rare while a URL list is mined (ours, beyond the papers).

The URL list lives through the whole of a mining, and the phases (Figure 1's texts, phase 3's
evidence, the general miners' tallies) make millions of tuples and records, none in a cycle that
matters.  Each collection of the oldest generation walks every live object: on the forum logs
~12 % of ``dustbuster mine``'s time, and ~0.4 s of a streaming window at the 100,000-URL cap
(state/partitions.py), for the same peak memory.  :func:`quiet_collector` freezes what is alive
when it starts (never walked again) and raises the thresholds; reference counting frees the
phases' objects as before.  The settings are restored on exit: ``mine`` may run inside another
program (the tests, a worker).

>>> import gc
>>> before = gc.get_threshold()
>>> with quiet_collector():
...     gc.get_threshold()[0] >= 100_000
True
>>> gc.get_threshold() == before
True
"""

from __future__ import annotations

import contextlib
import gc
from typing import Iterator

#: the youngest generation's threshold while mining: allocations between collections
QUIET_THRESHOLD = 100_000


@contextlib.contextmanager
def quiet_collector() -> Iterator[None]:
    """The collector frozen and made rare for the body (module docstring), restored after it.
    Process-wide: the collector has one setting per process (other threads see it too)."""
    was = gc.get_threshold()
    gc.freeze()
    gc.set_threshold(max(was[0], QUIET_THRESHOLD), 50, 100)
    try:
        yield
    finally:
        gc.set_threshold(*was)
        gc.unfreeze()
