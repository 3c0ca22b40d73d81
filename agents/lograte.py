"""Repeated errors rate-limited in the worker's log: without it, a broker outage of 30 s
wrote 7,000–9,000 ERROR lines, an exhausted file-descriptor table 76 MB of one message.

:class:`RepeatFilter`, on every handler of the root logger, lets through the first WARNING-or-worse
line of a *cause* and then at most one per ``interval_s`` seconds; the next line that passes says
how many like it were held back since the last one.  A cause is the logger, the level and the
message template with its digits blanked (``"retrying in 2.0s"`` and ``"retrying in 4.0s"`` are one
cause; an exception's traceback does not make a line a new cause).  Lines under WARNING are never
held back.  Counts are kept for at most :data:`MAX_CAUSES` causes (the oldest forgotten first).
"""

from __future__ import annotations

import logging
import re
import time
from collections import OrderedDict
from typing import Callable

#: seconds between two lines of one cause
INTERVAL_S = 30.0
#: causes whose counts are kept at once
MAX_CAUSES = 1000
_DIGITS = re.compile(r"\d+")


def cause_of(record: logging.LogRecord) -> tuple[str, int, str]:
    """What makes two log lines "the same error": logger, level, template without digits."""
    return record.name, record.levelno, _DIGITS.sub("N", str(record.msg))[:200]


class RepeatFilter(logging.Filter):
    def __init__(self, interval_s: float = INTERVAL_S, clock: Callable[[], float] = time.monotonic,
                 level: int = logging.WARNING) -> None:
        super().__init__()
        self.interval_s, self.clock, self.level = interval_s, clock, level
        self.causes: OrderedDict[tuple[str, int, str], list] = OrderedDict()  # cause → [last shown, held back]
        self.held_back = 0  #: lines held back in all (for tests and metrics)

    def filter(self, record: logging.LogRecord) -> bool:
        if record.levelno < self.level:
            return True
        key, now = cause_of(record), self.clock()
        st = self.causes.get(key)
        if st is not None and now - st[0] < self.interval_s:
            st[1] += 1
            self.held_back += 1
            return False
        if st is not None and st[1]:
            record.msg = f"{record.msg} [{st[1]} more like this in the last {now - st[0]:.0f}s, not logged]"
        self.causes[key] = [now, 0]
        self.causes.move_to_end(key)
        while len(self.causes) > MAX_CAUSES:
            self.causes.popitem(last=False)
        return True


def install(root: logging.Logger | None = None, interval_s: float = INTERVAL_S) -> RepeatFilter:
    """One :class:`RepeatFilter` on every handler of ``root`` (the root logger by default)."""
    root = root or logging.getLogger()
    filt = RepeatFilter(interval_s)
    for handler in root.handlers:
        if not any(isinstance(f, RepeatFilter) for f in handler.filters):
            handler.addFilter(filt)
    return filt
