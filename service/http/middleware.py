"""One ASGI middleware: request id, client, rate limit (service/http/ratelimit.py), access log
and metrics for every request; and the rules that name a request's client, which every limit
per client uses."""

from __future__ import annotations

import asyncio
import functools
import ipaddress
import math
import re
import secrets
import time
from collections.abc import Callable, Iterable
from typing import Any

import msgspec
import structlog
from litestar.enums import ScopeType
from litestar.types import ASGIApp, Message, Receive, Scope, Send

from service.contract.problems import ALL_CODES, PROBLEM_JSON, Problem
from service.http.ratelimit import RateLimit
from service.ops.logging import log
from service.ops.metrics import Metrics

_REQUEST_ID = re.compile(r"^[A-Za-z0-9._-]{1,64}$")
_UNLIMITED = {"/health", "/ready", "/metrics"}
HEAD = "fairway.head"
"""Set in the scope of a HEAD request, which is served as GET: a response without end (an
event stream) answers its headers at once."""
CLIENT = "fairway.client"
"""Set in the scope of every request: its client (`ClientAddresses`), for the limits per
client."""
ANSWERED = "fairway.answered"
"""Set in the scope by the connection (service/http/connections.py) when it answered the
request itself, with the status it sent: what the application sends after that goes nowhere,
and the log and metrics count this status."""
_SLOT = "fairway.stream_slot"
"""Set in the scope of a stream that holds a slot (`StreamSlots`): its client."""


Network = ipaddress.IPv4Network | ipaddress.IPv6Network
Address = ipaddress.IPv4Address | ipaddress.IPv6Address


class ClientAddresses:
    """Who sent a request: the network peer, or, when the peer is a trusted proxy, the
    right-most address in X-Forwarded-For that is not itself a trusted proxy.

    Everything left of that address was written by the client and is never believed. An
    IPv6 client is its /64, the block one subscriber is usually given.
    """

    def __init__(self, trusted_proxies: Iterable[str] = ()) -> None:
        self.trusted: tuple[Network, ...] = tuple(
            ipaddress.ip_network(proxy.strip(), strict=False) for proxy in trusted_proxies
        )

    def __call__(self, scope: Scope) -> str:
        connected = scope.get("client")
        if not connected:
            return "unknown"
        if not self.trusted:  # the common case: the peer is the client
            return _peer_key(connected[0])
        peer = _address(connected[0])
        if peer is None:
            return "unknown"
        client = peer
        if self._is_trusted(peer):
            forwarded = b",".join(v for k, v in scope.get("headers", ()) if k == b"x-forwarded-for")
            for hop in reversed(forwarded.decode("latin-1").split(",") if forwarded else []):
                address = _address(hop)
                if address is None:
                    break  # a value no proxy of ours wrote: keep the hop that passed it on
                client = address
                if not self._is_trusted(address):
                    break
        return _key(client)

    def peer(self, host: str) -> str | None:
        """The client a connection from `host` counts for before a request names one: the
        peer itself, or None for a trusted proxy, whose requests each name their client."""
        if not self.trusted:
            return _peer_key(host)
        address = _address(host)
        if address is None:
            return "unknown"
        return None if self._is_trusted(address) else _key(address)

    def _is_trusted(self, address: Address) -> bool:
        return any(address in network for network in self.trusted)


class StreamSlots:
    """The live streams each client holds open, at most `per_client` each.

    A handler takes a slot before its stream begins; the middleware gives it back when the
    request ends, however it ends (a stream the client left before its first message never
    runs its own cleanup)."""

    def __init__(self, per_client: int) -> None:
        self.per_client = per_client
        self.held: dict[str, int] = {}

    def take(self, scope: Scope) -> bool:
        """A slot for the request's client, noted in `scope`; False when it holds them all."""
        client = scope[CLIENT]  # type: ignore[literal-required]
        if self.held.get(client, 0) >= self.per_client:
            return False
        self.held[client] = self.held.get(client, 0) + 1
        scope[_SLOT] = client  # type: ignore[literal-required]
        return True

    def give_back(self, scope: Scope) -> None:
        client = scope.pop(_SLOT, None)  # type: ignore[misc]
        if client is not None:
            left = self.held.pop(client) - 1
            if left:
                self.held[client] = left


def _key(client: Address) -> str:
    if client.version == 6:
        return str(ipaddress.ip_network(f"{client}/64", strict=False))
    return str(client)


