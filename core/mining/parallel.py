"""``mine`` on two cores: phases 1-2 (Figure 1's supports, the ranking, Figure 2's elimination;
WWW 2007 §5.1-5.2) in a forked process while this one runs phase 3 (thesis §5.3) and the miners
beyond the paper (docs/rules.md) on the same URL list; the same :class:`MineResult` as
:func:`dustbuster.core.mining.mine.mine`, rule for rule and in the same order (tests/test_mine_parallel.py).

The child is forked from whatever thread calls (a worker's state thread, beside its event loop,
Kafka's and RocksDB's threads), so it touches nothing of the parent but the URL list and its
pipe: it drops the parent's signal handlers and wakeup socket and its logging at once
(:func:`_forked_quiet`), and it is stopped by SIGKILL when the parent's half fails first.

The two halves read only the URL list, and only the general miners' pattern rules read the
likely pairs: phase 3 and the URL-side miners run while the other process counts, and wait for
its pairs where the first of them reads them.  The child is forked (it reads the parent's URL list,
nothing is pickled to it) and sends back the ranked pairs, a few thousand at most.  Memory: the
child's Figure 1 arrays beside this process's URL index (more at once than one process, which
frees the one before building the other).  Ours, beyond the papers.
"""

from __future__ import annotations

import logging
import multiprocessing as mp
import signal
import time
import traceback
from typing import Any, Callable

from dustbuster.core.errors import DustError, MiningProcessLost
from dustbuster.core.mining.detect import Progress, count_supports
from dustbuster.core.mining.mine import STAGES, MineResult, mine, mine_general, rank_pairs
from dustbuster.core.mining.paramrules import detect_param_rules
from dustbuster.core.mining.processes import can_fork
from dustbuster.core.params import DustParams
from dustbuster.core.urls.urlindex import URLIndex
from dustbuster.core.urls.urllist import URLList


def mine_two(urllist: URLList, params: DustParams | None = None, stage: str = "eliminate",
             progress: Progress | None = None, index: URLIndex | None = None) -> MineResult:
    """:func:`~dustbuster.core.mining.mine.mine`, its two halves in two processes (one where
    ``fork`` is not available).  ``index``: the list's URLs already parsed, as for ``mine``."""
    params = params or DustParams()
    if stage not in STAGES:
        raise ValueError(f"stage must be one of {STAGES}")
    if not can_fork():
        return mine(urllist, params, stage, progress, index)
    ctx = mp.get_context("fork")
    recv, send = ctx.Pipe(duplex=False)
    child = ctx.Process(target=_pairs_child, args=(send, urllist, params, stage), daemon=True)
    child.start()
    send.close()
    got: dict[str, Any] = {}

    def pairs() -> tuple:
        if "pairs" not in got:
            try:
                status, payload = recv.recv()
            except EOFError:
                child.join()
                raise MiningProcessLost(f"the process counting Figure 1's supports ended without a result "
                                        f"(exit code {child.exitcode}; out of memory?)") from None
            child.join()
            if status == "memory":
                raise MiningProcessLost(f"the process counting Figure 1's supports ran out of memory:\n{payload}")
            if status != "ok":
                raise DustError(f"the process counting Figure 1's supports failed:\n{payload}")
            got["pairs"] = payload
        return got["pairs"]

    try:
        t0 = time.perf_counter()
        index = URLIndex.of(urllist, params, index)  # as mine_table: every URL parsed once
        pkept, pcands = detect_param_rules(urllist, params, index)
        pstats = {"param_candidates": len(pcands), "param_rules": len(pkept),
                  "param_seconds": round(time.perf_counter() - t0, 3)}
        kept = _Pending(lambda: pairs()[1])
        result = MineResult(params, stage, [], kept, pcands, pkept, pstats)
        if params.language == "extended":
            t0 = time.perf_counter()
            mine_general(result, urllist, index)  # waits for the pairs where it first reads them
            general_seconds = round(time.perf_counter() - t0, 3)
        detected, kept_pairs, eliminated_by, stats = pairs()
        if progress:
            progress("pairs", len(detected), len(detected))
        result.detected, result.kept, result.eliminated_by = detected, kept_pairs, eliminated_by
        stats.update(result.stats)  # mine_table's order: phases 1-2, phase 3, the general miners
        if params.language == "extended":
            stats["general_seconds"] = general_seconds
        result.stats = stats
        return result
    finally:
        recv.close()  # first: a child blocked sending to it is not left waiting
        if child.is_alive():
            child.kill()  # SIGKILL: no handler of the parent's (module docstring) can catch it
        child.join()


