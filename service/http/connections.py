"""uvicorn's HTTP/1.1 protocol with bounds on what a connection, and a client, may cost.

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
- answers a request h11 cannot parse with a problem-details 400, like every other error;
- ends an event stream (`text/event-stream`) at once when the server shuts down (SIGTERM):
  such a response never ends by itself, and uvicorn would wait for it. Its last message is
  `SHUTTING_DOWN` (a `retry:` hint and an event `reconnect`), its body is closed cleanly, and
  the client reconnects (with `Last-Event-ID`) to another instance or after the restart.
  The other requests in flight finish within FAIRWAY_SHUTDOWN_GRACE (service/cli/serve.py).

A streaming response is a request in progress, so it is never closed as idle, and the
header timeout, armed only while no request is in progress, never cuts it; it ends by itself
after FAIRWAY_SSE_LIFETIME (service/http/controllers/stream.py).
"""

from __future__ import annotations

import asyncio
import contextlib
import resource
from dataclasses import dataclass, field
from typing import Any
from weakref import WeakKeyDictionary

import h11
import msgspec
from uvicorn.config import Config
from uvicorn.protocols.http.h11_impl import STATUS_PHRASES, H11Protocol
from uvicorn.server import ServerState

from service.contract.problems import ALL_CODES, PROBLEM_JSON, Problem
from service.http.holdings import Holdings
from service.http.middleware import ANSWERED, ClientAddresses
from service.ops.logging import Repeats, log

SHUTTING_DOWN = (
    b": shutting down; reconnect with Last-Event-ID\nretry: 1000\nevent: reconnect\n"
    b'data: {"reason":"shutdown"}\n\n'
)
"""The last message of an event stream its server ends as it stops: no `id`, so the client's
Last-Event-ID stays the last event it was sent; retry soon, another instance will answer."""

# Descriptors the process needs besides client connections: listening sockets, the event
# store's pool (added per setting), Redis, log files, the event loop's own.
RESERVED_DESCRIPTORS = 128


@dataclass(frozen=True)
class ConnectionLimits:
    header_timeout: float
    max_connections: int
    per_client: int
    body_timeout: float
    body_min_rate: float
    clients: ClientAddresses = field(default_factory=ClientAddresses)
    """Who a connection's client is: the rate limiter's rules (FAIRWAY_TRUSTED_PROXIES)."""


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


def problem_bytes(status: int, code: str, detail: str) -> bytes:
    title = ALL_CODES[code]
    problem = Problem(f"urn:fairway:problem:{code}", title, status, code, detail)
    return msgspec.json.encode(problem)


