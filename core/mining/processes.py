"""When a URL list is mined in two processes (core/mining/parallel.py): the fewest URLs worth it,
which ``dustbuster mine --jobs auto`` (dustbuster/cli/jobs.py, with its memory estimate) and a
streaming window (state/partitions.py, :func:`two_processes`) share.  Light: importing it loads
no numpy (the CLI's start stays quick).  Ours: the papers mine on one machine without saying how.

>>> two_processes(allowed=2, urls=MIN_URLS)
True
>>> two_processes(allowed=2, urls=MIN_URLS - 1), two_processes(allowed=1, urls=10**6)
(False, False)
"""

from __future__ import annotations

import multiprocessing as mp

#: the fewest URLs mined in two processes where two are allowed: with fewer the overlap saves a
#: fraction of a second (1.37 s → 1.0 s for 8,925 URLs in bench_bigmine's small run) for a second
#: process and its memory.  A choice of ours, not a measured break-even.
MIN_URLS = 20_000


def can_fork() -> bool:
    """Whether this platform starts processes by ``fork`` (the second process reads the parent's
    URL list without a copy being pickled to it)."""
    return "fork" in mp.get_all_start_methods()


def two_processes(allowed: int, urls: int) -> bool:
    """Whether a list of ``urls`` URLs is mined in two processes when ``allowed`` may run."""
    return allowed >= 2 and urls >= MIN_URLS and can_fork()