def mine_two_or_alone(urllist: URLList, params: DustParams | None = None, stage: str = "eliminate",
                      progress: Progress | None = None, index: URLIndex | None = None
                      ) -> tuple[MineResult, MiningProcessLost | None]:
    """:func:`mine_two`; where its second process is lost (killed, out of memory), the list mined
    again by :func:`~dustbuster.core.mining.mine.mine` in this one (the same result).  Returns the
    result and the loss (None where two processes mined it), for the caller to say."""
    try:
        return mine_two(urllist, params, stage, progress, index), None
    except MiningProcessLost as exc:
        return mine(urllist, params, stage, progress, index), exc


def _pairs_child(send, urllist: URLList, params: DustParams, stage: str) -> None:
    """The forked half: Figure 1's supports, ranked and eliminated, sent back; a MemoryError as
    its own status (the parent may then mine the list alone)."""
    _forked_quiet()
    try:
        detected, kept, eliminated_by, stats = rank_pairs(count_supports(urllist, params), urllist, params, stage)
        send.send(("ok", (detected, kept, eliminated_by, stats)))
    except MemoryError:
        send.send(("memory", traceback.format_exc()))
    except BaseException:  # noqa: BLE001  # any failure goes back to the parent, which raises it
        send.send(("error", traceback.format_exc()))
    finally:
        send.close()


#: the signals an event loop of the parent may handle (a worker's: mode's SIGTERM, SIGINT, SIGUSR1/2)
_LOOP_SIGNALS = tuple(getattr(signal, n) for n in ("SIGTERM", "SIGINT", "SIGUSR1", "SIGUSR2", "SIGHUP")
                      if hasattr(signal, n))


def _forked_quiet() -> None:
    """The forked child let go of what it shares with the parent beyond the URL list: the signal
    handlers and the event loop's wakeup socket (a signal to the child would otherwise reach the
    parent's loop: a SIGTERM to the child would stop a worker), and logging (another thread of the
    parent may have held a handler's stream at the fork; the child's result carries its stats)."""
    if hasattr(signal, "set_wakeup_fd"):
        try:
            signal.set_wakeup_fd(-1)
        except ValueError:  # not the main thread: the fork made the forking thread the main one
            pass
    for sig in _LOOP_SIGNALS:
        try:
            signal.signal(sig, signal.SIG_DFL)
        except (OSError, ValueError):
            pass
    logging.disable(logging.CRITICAL)


class _Pending(list):
    """A list filled by ``fetch()`` when it is first read (the likely pairs, while the other
    process counts them)."""

    def __init__(self, fetch: Callable[[], list]) -> None:
        super().__init__()
        self._fetch: Callable[[], list] | None = fetch

    def _wait(self) -> None:
        if self._fetch is not None:
            fetch, self._fetch = self._fetch, None
            self.extend(fetch())

    def __iter__(self):
        self._wait()
        return super().__iter__()

    def __len__(self) -> int:
        self._wait()
        return super().__len__()

    def __getitem__(self, i):
        self._wait()
        return super().__getitem__(i)

    def __contains__(self, x: object) -> bool:
        self._wait()
        return super().__contains__(x)

    def __reversed__(self):
        self._wait()
        return super().__reversed__()
