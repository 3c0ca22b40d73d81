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
nothing is pickled to it) and sends back the ranked pairs, a few thousand at most.  A streaming
window, whose parse of the list is kept and forked with it, evens the halves out: the child also
mines phase 3 there and sends its rules back, and on a first window it names the list's windows,
prefixes and suffixes for Figure 1 (core/urls/keptwindows.py) and sends them back to be kept, while
phase 3 stays here.  Memory: the child's Figure 1 arrays beside this process's URL index (more at
once than one process, which frees the one before building the other).  Ours, beyond the papers.
"""

from __future__ import annotations

import logging
import multiprocessing as mp
import signal
import time
import traceback
from typing import Callable, Sequence

from dustbuster.core.errors import DustError, MiningProcessLost
from dustbuster.core.mining.detect import Progress, count_supports, kept_token_names
from dustbuster.core.canon.rulecheck import unsafe_reasons
from dustbuster.core.mining.mine import (STAGES, MineResult, mine, mine_general, pair_rules, rank_pairs, unsafe_flags,
                                         unsafe_sample)
from dustbuster.core.model.rules import Rule, SubstringRule
from dustbuster.core.mining.paramrules import detect_param_rules
from dustbuster.core.mining.processes import can_fork
from dustbuster.core.params import DustParams
from dustbuster.core.urls.substrings import TokenNames
from dustbuster.core.urls.urlindex import URLIndex
from dustbuster.core.urls.urllist import URLList

log = logging.getLogger(__name__)


def mine_two(urllist: URLList, params: DustParams | None = None, stage: str = "eliminate",
             progress: Progress | None = None, index: URLIndex | None = None,
             unsafe_urls: Sequence[str] | None = None) -> MineResult:
    """:func:`~dustbuster.core.mining.mine.mine`, its two halves in two processes (one where
    ``fork`` is not available).  ``index``: the list's URLs already parsed, as for ``mine``.
    ``unsafe_urls``: the result's ``unsafe`` set as :func:`~dustbuster.core.mining.mine.unsafe_flags`
    on those URLs sets it, each process judging the candidates it mined while the other works
    (the substring pairs in the child, the rules of the URL list here before the pairs come)."""
    params = params or DustParams()
    if stage not in STAGES:
        raise ValueError(f"stage must be one of {STAGES}")
    if not can_fork():
        return _flagged(mine(urllist, params, stage, progress, index), unsafe_urls)
    names = _names_before_fork(index, urllist)
    # the thesis' parameter rules in the other process too where the list's parse is at hand (a
    # window's, kept) and this one has the extended miners to run meanwhile: the halves' work about
    # even; else here (the child parsing nothing, naming the list's sequences, or this one idle)
    params_there = (index is not None and index.urllist is urllist and index.params == params
                    and params.language == "extended" and names is None)
    ctx = mp.get_context("fork")
    recv, send = ctx.Pipe(duplex=False)
    child = ctx.Process(target=_pairs_child, args=(send, urllist, params, stage, index, params_there,
                                                   unsafe_urls), daemon=True)
    child.start()
    send.close()
    try:
        t0 = time.perf_counter()
        result = MineResult(params, stage, [], [], [], [], {})
        pairs = _Received(recv, child, result if params_there else None, names)
        result.kept = _Pending(lambda: pairs()[1])
        index = URLIndex.of(urllist, params, index)  # as mine_table: every URL parsed once
        if not params_there:  # else they come with the pairs (pairs() fills them in)
            result.param_kept, result.param_candidates = detect_param_rules(urllist, params, index)
            result.stats = _param_stats(result.param_kept, result.param_candidates, t0)
        judge = _Judge(unsafe_urls) if unsafe_urls is not None else None
        if params.language == "extended":
            t0 = time.perf_counter()
            # waits for the pairs where it first reads them, judging its rules before
            mine_general(result, urllist, index, judge.note if judge else None)
            general_seconds = round(time.perf_counter() - t0, 3)
        detected, kept_pairs, eliminated_by, stats, pair_reasons, _, _ = pairs()
        if progress:
            progress("pairs", len(detected), len(detected))
        result.detected, result.kept, result.eliminated_by = detected, kept_pairs, eliminated_by
        stats.update(result.stats)  # mine_table's order: phases 1-2, phase 3, the general miners
        if params.language == "extended":
            stats["general_seconds"] = general_seconds
        result.stats = stats
        if judge is not None:
            result.unsafe = judge.flags(result, pair_reasons)
            stats["unsafe_seconds"] = round(judge.seconds, 3)
        return result
    finally:
        recv.close()  # first: a child blocked sending to it is not left waiting
        if child.is_alive():
            child.kill()  # SIGKILL: no handler of the parent's (module docstring) can catch it
        child.join()


def _names_before_fork(index: URLIndex | None, urllist: URLList) -> TokenNames | None:
    """The kept token names brought up to date here, before the fork (the child's scan of the new
    URLs would be lost); their windows, prefixes and suffixes too, unless they lag by more than half
    the list (a first window): then the child names them beside this process's work and sends them
    back, and the names are returned, for :class:`_Received` to take them."""
    if index is None or index.urllist is not urllist:
        return None
    names = index.token_names
    far = (len(urllist) if names is None else names.windows.behind(len(urllist))) > len(urllist) // 2
    names = kept_token_names(index, windows=not far)
    return names if far else None


class _Received:
    """The other process's result, received when first asked for (where the likely pairs are
    first read); with ``result`` given, the thesis' parameter rules it mined put into it then."""

    def __init__(self, recv, child, result: MineResult | None, names: TokenNames | None = None) -> None:
        self.recv, self.child, self.result, self.names = recv, child, result, names
        self._got: tuple | None = None

    def __call__(self) -> tuple:
        if self._got is None:
            self._got = _receive(self.recv, self.child)
            windows = self._got[6]
            if self.names is not None and windows is not None and not windows.behind(len(self.names.base)):
                self.names.windows = windows  # the child's names of this list's sequences, kept
            if self.result is not None:
                pkept, pcands, pstats = self._got[5]
                self.result.param_kept, self.result.param_candidates = pkept, pcands
                self.result.stats = {**pstats, **self.result.stats}  # mine_table's order: phase 3's first
        return self._got


