"""Progress display on stderr (tqdm), silent when stderr is not a terminal or with --quiet."""

from __future__ import annotations

import sys
from typing import Callable

from tqdm import tqdm


def enabled(quiet: bool) -> bool:
    return not quiet and sys.stderr.isatty()


class StageBar:
    """One bar per named stage of dustbuster.core.mining.detect's progress callback."""

    def __init__(self, on: bool) -> None:
        self.on = on
        self.bar: tqdm | None = None
        self.stage: str | None = None

    def __call__(self, stage: str, done: int, total: int) -> None:
        if not self.on:
            return
        if stage != self.stage:
            self.close()
            self.stage = stage
            # the stages report abstract work units in jumps: a rate over them means nothing (it showed
            # "90092325402.95/s"), so the bar shows the share done and the time left
            self.bar = tqdm(total=total, desc=stage, file=sys.stderr, leave=False,
                            bar_format="{desc}: {percentage:3.0f}%|{bar}| [{elapsed}<{remaining}]")
        assert self.bar is not None
        self.bar.n = done
        self.bar.refresh()

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()
            self.bar = None


def byte_bar(total: int, on: bool, desc: str = "read") -> tuple[Callable[[int], None] | None, Callable[[], None]]:
    if not on:
        return None, lambda: None
    bar = tqdm(total=total or None, desc=desc, unit="B", unit_scale=True, file=sys.stderr, leave=False)
    return bar.update, bar.close