_holdings: WeakKeyDictionary[ServerState, Holdings[GuardedH11Protocol]] = WeakKeyDictionary()
"""Per server, who holds its connections (holdings.py)."""
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
        self.holdings = _holdings.setdefault(server_state, Holdings())
        self.header_deadline: asyncio.TimerHandle | None = None
        self.body_deadline: asyncio.TimerHandle | None = None
        self.body_began = 0.0
        self.body_bytes = 0
        """Bytes received since the request head, while its body is still coming."""
        self.streaming = False
        """Whether the response in progress is an event stream."""
        self.app = self._noting_streams(self.app)

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        client = None if self.client is None else self.limits.clients.peer(self.client[0])
        if not self._room_for(client):
            self._refuse_client()
            return
        if len(self.holdings) >= self.limits.max_connections and not self._make_room(client):
            self._refuse()
            return
        self.holdings.hold(self, client)
        self.holdings.rest(self)
        self._await_request_head()

    def data_received(self, data: bytes) -> None:
        if self.body_deadline is not None:
            self.body_bytes += len(data)
        super().data_received(data)
        if self.conn.their_state is h11.IDLE:
            self._await_request_head()
        else:
            self._cancel_header_deadline()
            self.holdings.busy(self)

    def handle_events(self) -> None:
        before = self.scope
        super().handle_events()
        if self.scope is not before and not self.transport.is_closing():
            self._request_began()
        if self.body_deadline is not None and self.conn.their_state is not h11.SEND_BODY:
            self._cancel_body_deadline()

    def on_response_complete(self) -> None:
        self.streaming = False
        super().on_response_complete()
        if self.conn.their_state is h11.IDLE and not self.transport.is_closing():
            self.holdings.rest(self)

    def connection_lost(self, exc: Exception | None) -> None:
        self.holdings.release(self)
        self._cancel_header_deadline()
        self._cancel_body_deadline()
        super().connection_lost(exc)

    def shutdown(self) -> None:
        if not self._end_stream(SHUTTING_DOWN):
            super().shutdown()

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

    def _request_began(self) -> None:
        """A request head has come: the connection now counts for the client it names (the
        same, unless a trusted proxy passes on requests of several), and its body, if it is
        still to come, has its deadline."""
        self.holdings.hold(self, self.limits.clients(self.scope))  # type: ignore[arg-type]
        self._cancel_body_deadline()
        if self.conn.their_state is h11.SEND_BODY:
            self.body_began, self.body_bytes = self.loop.time(), 0
            self.body_deadline = self.loop.call_later(self.limits.body_timeout, self._body_late)

    def _body_late(self) -> None:
        """The body's time is up, unless what it has sent since bought it more."""
        self.body_deadline = None
        if self.conn.their_state is not h11.SEND_BODY or self.transport.is_closing():
            return
        limits = self.limits
        allowed = self.body_began + limits.body_timeout + self.body_bytes / limits.body_min_rate
        left = allowed - self.loop.time()
        if left > 0:
            self.body_deadline = self.loop.call_later(left, self._body_late)
            return
        if (held := _evictions.admit("slow_body")) is not None:
            log.info("slow_body_cut", held_back=held)
        if self.cycle is None or self.cycle.response_started:
            self.transport.close()  # answered already: the rest of the body is not awaited
            return
        detail = (
            f"the request body did not arrive within {limits.body_timeout:g} s of its head "
            f"(and 1 s more per {limits.body_min_rate:g} bytes received)"
        )
        self._answer_instead(408, "body_too_slow", detail)

    def _make_room(self, newcomer: str | None) -> bool:
        """Close the connection idle the longest, else end one of the hog's (the client
        holding the most, if it holds two more than `newcomer`); False when neither can."""
        oldest = self.holdings.idle_longest()
        if oldest is not None:
            oldest._close()
            if (held := _evictions.admit("idle")) is not None:
                log.info("idle_connection_closed_for_room", held_back=held)
            return True
        hog = self.holdings.hog(newcomer)
        if hog is None:
            return False
        for held_by_hog in self.holdings.newest_first(hog):
            if held_by_hog._give_way():
                self.holdings.release(held_by_hog)
                if (held := _evictions.admit("hog")) is not None:
                    log.info("hog_connection_ended_for_room", client=hog, held_back=held)
                return True
        return False

    def _room_for(self, client: str | None) -> bool:
        """Whether `client` may hold one more connection, once its own connection idle the
        longest is closed if it holds its share."""
        if client is None or self.holdings.count(client) < self.limits.per_client:
            return True
        idle = self.holdings.idle_longest_of(client)
        if idle is None:
            return False
        idle._close()
        return True

    def _close(self) -> None:
        self.holdings.release(self)
        self.transport.close()

    def _give_way(self) -> bool:
        """End what this connection holds, for room: an event stream ends cleanly (its
        client resumes), a body still coming is answered 503. False for a request in a
        handler, which ends by itself."""
        if self._end_stream():
            return True
        cycle = self.cycle
        if cycle is None or cycle.response_started or self.conn.their_state is not h11.SEND_BODY:
            return False
        detail = "the server needed this connection for another client; retry shortly"
        self._answer_instead(503, "too_many_connections", detail, ((b"retry-after", b"1"),))
        return True

    def _end_stream(self, last: bytes = b"") -> bool:
        """End the event stream in progress cleanly, `last` its last message (the app writes
        whole messages, each in one write, so this one follows a whole one); False when no
        stream is in progress."""
        cycle = self.cycle
        if not self.streaming or cycle is None or cycle.response_complete:
            return False
        cycle.disconnected = True  # what the stream still writes goes nowhere
        if self.flow.write_paused:
            # Its client has stopped reading: the end would wait behind what it has not
            # read, and hold the descriptor, for as long as the client pleases.
            self.transport.abort()
            return True
        with contextlib.suppress(h11.LocalProtocolError):
            if last:
                self.transport.write(self.conn.send(h11.Data(data=last)))
            self.transport.write(self.conn.send(h11.EndOfMessage()))
        self.transport.close()
        return True

    def _refuse_client(self) -> None:
        cap = self.limits.per_client
        if (held := _refusals.admit("client")) is not None:
            log.warning("client_connection_refused", per_client=cap, held_back=held)
        detail = f"this client holds {cap} connections, the most one client may, all busy"
        self._send_problem(429, "too_many_client_connections", detail, ((b"retry-after", b"1"),))

    def _refuse(self) -> None:
        cap = self.limits.max_connections
        if (held := _refusals.admit("busy")) is not None:
            log.warning("connection_refused", max_connections=cap, held_back=held)
        detail = f"the server holds its maximum of {cap} connections, all busy; retry shortly"
        self._send_problem(503, "too_many_connections", detail, ((b"retry-after", b"1"),))

    def _answer_instead(
        self, status: int, code: str, detail: str, extra: tuple[tuple[bytes, bytes], ...] = ()
    ) -> None:
        """Answer the request in progress, whose response has not started, in place of the
        application: what it sends from now on goes nowhere, and its next read of the body
        hears that the client is gone."""
        self.scope[ANSWERED] = status  # type: ignore[literal-required]
        self.cycle.disconnected = True
        self.cycle.message_event.set()
        self._send_problem(status, code, detail, extra)

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

    def _cancel_body_deadline(self) -> None:
        if self.body_deadline is not None:
            self.body_deadline.cancel()
            self.body_deadline = None
