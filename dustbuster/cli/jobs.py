"""How many processes ``dustbuster mine`` runs: ``--jobs`` and ``--max-memory`` (docs/performance.md,
"Big logs").

``--jobs N``: N processes read a large plain log's ranges (logs/parread.py) and, with N >= 2,
Figure 1's supports are counted in a second process while this one runs phase 3 and the other
miners (core/mining/parallel.py).  ``--jobs auto``, the default, reads with every CPU this
process may use (dustbuster/machine.py) and mines in two processes where all of these hold:

* it may use two CPUs or more;
* the list holds at least :data:`AUTO_MIN_URLS` URLs (:data:`dustbuster.core.mining.processes.MIN_URLS`:
  with fewer the overlap saves a fraction of a second for a second process and its memory);
* the peak of both processes together, estimated, fits ``--max-memory``: what this process holds
  once the log is read, plus Figure 1's arrays (:data:`FIGURE1_BYTES_PER_CHAR` per character of
  the wrapped URLs), plus phase 3's URL index (:data:`INDEX_BYTES_PER_URL` per URL).  One process
  holds the first two at its peak, never the three at once; so a list too big for two processes
  within the budget is mined by one (the bound of docs/performance.md kept by default).

The rules are the same with any number of processes (tests/test_mine_parallel.py); only the time
and the memory differ.  Ours: the papers mine on one machine without saying how.
"""

from __future__ import annotations

import argparse
from dataclasses import dataclass

from dustbuster.core.mining.processes import MIN_URLS
from dustbuster.machine import resident_bytes, usable_cpus

AUTO = "auto"
#: the fewest URLs ``--jobs auto`` mines in two processes (a streaming window's too)
AUTO_MIN_URLS = MIN_URLS
#: Figure 1's peak above the URL list, per character of the wrapped URLs (``^url$``): 56 measured
#: on the 1M-line forum log (docs/performance.md), with a margin
FIGURE1_BYTES_PER_CHAR = 60
#: phase 3's URL index and the miners' derivations, per URL, with what the second process copies
#: of the list as it reads it.  Both processes' peaks summed (PSS, bench/bench_bigmine.py) were
#: 1,393-1,476 MB on the 1M-line forum log (338,007 URLs, 15.4M characters, ~240 MB held after the
#: read); these constants estimate ~1,480 MB
INDEX_BYTES_PER_URL = 1_400
#: ``--max-memory``'s default, in MB: the bound of docs/performance.md
DEFAULT_MAX_MEMORY_MB = 1536
_MB = 1 << 20


def jobs_arg(text: str) -> int | str:
    """``--jobs``: "auto" or a number of processes >= 1."""
    if text == AUTO:
        return AUTO
    try:
        n = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected 'auto' or a number of processes, not {text!r}") from None
    if n < 1:
        raise argparse.ArgumentTypeError("--jobs must be >= 1 (or 'auto')")
    return n


def read_processes(jobs: int | str) -> int:
    """Processes reading the log's ranges: N, or for "auto" every CPU this process may use."""
    return max(1, int(usable_cpus())) if jobs == AUTO else int(jobs)


@dataclass(frozen=True)
class MinePlan:
    """Processes mining the list, and why (said by ``mine -v`` and in the summary)."""

    processes: int
    why: str


def mine_processes(jobs: int | str, urls: int, chars: int, max_memory_mb: int = DEFAULT_MAX_MEMORY_MB,
                   held: int | None = None, cpus: float | None = None) -> MinePlan:
    """The plan for a list of ``urls`` URLs of ``chars`` characters in all (module docstring);
    ``held``: this process's resident bytes now (read when None), ``cpus``: the usable CPUs."""
    if jobs != AUTO:
        n = int(jobs)
        return MinePlan(2, f"two processes (--jobs {n})") if n >= 2 else MinePlan(1, "one process (--jobs 1)")
    cpus = usable_cpus() if cpus is None else cpus
    if cpus < 2:
        return MinePlan(1, f"one process ({cpus:g} usable CPU)")
    if urls < AUTO_MIN_URLS:
        return MinePlan(1, f"one process ({urls:,} URLs; two from {AUTO_MIN_URLS:,})")
    held = resident_bytes() if held is None else held
    figure1 = FIGURE1_BYTES_PER_CHAR * (chars + 2 * urls)
    need = (held or 0) + figure1 + INDEX_BYTES_PER_URL * urls
    if need > max_memory_mb * _MB:
        return MinePlan(1, f"one process (two would need ~{need // _MB:,} MB together, over --max-memory "
                           f"{max_memory_mb} MB)")
    return MinePlan(2, f"two processes (~{need // _MB:,} MB together, within --max-memory {max_memory_mb} MB)")
