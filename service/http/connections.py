"""uvicorn's HTTP/1.1 protocol with bounds on what a connection may cost before it asks.

Left alone, uvicorn keeps a connection that never sends a byte (or dribbles its headers) open
forever and accepts until the process runs out of descriptors; from then on every new
connection, `/health` included, fails, and asyncio logs each failed accept. This protocol

- closes a connection whose request head is not complete `header_timeout` seconds after it
  opened (or after the first byte of a request on a kept-alive connection);
- keeps at most `max_connections`: one more closes the connection idle the longest (no
  request in progress) or, when all are busy, is answered at once with a 503 and closed;
- answers a request h11 cannot parse with a problem-details 400, like every other error;
- ends an event stream (`text/event-stream`) at once when the server shuts down: such a
  response never ends by itself, and uvicorn would wait for it. Its body is closed cleanly
  and the client reconnects (with `Last-Event-ID`) to another instance or after the restart.

A streaming response is a request in progress, so it is never closed as idle, and the
header timeout, armed only while no request is in progress, never cuts it.
"""

from __future__ import annotations

import asyncio
import contextlib
import resource
from dataclasses import dataclass
from typing import Any
from weakref import WeakKeyDictionary

import h11
import msgspec
from uvicorn.config import Config
from uvicorn.protocols.http.h11_impl import STATUS_PHRASES, H11Protocol
from uvicorn.server import ServerState

from service.contract.problems import ALL_CODES, PROBLEM_JSON, Problem
from service.ops.logging import Repeats, log

# Descriptors the process needs besides client connections: listening sockets, the event
# store's pool (added per setting), Redis, log files, the event loop's own.
RESERVED_DESCRIPTORS = 128


@dataclass(frozen=True)
class ConnectionLimits:
    header_timeout: float
    max_connections: int


def raise_descriptor_limit() -> int:
    """Raise the soft RLIMIT_NOFILE to the hard one; returns the soft limit now in force."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if hard != resource.RLIM_INFINITY and soft < hard:
        try:
            resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
            soft = hard
        except (ValueError, OSError):
            pass
    return soft


def connection_cap(wanted: int, descriptors: int, pool_size: int) -> int:
    """`wanted`, lowered if need be so that a full house still leaves descriptors to spare."""
    room = descriptors - RESERVED_DESCRIPTORS - pool_size
    if room < wanted:
        log.warning("max_connections_lowered", wanted=wanted, cap=room, descriptors=descriptors)
    return max(1, min(wanted, room))


def problem_bytes(status: int, code: str, detail: str) -> bytes:
    title = ALL_CODES[code]
    problem = Problem(f"urn:fairway:problem:{code}", title, status, code, detail)
    return msgspec.json.encode(problem)


# Per server, its connections with no request in progress (new, dribbling a head, or kept
# alive between requests), least recently active first: the first makes room when full.
_idle: WeakKeyDictionary[ServerState, dict[GuardedH11Protocol, None]] = WeakKeyDictionary()
_evictions = Repeats()
_refusals = Repeats()


class GuardedH11Protocol(H11Protocol):
    """uvicorn's h11 protocol; reads its limits from `config.connection_limits`."""

    def __init__(
        self,
        config: Config,
        server_state: ServerState,
        app_state: dict[str, Any],
        _loop: asyncio.AbstractEventLoop | None = None,
    ) -> None:
        super().__init__(config, server_state, app_state, _loop)
        self.limits: ConnectionLimits = config.connection_limits  # type: ignore[attr-defined]
        self.idle = _idle.setdefault(server_state, {})
        self.header_deadline: asyncio.TimerHandle | None = None
        self.streaming = False
        """Whether the response in progress is an event stream."""
        self.app = self._noting_streams(self.app)

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        if len(self.connections) > self.limits.max_connections and not self._make_room():
            self._refuse()
            return
        self.idle[self] = None
        self._await_request_head()

    def data_received(self, data: bytes) -> None:
        super().data_received(data)
        if self.conn.their_state is h11.IDLE:
            self._await_request_head()
        else:
            self._cancel_header_deadline()
            self.idle.pop(self, None)

    def on_response_complete(self) -> None:
        self.streaming = False
        super().on_response_complete()
        if self.conn.their_state is h11.IDLE and not self.transport.is_closing():
            self.idle.pop(self, None)
            self.idle[self] = None

    def connection_lost(self, exc: Exception | None) -> None:
        self.idle.pop(self, None)
        self._cancel_header_deadline()
        super().connection_lost(exc)

    def shutdown(self) -> None:
        cycle = self.cycle
        if not self.streaming or cycle is None or cycle.response_complete:
            super().shutdown()
            return
        cycle.disconnected = True  # what the stream still writes goes nowhere
        with contextlib.suppress(h11.LocalProtocolError):
            self.transport.write(self.conn.send(h11.EndOfMessage()))
        self.transport.close()

    def _noting_streams(self, app: Any) -> Any:
        """The app, with a note of whether each response is an event stream."""

        async def noting(scope: Any, receive: Any, send: Any) -> None:
            async def send_noting(message: Any) -> None:
                if message["type"] == "http.response.start":
                    self.streaming = any(
                        name.lower() == b"content-type" and value.startswith(b"text/event-stream")
                        for name, value in message.get("headers", ())
                    )
                await send(message)

            await app(scope, receive, send_noting)

        return noting

    def send_400_response(self, msg: str) -> None:
        detail = "the request line or headers are not valid HTTP/1.1"
        self._send_problem(400, "malformed_request", detail)

    def _make_room(self) -> bool:
        """Close the connection idle the longest; False when every one has a request on."""
        oldest = next(iter(self.idle), None)
        if oldest is None:
            return False
        del self.idle[oldest]
        oldest.transport.close()
        if (held := _evictions.admit("idle")) is not None:
            log.info("idle_connection_closed_for_room", held_back=held)
        return True

    def _refuse(self) -> None:
        cap = self.limits.max_connections
        if (held := _refusals.admit("busy")) is not None:
            log.warning("connection_refused", max_connections=cap, held_back=held)
        detail = f"the server holds its maximum of {cap} connections, all busy; retry shortly"
        self._send_problem(503, "too_many_connections", detail, ((b"retry-after", b"1"),))

    def _send_problem(
        self, status: int, code: str, detail: str, extra: tuple[tuple[bytes, bytes], ...] = ()
    ) -> None:
        body = problem_bytes(status, code, detail)
        head = [
            (b"content-type", PROBLEM_JSON.encode()),
            (b"content-length", str(len(body)).encode()),
            (b"connection", b"close"),
            *extra,
        ]
        response = h11.Response(status_code=status, headers=head, reason=STATUS_PHRASES[status])
        for event in (response, h11.Data(data=body), h11.EndOfMessage()):
            self.transport.write(self.conn.send(event))
        self.transport.close()

    def _await_request_head(self) -> None:
        if self.header_deadline is None and not self.transport.is_closing():
            timeout = self.limits.header_timeout
            self.header_deadline = self.loop.call_later(timeout, self._header_timed_out)

    def _cancel_header_deadline(self) -> None:
        if self.header_deadline is not None:
            self.header_deadline.cancel()
            self.header_deadline = None

    def _header_timed_out(self) -> None:
        self.header_deadline = None
        if self.conn.their_state is h11.IDLE:
            self.transport.close()
