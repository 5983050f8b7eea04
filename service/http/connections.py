"""uvicorn's HTTP/1.1 protocol (httptools) with bounds on what a connection, and a client, may
cost.

Left alone, uvicorn keeps a connection that never sends a byte (or dribbles its head or its
body) open forever and accepts until the process runs out of descriptors; from then on every
new connection, `/health` included, fails, and asyncio logs each failed accept. One client
could also take every connection with requests that never end. This protocol

- closes a connection whose request head is not complete `header_timeout` seconds after it
  opened (or after the first byte of a request on a kept-alive connection);
- answers 408 `body_too_slow` and closes a connection whose request body has not arrived
  whole `body_timeout` seconds after its head, plus one second for each `body_min_rate`
  bytes received: a body that keeps up that rate is never cut, a dribbled one is;
- lets one client (holdings.py: the rate limiter's client) hold `per_client` connections:
  one more closes that client's own connection idle the longest or, when all are busy, is
  answered 429 `too_many_client_connections` and closed;
- keeps at most `max_connections`: one more closes the connection idle the longest (no
  request in progress); when all are busy, the client holding the most gives way if it holds
  two more than the newcomer's (its newest stream ends cleanly, and its client resumes with
  `Last-Event-ID`; or its newest body still coming is answered 503); else the newcomer is
  answered 503 `too_many_connections` and closed. One address never fills the server, and
  when several have, the biggest shrinks first: `/health`, `/ready` and newcomers find room;
- answers a request it cannot parse, or whose head passes 64 KiB, with a problem-details
  400, like every other error;
- ends an event stream (`text/event-stream`) at once when the server shuts down (SIGTERM):
  such a response never ends by itself, and uvicorn would wait for it. Its last message is
  `SHUTTING_DOWN` (a `retry:` hint and an event `reconnect`), its body is closed cleanly, and
  the client reconnects (with `Last-Event-ID`) to another instance or after the restart.
  The other requests in flight finish within FAIRWAY_SHUTDOWN_GRACE (service/cli/serve.py).

A streaming response is a request in progress, so it is never closed as idle, and the
header timeout, armed only while no request is in progress, never cuts it; it ends by itself
after FAIRWAY_SSE_LIFETIME (service/http/controllers/stream.py).

Each GET on HTTP/1.1 is offered a fast path to the transport for its stream's deliveries, in
`scope["extensions"]` (service/http/direct.py): it writes only while the guard and uvicorn
would let the response's own writes through, and never the response's end.

The policy is service/http/guard.py's; this module binds it to uvicorn's httptools protocol,
whose parser tells it where each request stands, and holds the settings' arithmetic.
"""

from __future__ import annotations

import asyncio
import resource
from typing import Any, Literal

from uvicorn.config import Config
from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol
from uvicorn.server import ServerState

from service.http.direct import DIRECT, Direct
from service.http.guard import ConnectionGuard, ConnectionLimits
from service.ops.logging import log

__all__ = [
    "RESERVED_DESCRIPTORS",
    "SHUTTING_DOWN",
    "ConnectionLimits",
    "GuardedProtocol",
    "client_share",
    "connection_cap",
    "raise_descriptor_limit",
]

SHUTTING_DOWN = (
    b": shutting down; reconnect with Last-Event-ID\nretry: 1000\nevent: reconnect\n"
    b'data: {"reason":"shutdown"}\n\n'
)
"""The last message of an event stream its server ends as it stops: no `id`, so the client's
Last-Event-ID stays the last event it was sent; retry soon, another instance will answer."""

# Descriptors the process needs besides client connections: listening sockets, the event
# store's pool (added per setting), Redis, log files, the event loop's own.
RESERVED_DESCRIPTORS = 128


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


