"""One site's fetch pace, shared by all its origins and all its validation rounds: a minimum interval
between requests (the sites file's ``rate_per_s``) and a budget of fetches per hour
(``DUST_VALIDATOR_FETCHES_PER_HOUR``).  Beyond the papers, which fetch a fixed sample once.

A site served under four host names is one server: its rate is the site's, not each origin's.  The
validator keeps one pacer per site for as long as it runs, so the rate holds across rounds (the
revalidation timer's round and a new window's round of the same site share it), and the budget
counts every request of the last hour — robots.txt, front pages, rules' pairs, set checks — so no
loop of rounds can fetch more than the budget in any hour.

>>> import asyncio
>>> p = SitePacer(rate_per_s=0, per_hour=2)
>>> asyncio.run(p.take()), asyncio.run(p.take()), asyncio.run(p.take())
(True, True, False)
>>> p.left()
0
"""

from __future__ import annotations

import asyncio
import time
from collections import deque
from typing import Callable

HOUR_S = 3600.0


class SitePacer:
    """The minimum interval between two requests of a site (``1 / rate_per_s``; 0: none) and the
    requests it may make in any hour (``per_hour``; 0: no budget)."""

    def __init__(self, rate_per_s: float, per_hour: int = 0, clock: Callable[[], float] = time.monotonic) -> None:
        self.gap = 1.0 / rate_per_s if rate_per_s > 0 else 0.0
        self.per_hour = per_hour
        self.clock = clock
        self._next_at = 0.0
        self._taken: deque[float] = deque()  #: when each request of the last hour was let go
        self.refused = 0  #: requests refused because the budget was spent

    def _expire(self, now: float) -> None:
        while self._taken and self._taken[0] <= now - HOUR_S:
            self._taken.popleft()

    def left(self) -> int | None:
        """Requests the budget still allows in the coming hour (None: no budget)."""
        if self.per_hour <= 0:
            return None
        self._expire(self.clock())
        return max(0, self.per_hour - len(self._taken))

    def used(self) -> int:
        """Requests of the last hour."""
        self._expire(self.clock())
        return len(self._taken)

    async def take(self) -> bool:
        """Wait for the site's next slot and count the request; False (at once) when the hour's
        budget is spent: the caller does not fetch."""
        now = self.clock()
        self._expire(now)
        if self.per_hour > 0 and len(self._taken) >= self.per_hour:
            self.refused += 1
            return False
        at = max(now, self._next_at)
        self._next_at = at + self.gap
        if self.per_hour > 0:
            self._taken.append(at)
        if at > now:
            await asyncio.sleep(at - now)
        return True


__all__ = ["SitePacer"]
