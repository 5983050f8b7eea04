"""The fast path of a live stream's deliveries: a chunk straight to the connection's transport.

Through ASGI, each move's bytes reach a stream's client by a wake-up of the stream's task,
Litestar's stream loop and its exception middleware's wrapper, the service middleware's
wrapper, the connection guard's wrapper and uvicorn's chunked framing; a thousand streams of
one game pay that a thousand times per move. The connection (service/http/connections.py)
offers each GET on HTTP/1.1 a `Direct`, `scope["extensions"][DIRECT]["writer"]`: through it the
game's pump (service/live/fanout.py) writes an HTTP chunk it framed once, for every stream
sharing the bytes, straight to the transport.

`write` refuses (and the pump hands the bytes to the stream's outbox, the ASGI way, instead)
unless the response in progress is an event stream whose head has been sent with chunked
framing and that is not over, cut or given up: the client has not gone, the guard has not
ended it (shutdown, room for another client), and the transport is taking bytes (a client
that has stopped reading pauses it: its bytes then wait in the outbox, at most `MAX_PENDING`
of them). The response's end (its last chunk) is never written here: the stream's own ASGI
response writes it, or the guard when it ends the stream. Whoever writes through `Direct`
writes whole SSE messages, one chunk each, and only while nothing of the stream's is on its
way through ASGI (the outbox's `parked`): the order on the wire is the order of the writes.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from service.http.connections import GuardedProtocol

DIRECT = "fairway.direct"
"""The scope extension a GET on HTTP/1.1 is offered (absent elsewhere: under a test client,
HTTP/1.0, HEAD)."""


class Direct:
    """One request's fast path to its connection's transport."""

    __slots__ = ("cycle", "protocol")

    def __init__(self, protocol: GuardedProtocol, cycle: Any) -> None:
        self.protocol: GuardedProtocol | None = protocol
        self.cycle = cycle

    @staticmethod
    def frame(data: bytes) -> bytes:
        """`data` as one HTTP/1.1 chunk (framed once, written to every stream it is for)."""
        return b"%x\r\n%s\r\n" % (len(data), data)

    def write(self, framed: bytes) -> bool:
        """Write a chunk `frame` made, now, in one write; False (nothing written) when the
        response cannot take it this way."""
        protocol, cycle = self.protocol, self.cycle
        if (
            protocol is None
            or not protocol.streaming
            or cycle.chunked_encoding is not True
            or cycle.response_complete
            or cycle.disconnected
            or protocol.flow.write_paused
            or protocol.transport.is_closing()
        ):
            return False
        protocol.transport.write(framed)
        return True

    def close(self) -> None:
        """The request is over: nothing more goes this way (and no cycle of references stays
        between the connection and the scope)."""
        self.protocol = self.cycle = None
