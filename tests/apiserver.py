"""A worker's HTTP API (agents/api.py) served on loopback from its own event loop in a thread, for
tests that need a real server next to a browser or a crawler in another process."""

from __future__ import annotations

import asyncio
import threading

from aiohttp import web

from dustbuster.broker import free_port


class ApiThread:
    """``start()`` serves ``app`` on 127.0.0.1:``port``; :meth:`call` runs a function on the
    server's loop (the state behind the API is touched from that loop only, as in a worker)."""

    def __init__(self, app: web.Application) -> None:
        self.app, self.port = app, free_port()
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_forever, daemon=True)

    def start(self) -> "ApiThread":
        self.thread.start()
        self.runner = web.AppRunner(self.app)

        async def up() -> None:
            await self.runner.setup()
            await web.TCPSite(self.runner, "127.0.0.1", self.port).start()
        asyncio.run_coroutine_threadsafe(up(), self.loop).result(30)
        return self

    def call(self, fn, *args):
        async def go():
            return fn(*args)
        return asyncio.run_coroutine_threadsafe(go(), self.loop).result(30)

    def stop(self) -> None:
        asyncio.run_coroutine_threadsafe(self.runner.cleanup(), self.loop).result(30)
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(10)