def client_share(wanted: int, cap: int) -> int:
    """`wanted`, lowered if need be to three quarters of the connection cap: one client
    never fills the server, the last quarter stays for everyone else."""
    return max(1, min(wanted, cap * 3 // 4))


class HeadTooLarge(Exception):
    """Raised in a parser callback (the parser reports it as a parse error: a 400)."""


class GuardedProtocol(ConnectionGuard, HttpToolsProtocol):
    """uvicorn's httptools protocol; reads its limits from `config.connection_limits`.

    `reading` is where the latest request stands: `head` (none yet, or its head not whole),
    `body` (its head has come, its body has not all come) or `done` (all of it has come; no
    longer so once its response is complete). A request pipelined behind one in progress
    counts as in progress too (uvicorn runs it when that one is answered).
    """

    def __init__(
        self,
        config: Config,
        server_state: ServerState,
        app_state: dict[str, Any],
        _loop: asyncio.AbstractEventLoop | None = None,
    ) -> None:
        super().__init__(config, server_state, app_state, _loop)
        # uvicorn logs each request when its access logger has a handler anywhere up the
        # tree, and ours propagates to the root's (service/ops/logging.py): it then worked
        # out every response's client and path for a line the level dropped. The service
        # logs requests itself (service/http/middleware.py); the config's word decides.
        self.access_log = bool(config.access_log) and self.access_log
        self.reading: Literal["head", "body", "done"] = "head"
        self.head_bytes = 0
        self.began = False
        self.direct: Direct | None = None
        """The fast path offered to the latest request (service/http/direct.py)."""
        self._guard_init(config.connection_limits, server_state)  # type: ignore[attr-defined]

    def _head_pending(self) -> bool:
        return self.reading == "head" and (self.cycle is None or self.cycle.response_complete)

    def _body_pending(self) -> bool:
        return self.reading == "body"

    def _write_body_end(self, last: bytes) -> None:
        if self.cycle.chunked_encoding:
            chunk = b"%x\r\n%s\r\n" % (len(last), last) if last else b""
            self.transport.write(chunk + b"0\r\n\r\n")

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        self._guard_opened()

    def data_received(self, data: bytes) -> None:
        if self.body_deadline is not None:
            self.body_bytes += len(data)
        self.began = False
        super().data_received(data)
        self._guard_read(self.began)

    def connection_lost(self, exc: Exception | None) -> None:
        self._guard_closed()
        if self.direct is not None:
            self.direct.close()
        super().connection_lost(exc)

    def shutdown(self) -> None:
        if not self._end_stream(SHUTTING_DOWN):
            super().shutdown()

    # The parser's callbacks, noting where the request stands.

    def on_message_begin(self) -> None:
        super().on_message_begin()
        self.reading, self.head_bytes = "head", 0

    def on_url(self, url: bytes) -> None:
        self._count_head(len(url))
        super().on_url(url)

    def on_header(self, name: bytes, value: bytes) -> None:
        self._count_head(len(name) + len(value) + 4)
        super().on_header(name, value)

    def on_headers_complete(self) -> None:
        super().on_headers_complete()
        self.reading, self.began = "body", True
        scope, cycle = self.scope, self.cycle
        if (
            cycle is not None
            and cycle.scope is scope
            and scope["method"] == "GET"
            and scope["http_version"] == "1.1"
        ):
            # A stream's fast path; not for HTTP/1.0, whose client knows no chunks.
            self.direct = Direct(self, cycle)
            scope.setdefault("extensions", {})[DIRECT] = {"writer": self.direct}

    def on_message_complete(self) -> None:
        super().on_message_complete()
        self.reading = "done"
        if self.cycle.response_complete:  # answered before its body had all come
            self._rest()

    def on_response_complete(self) -> None:
        self.streaming = False
        direct = self.direct  # unless it is a pipelined request's, still to run:
        if direct is not None and direct.cycle is not None and direct.cycle.response_complete:
            direct.close()
        super().on_response_complete()
        if self.reading == "done" and self.cycle.response_complete:
            self._rest()

    def _rest(self) -> None:
        self.reading = "head"
        self._guard_rest()

    def _count_head(self, size: int) -> None:
        self.head_bytes += size
        if self.head_bytes > self.limits.max_head:
            raise HeadTooLarge