def _param_stats(pkept: list, pcands: list, t0: float) -> dict:
    """mine_table's statistics of the thesis' parameter rules (§5.3), begun at ``t0``."""
    return {"param_candidates": len(pcands), "param_rules": len(pkept),
            "param_seconds": round(time.perf_counter() - t0, 3)}


def _receive(recv, child) -> tuple:
    """The child's result from the pipe, once it sent it (the child joined); its loss or failure
    raised: MiningProcessLost where this process may mine the list alone instead."""
    t0 = time.perf_counter()
    try:
        status, payload = recv.recv()
        log.debug("mine_two: waited %.3f s for the other process's pairs", time.perf_counter() - t0)
    except EOFError:
        child.join()
        raise MiningProcessLost(f"the process counting Figure 1's supports ended without a result "
                                f"(exit code {child.exitcode}; out of memory?)") from None
    child.join()
    if status == "memory":
        raise MiningProcessLost(f"the process counting Figure 1's supports ran out of memory:\n{payload}")
    if status != "ok":
        raise DustError(f"the process counting Figure 1's supports failed:\n{payload}")
    return payload


def mine_two_or_alone(urllist: URLList, params: DustParams | None = None, stage: str = "eliminate",
                      progress: Progress | None = None, index: URLIndex | None = None,
                      unsafe_urls: Sequence[str] | None = None) -> tuple[MineResult, MiningProcessLost | None]:
    """:func:`mine_two`; where its second process is lost (killed, out of memory), the list mined
    again by :func:`~dustbuster.core.mining.mine.mine` in this one (the same result, flagged on
    ``unsafe_urls`` here).  Returns the result and the loss (None where two processes mined it),
    for the caller to say."""
    try:
        return mine_two(urllist, params, stage, progress, index, unsafe_urls), None
    except MiningProcessLost as exc:
        return _flagged(mine(urllist, params, stage, progress, index), unsafe_urls), exc