@functools.lru_cache(maxsize=4096)
def _peer_key(peer: str) -> str:
    """The bucket of a peer address, parsed once per address while it stays in use."""
    address = _address(peer)
    return "unknown" if address is None else _key(address)


def _address(text: str) -> Address | None:
    text = text.strip()
    if text.startswith("[") and "]" in text:  # [v6]:port
        text = text[1 : text.index("]")]
    elif text.count(":") == 1:  # v4:port
        text = text.partition(":")[0]
    try:
        address = ipaddress.ip_address(text)
    except ValueError:
        return None
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped:
        return address.ipv4_mapped
    return address


def make_middleware(
    metrics: Metrics,
    limiter: RateLimit,
    streams: StreamSlots,
    trusted_proxies: Iterable[str] = (),
) -> Callable[[ASGIApp], ASGIApp]:
    """Wraps the whole application, outside routing: unmatched paths and methods are limited
    and logged too, and HEAD is answered as GET without the body."""
    client_of = ClientAddresses(trusted_proxies)

    def middleware(app: ASGIApp) -> ASGIApp:
        async def handle(scope: Scope, receive: Receive, send: Send) -> None:
            if scope["type"] != ScopeType.HTTP:
                await app(scope, receive, send)
                return
            path: str = scope["path"]
            method: str = scope["method"]
            served = scope  # the connection's own scope, where it notes an ANSWERED
            if method == "HEAD":
                scope = {**scope, "method": "GET", HEAD: True}  # type: ignore[assignment]
            request_id = next(
                (v.decode("latin-1") for k, v in scope.get("headers", ()) if k == b"x-request-id"),
                "",
            )
            if not _REQUEST_ID.match(request_id):
                # 32 random hex digits, as uuid4().hex gave, at a fifth of its cost
                request_id = secrets.token_hex(16)
            structlog.contextvars.bind_contextvars(request_id=request_id)
            started = time.perf_counter()
            status = 500
            responded = False

            async def send_with_id(message: Message) -> None:
                nonlocal status, responded
                if message["type"] == "http.response.start":
                    status, responded = message["status"], True
                    message["headers"] = [
                        *message.get("headers", []),
                        (b"x-request-id", request_id.encode()),
                    ]
                elif method == "HEAD" and message["type"] == "http.response.body":
                    message = {**message, "body": b""}
                await send(message)

            client = scope[CLIENT] = client_of(scope)  # type: ignore[literal-required]
            try:
                wait = 0.0 if path in _UNLIMITED else await limiter.take(client)
                if wait:
                    await _too_many(send_with_id, path, wait)
                else:
                    await app(scope, receive, send_with_id)
            except asyncio.CancelledError:
                # Only the server cancels a request: its shutdown grace is over
                # (FAIRWAY_SHUTDOWN_GRACE). Say so, rather than the 500 uvicorn would send.
                if responded or served.get(ANSWERED):
                    raise
                log.warning("request_cut_at_shutdown", method=method, path=path)
                await _problem(
                    send_with_id,
                    path,
                    503,
                    "shutting_down",
                    "the server is stopping; retry, another instance will answer",
                    "1",
                )
                status = 503
            finally:
                streams.give_back(scope)
                status = int(served.get(ANSWERED, status))  # type: ignore[call-overload]
                elapsed = time.perf_counter() - started
                route = _route_template(scope)
                metrics.observe_request(method, route, status, elapsed)
                log.info(
                    "request",
                    method=method,
                    path=path,
                    status=status,
                    ms=round(elapsed * 1000, 2),
                )
                structlog.contextvars.unbind_contextvars("request_id")

        return handle

    return middleware


def _route_template(scope: Scope) -> str:
    return str(scope.get("path_template") or "unmatched")


async def _too_many(send: Any, path: str, wait: float) -> None:
    retry_after = str(max(1, math.ceil(wait)))
    detail = f"too many requests from this client; retry after {retry_after} s"
    await _problem(send, path, 429, "rate_limited", detail, retry_after)


async def _problem(
    send: Any, path: str, status: int, code: str, detail: str, retry_after: str
) -> None:
    body = msgspec.json.encode(
        Problem(
            type=f"urn:fairway:problem:{code}",
            title=ALL_CODES[code],
            status=status,
            code=code,
            detail=detail,
            instance=path,
        )
    )
    await send(
        {
            "type": "http.response.start",
            "status": status,
            "headers": [
                (b"content-type", PROBLEM_JSON.encode()),
                (b"content-length", str(len(body)).encode()),
                (b"retry-after", retry_after.encode()),
            ],
        }
    )
    await send({"type": "http.response.body", "body": body})
