"""The connection guard: what a connection, and a client, may cost, whatever parses the HTTP.

`ConnectionGuard` holds the policy that service/http/connections.py describes (deadlines for
a request's head and body, each client's share, the cap, who gives way for room, the end of
event streams at shutdown) and answers with problem details in bytes of its own. It is mixed
into a uvicorn HTTP protocol, which tells it three things about the request it is reading:
whether its head is still to come, whether its body is, and how to end a response body in
progress (the framing is the protocol's). The protocol calls the guard's `_guard_*` methods
at the moments they name.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any
from weakref import WeakKeyDictionary

import msgspec
from uvicorn.server import ServerState

from service.contract.problems import ALL_CODES, PROBLEM_JSON, Problem
from service.http.holdings import Holdings
from service.http.middleware import ANSWERED, ClientAddresses
from service.ops.logging import Repeats, log

if TYPE_CHECKING:
    from uvicorn.protocols.http.flow_control import FlowControl

STATUS_LINES = {
    400: b"HTTP/1.1 400 Bad Request\r\n",
    408: b"HTTP/1.1 408 Request Timeout\r\n",
    429: b"HTTP/1.1 429 Too Many Requests\r\n",
    503: b"HTTP/1.1 503 Service Unavailable\r\n",
}


@dataclass(frozen=True)
class ConnectionLimits:
    header_timeout: float
    max_connections: int
    per_client: int
    body_timeout: float
    body_min_rate: float
    clients: ClientAddresses = field(default_factory=ClientAddresses)
    """Who a connection's client is: the rate limiter's rules (FAIRWAY_TRUSTED_PROXIES)."""
    max_head: int = 64 * 1024
    """Bytes a request's target and headers may take; one more is a malformed request. (h11
    held a head still coming to 16 KiB but took any that came in one read, up to 256 KiB.)"""


def problem_bytes(status: int, code: str, detail: str) -> bytes:
    title = ALL_CODES[code]
    problem = Problem(f"urn:fairway:problem:{code}", title, status, code, detail)
    return msgspec.json.encode(problem)


_holdings: WeakKeyDictionary[ServerState, Holdings[ConnectionGuard]] = WeakKeyDictionary()
"""Per server, who holds its connections (holdings.py)."""
_evictions = Repeats()
_refusals = Repeats()


class ConnectionGuard:
    """The guard's state and policy, on a uvicorn protocol (which sets the attributes below)."""

    transport: asyncio.Transport
    loop: asyncio.AbstractEventLoop
    flow: FlowControl
    client: tuple[str, int] | None
    scope: Any
    cycle: Any
    app: Any

    def _head_pending(self) -> bool:
        """Whether no request is in progress: none yet, or its head not yet whole."""
        raise NotImplementedError

    def _body_pending(self) -> bool:
        """Whether the request in progress has its head but not yet its whole body."""
        raise NotImplementedError

    def _write_body_end(self, last: bytes) -> None:
        """Write `last` (if any) as the response body's last bytes, then its end."""
        raise NotImplementedError

    def _guard_init(self, limits: ConnectionLimits, server_state: ServerState) -> None:
        self.limits = limits
        self.holdings = _holdings.setdefault(server_state, Holdings())
        self.header_deadline: asyncio.TimerHandle | None = None
        self.body_deadline: asyncio.TimerHandle | None = None
        self.body_began = 0.0
        self.body_bytes = 0
        """Bytes received since the request head, while its body is still coming."""
        self.streaming = False
        """Whether the response in progress is an event stream."""
        self.app = self._noting_streams(self.app)

    def _guard_opened(self) -> None:
        """The connection has opened: hold it for its peer, or refuse it."""
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

    def _guard_read(self, began: bool) -> None:
        """Bytes were parsed; `began` when a request head came whole among them."""
        if began and not self.transport.is_closing():
            self._request_began()
        if self.body_deadline is not None and not self._body_pending():
            self._cancel_body_deadline()
        if self._head_pending():
            self._await_request_head()
        else:
            self._cancel_header_deadline()
            self.holdings.busy(self)

    def _guard_rest(self) -> None:
        """Nothing is in progress any more: the connection is idle."""
        if not self.transport.is_closing():
            self.holdings.rest(self)

    def _guard_closed(self) -> None:
        self.holdings.release(self)
        self._cancel_header_deadline()
        self._cancel_body_deadline()

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
        self.holdings.hold(self, self.limits.clients(self.scope))
        self._cancel_body_deadline()
        if self._body_pending():
            self.body_began, self.body_bytes = self.loop.time(), 0
            self.body_deadline = self.loop.call_later(self.limits.body_timeout, self._body_late)

    def _body_late(self) -> None:
        """The body's time is up, unless what it has sent since bought it more."""
        self.body_deadline = None
        if not self._body_pending() or self.transport.is_closing():
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
        if cycle is None or cycle.response_started or not self._body_pending():
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
        self._write_body_end(last)
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
        self.scope[ANSWERED] = status
        self.cycle.disconnected = True
        self.cycle.message_event.set()
        self._send_problem(status, code, detail, extra)

    def _send_problem(
        self, status: int, code: str, detail: str, extra: tuple[tuple[bytes, bytes], ...] = ()
    ) -> None:
        """Answer with a problem and close: the connection's last bytes, whatever state its
        parser is in."""
        body = problem_bytes(status, code, detail)
        head = [
            (b"content-type", PROBLEM_JSON.encode()),
            (b"content-length", str(len(body)).encode()),
            (b"connection", b"close"),
            *extra,
        ]
        lines = b"".join(name + b": " + value + b"\r\n" for name, value in head)
        self.transport.write(STATUS_LINES[status] + lines + b"\r\n" + body)
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
        if self._head_pending():
            self.transport.close()

    def _cancel_body_deadline(self) -> None:
        if self.body_deadline is not None:
            self.body_deadline.cancel()
            self.body_deadline = None
