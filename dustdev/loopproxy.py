"""A forward HTTP proxy onto 127.0.0.1, for tests and benchmarks whose crawlers cannot be given a
resolver of their own (Crawlee): a request for ``http://HOST:PORT/path`` whose HOST ends with one
of ``suffixes`` goes to ``127.0.0.1:PORT`` with its ``Host`` header kept; anything else is refused
(403).  Plain HTTP only (no CONNECT), one request a connection, listening on 127.0.0.1.

    with LoopbackProxy((".test",)) as proxy:   # proxy.url: http://127.0.0.1:NNNN
        ...
"""

from __future__ import annotations

import asyncio
import logging
import threading
from urllib.parse import urlsplit

log = logging.getLogger(__name__)


class LoopbackProxy:
    def __init__(self, suffixes: tuple[str, ...] = (".test",)) -> None:
        self.suffixes = suffixes
        self.port = 0
        self.requests = 0
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._ready = threading.Event()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def __enter__(self) -> "LoopbackProxy":
        self._thread = threading.Thread(target=self._run, name="loopback-proxy", daemon=True)
        self._thread.start()
        if not self._ready.wait(10):
            raise RuntimeError("the loopback proxy did not start")
        return self

    def __exit__(self, *exc) -> None:
        if self._loop is not None:
            self._loop.call_soon_threadsafe(self._loop.stop)
        if self._thread is not None:
            self._thread.join(10)

    def _run(self) -> None:
        self._loop = asyncio.new_event_loop()
        server = self._loop.run_until_complete(asyncio.start_server(self._handle, "127.0.0.1", 0))
        self.port = server.sockets[0].getsockname()[1]
        self._ready.set()
        try:
            self._loop.run_forever()
        finally:
            server.close()
            pending = asyncio.all_tasks(self._loop)
            for task in pending:
                task.cancel()
            self._loop.run_until_complete(asyncio.gather(*pending, return_exceptions=True))
            self._loop.close()

    async def _handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            head = await reader.readuntil(b"\r\n\r\n")
            line, _, rest = head.partition(b"\r\n")
            method, target, version = line.decode("latin-1").split(" ", 2)
            u = urlsplit(target)
            if u.scheme != "http" or not u.hostname or not u.hostname.endswith(self.suffixes):
                writer.write(b"HTTP/1.1 403 Forbidden\r\nContent-Length: 0\r\nConnection: close\r\n\r\n")
                return
            headers = [h for h in rest.split(b"\r\n") if h and not h.lower().startswith(
                (b"proxy-", b"connection:", b"keep-alive:"))]
            length = next((int(h.split(b":", 1)[1]) for h in headers if h.lower().startswith(b"content-length:")), 0)
            body = await reader.readexactly(length) if length else b""
            path = (u.path or "/") + (f"?{u.query}" if u.query else "")
            up_r, up_w = await asyncio.open_connection("127.0.0.1", u.port or 80)
            up_w.write(f"{method} {path} {version}\r\n".encode("latin-1") + b"\r\n".join(headers)
                       + b"\r\nConnection: close\r\n\r\n" + body)
            await up_w.drain()
            self.requests += 1
            while chunk := await up_r.read(65536):
                writer.write(chunk)
            up_w.close()
        except (OSError, ValueError, asyncio.IncompleteReadError, asyncio.LimitOverrunError) as exc:
            log.debug("loopback proxy: %s", exc)
        finally:
            try:
                await writer.drain()
                writer.close()
            except OSError:
                pass
