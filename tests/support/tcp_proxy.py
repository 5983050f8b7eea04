"""A TCP proxy the tests control, to show what the service does when its database goes away.

`TcpProxy.to(url)` listens on a free loopback port and forwards every connection to the
server of a libpq URL; `proxy.url` is the same URL through the proxy. It runs its own event
loop in a thread, so a test that blocks (a synchronous HTTP client) does not stall it.

- `blackhole()`: a silent partition. Sockets stay open and nothing travels in either
  direction: no answer, no reset. New connections are accepted and hear nothing. Like TCP
  across a real partition, the bytes are held, not lost: `restore()` delivers them, so a
  statement sent during the partition may still run once it heals (its sender, having given
  up, cannot know: the outcome was unknown).
- `cut()`: a hard outage. Every connection is reset and new ones are reset at once.
- `restore()`: forward again.
"""

from __future__ import annotations

import asyncio
import contextlib
import socket
import threading
from collections.abc import Coroutine, Iterator
from typing import Any, TypeVar

from psycopg import conninfo

T = TypeVar("T")

_CHUNK = 64 * 1024


class TcpProxy:
    def __init__(self, host: str, port: int) -> None:
        self.target = (host, port)
        self.port = 0
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, name="tcp-proxy")
        self._server: asyncio.Server | None = None
        self._passing = asyncio.Event()  # set: forward; clear: hold everything
        self._cut = False
        self._writers: set[asyncio.StreamWriter] = set()
        self._tasks: set[asyncio.Task[None]] = set()
        self._database_url = ""

    @classmethod
    @contextlib.contextmanager
    def to(cls, database_url: str) -> Iterator[TcpProxy]:
        """A running proxy to the server of `database_url`, stopped when the block ends."""
        params = conninfo.conninfo_to_dict(database_url)
        proxy = cls(str(params.get("host") or "127.0.0.1"), int(params.get("port") or 5432))
        proxy._database_url = database_url
        proxy._start()
        try:
            yield proxy
        finally:
            proxy._stop()

    @classmethod
    @contextlib.contextmanager
    def to_address(cls, host: str, port: int) -> Iterator[TcpProxy]:
        """A running proxy to any TCP server (Redis), stopped when the block ends; connect
        to 127.0.0.1:`proxy.port`."""
        proxy = cls(host, port)
        proxy._start()
        try:
            yield proxy
        finally:
            proxy._stop()

    @property
    def url(self) -> str:
        """The database URL given to `to()`, through this proxy."""
        return conninfo.make_conninfo(self._database_url, host="127.0.0.1", port=self.port)

    # ---- faults -----------------------------------------------------------------------

    def blackhole(self) -> None:
        self._call(self._set(passing=False, cut=False))

    def cut(self) -> None:
        self._call(self._set(passing=False, cut=True))

    def restore(self) -> None:
        self._call(self._set(passing=True, cut=False))

    async def _set(self, passing: bool, cut: bool) -> None:
        self._cut = cut
        if passing:
            self._passing.set()
        else:
            self._passing.clear()
        if cut:
            for writer in list(self._writers):
                writer.transport.abort()  # a reset, not an orderly close
            self._writers.clear()

    # ---- forwarding -------------------------------------------------------------------

    async def _accept(self, client_in: asyncio.StreamReader, client: asyncio.StreamWriter) -> None:
        if self._cut:
            client.transport.abort()
            return
        self._writers.add(client)
        server: asyncio.StreamWriter | None = None
        try:
            await self._passing.wait()  # during a partition the server never hears of it
            if self._cut or client.is_closing():
                client.transport.abort()
                return
            server_in, server = await asyncio.open_connection(*self.target)
            self._writers.add(server)
            await asyncio.gather(self._pump(client_in, server), self._pump(server_in, client))
        except OSError:
            client.transport.abort()
        finally:  # both ends closed, however the forwarding ended (no writer left to the GC)
            for writer in (client, server):
                if writer is not None and not writer.is_closing():
                    writer.close()

    async def _pump(self, source: asyncio.StreamReader, sink: asyncio.StreamWriter) -> None:
        """Copy one direction; a chunk read while blackholed waits for `restore()`."""
        try:
            while data := await source.read(_CHUNK):
                await self._passing.wait()
                if self._cut or sink.is_closing():
                    break
                sink.write(data)
                await sink.drain()
            await self._passing.wait()  # an end of stream is held too
            if not sink.is_closing() and sink.can_write_eof():
                sink.write_eof()
        except OSError:
            pass
        finally:
            if self._cut:
                sink.transport.abort()
            self._writers.discard(sink)

    # ---- the thread ---------------------------------------------------------------------

    def _start(self) -> None:
        self._thread.start()
        self._passing.set()
        self._server = self._call(self._listen())
        self.port = int(self._server.sockets[0].getsockname()[1])

    async def _listen(self) -> asyncio.Server:
        return await asyncio.start_server(self._tracked, "127.0.0.1", 0, family=socket.AF_INET)

    async def _tracked(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        assert task is not None
        self._tasks.add(task)
        try:
            with contextlib.suppress(asyncio.CancelledError):  # stopped by _shutdown
                await self._accept(reader, writer)
        finally:
            self._tasks.discard(task)

    def _stop(self) -> None:
        self._call(self._shutdown())
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(timeout=10)
        self._loop.close()

    async def _shutdown(self) -> None:
        assert self._server is not None
        self._server.close()
        await self._set(passing=True, cut=True)  # whatever waits at the gate now ends
        # A pump may still wait to read from a peer that keeps its side open: end it.
        for task in self._tasks:
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)

    def _call(self, coroutine: Coroutine[Any, Any, T]) -> T:
        return asyncio.run_coroutine_threadsafe(coroutine, self._loop).result(timeout=10)
