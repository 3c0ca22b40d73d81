"""One aiohttp application served on 127.0.0.1 for a test (a free port): the tests' loopback sites."""

from __future__ import annotations

from aiohttp import web


async def serve(app: web.Application) -> tuple[web.AppRunner, int]:
    """Start ``app`` on 127.0.0.1 at a free port; ``(runner, port)`` (``await runner.cleanup()`` stops it)."""
    runner = web.AppRunner(app)
    await runner.setup()
    await web.TCPSite(runner, "127.0.0.1", 0).start()
    return runner, runner.addresses[0][1]