def _flagged(result: MineResult, unsafe_urls: Sequence[str] | None) -> MineResult:
    """``result`` with its ``unsafe`` set on ``unsafe_urls`` (when given), in this process."""
    if unsafe_urls is not None:
        t0 = time.perf_counter()
        result.unsafe = unsafe_flags(result, unsafe_urls)
        result.stats["unsafe_seconds"] = round(time.perf_counter() - t0, 3)
    return result


class _Judge:
    """:func:`~dustbuster.core.mining.mine.unsafe_flags` in parts: the rules given to :meth:`note` while
    the other process counts, then the rest; the same flags (each rule's answer is its own:
    core/canon/rulecheck.py ``unsafe_reasons``), assembled in unsafe_flags' order."""

    def __init__(self, urls: Sequence[str]) -> None:
        self.urls = urls
        self._sample: list[str] | None = None
        self._reasons: dict[int, tuple[Rule, str | None]] = {}  #: id → (the rule itself, its answer)
        self.seconds = 0.0

    def sample(self) -> list[str]:
        if self._sample is None:
            self._sample = unsafe_sample(self.urls)
        return self._sample

    def note(self, rules: list[Rule]) -> None:
        """Judge ``rules`` now."""
        t0 = time.perf_counter()
        todo = [r for r in rules if self._reason(r) is _MISSING]
        for r, why in zip(todo, unsafe_reasons(todo, self.sample())):
            self._reasons[id(r)] = (r, why)
        self.seconds += time.perf_counter() - t0

    def _reason(self, rule: Rule) -> object:
        got = self._reasons.get(id(rule))
        return got[1] if got is not None and got[0] is rule else _MISSING

    def flags(self, result: MineResult, pair_reasons: list[str | None]) -> dict[str, str]:
        """``unsafe_flags(result, urls)``: the pairs' answers from the other process, the rest
        from :meth:`note` or judged now."""
        rest = [*result.param_rules(), *result.general]
        self.note(rest)
        whys = [*pair_reasons, *(self._reasons[id(r)][1] for r in rest)]  # every one noted just now
        return {r.text: why for r, why in zip([*pair_rules(result), *rest], whys) if why}


_MISSING = object()


def _pairs_child(send, urllist: URLList, params: DustParams, stage: str, index: URLIndex | None,
                 params_here: bool, unsafe_urls: Sequence[str] | None) -> None:
    """The forked half: Figure 1's supports, ranked and eliminated, with the unsafe answers of
    the pairs judged on ``unsafe_urls``' sample when given, with ``params_here`` the thesis'
    parameter rules (§5.3: the two halves' work about even), and the kept windows, prefixes and
    suffixes of ``index``'s token names where this process named them, sent back; a MemoryError
    as its own status (the parent may then mine the list alone)."""
    _forked_quiet()
    try:
        names = index.token_names if index is not None and index.urllist is urllist else None
        was_behind = names is not None and names.windows.behind(len(names.base)) > 0
        detected, kept, eliminated_by, stats = rank_pairs(count_supports(urllist, params, index=index), urllist, params, stage)
        reasons: list[str | None] = []
        if unsafe_urls is not None:
            pairs = kept if stage == "eliminate" else detected
            reasons = unsafe_reasons([SubstringRule(p.alpha, p.beta) for p in pairs], unsafe_sample(unsafe_urls))
        there = None
        if params_here and index is not None:
            t0 = time.perf_counter()
            pkept, pcands = detect_param_rules(urllist, params, index)
            there = (pkept, pcands, _param_stats(pkept, pcands, t0))
        windows = names.windows if names is not None and was_behind else None
        send.send(("ok", (detected, kept, eliminated_by, stats, reasons, there, windows)))
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
