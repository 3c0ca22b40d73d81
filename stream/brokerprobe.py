"""Is the Kafka broker reachable from this worker now? (Without this probe, ``/healthz``
answered 200 through a 30 s broker outage.)

The Faust consumer keeps its group membership for a session timeout after the broker went away,
and the producers and the rules follower only retry, so none of them says "unreachable".
:class:`BrokerProbe` asks the cluster for its metadata every ``interval_s`` seconds (a request of a
few hundred bytes, with its own timeout) and keeps when it last got an answer;
:meth:`BrokerProbe.problem` is the health report's line once no answer has come for more than
``grace_s`` seconds (``DUST_BROKER_GRACE_S``; short blips, a leader election, do not flip the
worker to unhealthy).
"""

from __future__ import annotations

import asyncio
import logging
import time
from typing import Callable

from aiokafka import AIOKafkaClient

log = logging.getLogger(__name__)

#: seconds between two probes
INTERVAL_S = 2.0


class BrokerProbe:
    def __init__(self, bootstrap: str, grace_s: float, interval_s: float = INTERVAL_S,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.bootstrap, self.grace_s, self.interval_s, self.clock = bootstrap, grace_s, interval_s, clock
        self.last_ok: float = clock()  #: a worker starts with the benefit of the doubt
        self.last_error = ""

    def problem(self) -> str | None:
        """Why the worker is unhealthy as far as the broker goes, or None."""
        silent = self.clock() - self.last_ok
        if silent <= self.grace_s:
            return None
        return (f"Kafka broker unreachable for {silent:.0f}s ({self.bootstrap}"
                + (f": {self.last_error})" if self.last_error else ")"))

    async def probe_once(self, client: AIOKafkaClient) -> bool:
        """One metadata request; True when the broker answered."""
        try:
            await asyncio.wait_for(client.fetch_all_metadata(), timeout=max(1.0, self.interval_s * 2))
        except asyncio.CancelledError:
            raise
        except Exception as exc:  # noqa: BLE001 - any failure means "no answer"
            self.last_error = f"{type(exc).__name__}: {str(exc)[:200]}" if str(exc) else type(exc).__name__
            return False
        self.last_ok, self.last_error = self.clock(), ""
        return True

    async def run(self) -> None:
        """Probe until cancelled."""
        client = AIOKafkaClient(bootstrap_servers=self.bootstrap, request_timeout_ms=int(max(1.0, self.interval_s * 2) * 1000))
        try:
            while True:
                try:
                    await client.bootstrap()
                    break
                except asyncio.CancelledError:
                    raise
                except Exception as exc:  # noqa: BLE001 - the broker not there yet: keep trying
                    self.last_error = f"{type(exc).__name__}: {str(exc)[:200]}"
                    await asyncio.sleep(self.interval_s)
            while True:
                await self.probe_once(client)
                await asyncio.sleep(self.interval_s)
        finally:
            await client.close()
