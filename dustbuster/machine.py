"""What this process may use of its machine: the CPUs it may run on (its affinity, fewer under a
cgroup v2 quota: a container's ``--cpus``) and the memory it holds now (its resident set).  Read
by the commands that choose how many processes to run (``mine --jobs auto``); Linux files, with
portable fallbacks.  The worker reads the same quota for its parser processes in
stream/settings.py (``auto_parse_processes``): the stream layer may import only the core, so it
keeps its own few lines (tests/test_layout.py)."""

from __future__ import annotations

import os
from pathlib import Path


def usable_cpus() -> float:
    """The CPUs this process may run on: its affinity set, or a cgroup's quota where that is fewer."""
    try:
        cpus: float = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        cpus = os.cpu_count() or 1
    quota = cgroup_cpu_quota()
    return min(cpus, quota) if quota is not None else cpus


def cgroup_cpu_quota(path: Path = Path("/sys/fs/cgroup/cpu.max")) -> float | None:
    """The CPUs a cgroup v2 quota allows this process (``cpu.max``: "quota period", "max" for none),
    None without one."""
    try:
        quota, period = path.read_text().split()[:2]
        return None if quota == "max" else int(quota) / int(period)
    except (OSError, ValueError):
        return None


def resident_bytes() -> int | None:
    """This process's resident set now (``/proc/self/statm``), None where it cannot be read."""
    try:
        pages = int(Path("/proc/self/statm").read_text().split()[1])
    except (OSError, ValueError, IndexError):
        return None
    return pages * os.sysconf("SC_PAGE_SIZE")
