"""The load generator's HTTP clients: a raw keep-alive HTTP/1.1 client, one connection per
bot, requests written as prebuilt bytes (about 50 us of CPU a request), and httpx (about
1 ms a request here, more than the server), kept only for comparison (`--client httpx`)."""

from __future__ import annotations

import asyncio
from typing import Any

HOST = "127.0.0.1"


class HttpError(Exception):
    pass


class _Protocol(asyncio.Protocol):
    """One keep-alive HTTP/1.1 connection, one request at a time; Content-Length bodies."""

    def __init__(self) -> None:
        self.transport: asyncio.Transport | None = None
        self.buffer = bytearray()
        self.waiter: asyncio.Future[tuple[int, bytes]] | None = None
        self.status = 0
        self.body_at = 0
        self.end = -1
        self.closed = False

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = transport  # type: ignore[assignment]

    def data_received(self, data: bytes) -> None:
        buffer = self.buffer
        buffer += data
        if self.end < 0:
            head_end = buffer.find(b"\r\n\r\n")
            if head_end < 0:
                return
            head = bytes(buffer[:head_end]).lower()
            self.status = int(head[9:12])
            at = head.find(b"\r\ncontent-length:")
            if at < 0:
                self._fail(HttpError("response without content-length"))
                return
            stop = head.find(b"\r\n", at + 2)
            length = int(head[at + 17 : stop if stop >= 0 else None])
            self.body_at = head_end + 4
            self.end = self.body_at + length
        if len(buffer) >= self.end:
            body = bytes(buffer[self.body_at : self.end])
            del buffer[: self.end]
            self.end = -1
            waiter, self.waiter = self.waiter, None
            if waiter is not None and not waiter.done():
                waiter.set_result((self.status, body))

    def _fail(self, error: Exception) -> None:
        waiter, self.waiter = self.waiter, None
        if waiter is not None and not waiter.done():
            waiter.set_exception(error)
        if self.transport is not None:
            self.transport.close()

    def connection_lost(self, exc: Exception | None) -> None:
        self.closed = True
        waiter, self.waiter = self.waiter, None
        if waiter is not None and not waiter.done():
            waiter.set_exception(ConnectionError(f"connection lost: {exc}"))


class RawClient:
    """A connection of its own per bot: requests written as prebuilt bytes."""

    def __init__(self, port: int) -> None:
        self.port = port
        self.proto: _Protocol | None = None
        self.host_line = f"Host: {HOST}:{port}\r\n"

    async def connect(self) -> _Protocol:
        _, proto = await asyncio.get_running_loop().create_connection(_Protocol, HOST, self.port)
        self.proto = proto
        return proto

    async def call(
        self, method: str, path: str, body: bytes | None = None, token: str | None = None
    ) -> tuple[int, bytes]:
        proto = self.proto
        if proto is None or proto.closed:
            proto = await self.connect()
        head = f"{method} {path} HTTP/1.1\r\n{self.host_line}"
        if token is not None:
            head += f"Authorization: Bearer {token}\r\n"
        if body is not None:
            head += f"Content-Type: application/json\r\nContent-Length: {len(body)}\r\n"
        waiter: asyncio.Future[tuple[int, bytes]] = asyncio.get_running_loop().create_future()
        proto.waiter = waiter
        assert proto.transport is not None
        proto.transport.write(head.encode() + b"\r\n" + body if body else head.encode() + b"\r\n")
        return await waiter

    async def close(self) -> None:
        if self.proto is not None and self.proto.transport is not None:
            self.proto.transport.close()


class HttpxClient:
    """httpx.AsyncClient (HTTP/1.1, keep-alive), shared by every bot."""

    def __init__(self, shared: Any) -> None:
        self.http = shared

    async def call(
        self, method: str, path: str, body: bytes | None = None, token: str | None = None
    ) -> tuple[int, bytes]:
        headers = {"Authorization": f"Bearer {token}"} if token is not None else {}
        if body is not None:
            headers["Content-Type"] = "application/json"
        response = await self.http.request(method, path, content=body, headers=headers)
        return int(response.status_code), bytes(response.content)

    async def close(self) -> None:
        return None


Client = RawClient | HttpxClient
