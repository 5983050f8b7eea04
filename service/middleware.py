"""One ASGI middleware: request id, rate limit, access log and metrics for every request."""

from __future__ import annotations

import hashlib
import math
import re
import time
import uuid
from typing import Any

import msgspec
import structlog
from litestar.types import ASGIApp, Message, Receive, Scope, Send

from service.logging import log
from service.metrics import Metrics
from service.problems import ALL_CODES, PROBLEM_JSON, Problem

_REQUEST_ID = re.compile(r"^[A-Za-z0-9._-]{1,64}$")
_UNLIMITED = {"/health", "/ready", "/metrics"}


class TokenBuckets:
    """A token bucket per client: `rate` tokens a second, at most `burst` saved up."""

    def __init__(self, rate: float, burst: int, clock: Any = time.monotonic) -> None:
        self.rate, self.burst, self.clock = rate, burst, clock
        self.buckets: dict[str, tuple[float, float]] = {}

    def take(self, client: str) -> float:
        """0 if the request may go on, else the seconds until a token is available."""
        now = self.clock()
        tokens, last = self.buckets.get(client, (float(self.burst), now))
        tokens = min(float(self.burst), tokens + (now - last) * self.rate)
        if tokens >= 1:
            self.buckets[client] = (tokens - 1, now)
            if len(self.buckets) > 100_000:
                self.buckets.clear()
            return 0.0
        self.buckets[client] = (tokens, now)
        return (1 - tokens) / self.rate


def _client_key(scope: Scope) -> str:
    for name, value in scope.get("headers", ()):
        if name == b"authorization":
            return "t:" + hashlib.sha256(value).hexdigest()[:16]
    client = scope.get("client")
    return "a:" + (client[0] if client else "unknown")


def make_middleware(metrics: Metrics, buckets: TokenBuckets) -> Any:
    def middleware(app: ASGIApp) -> ASGIApp:
        async def handle(scope: Scope, receive: Receive, send: Send) -> None:
            if scope["type"] != "http":
                await app(scope, receive, send)
                return
            path: str = scope["path"]
            request_id = next(
                (v.decode() for k, v in scope.get("headers", ()) if k == b"x-request-id"), ""
            )
            if not _REQUEST_ID.match(request_id):
                request_id = uuid.uuid4().hex
            structlog.contextvars.bind_contextvars(request_id=request_id)
            started = time.perf_counter()
            status = 500

            async def send_with_id(message: Message) -> None:
                nonlocal status
                if message["type"] == "http.response.start":
                    status = message["status"]
                    message["headers"] = [
                        *message.get("headers", []),
                        (b"x-request-id", request_id.encode()),
                    ]
                await send(message)

            try:
                wait = 0.0 if path in _UNLIMITED else buckets.take(_client_key(scope))
                if wait:
                    await _too_many(send_with_id, path, wait)
                else:
                    await app(scope, receive, send_with_id)
            finally:
                elapsed = time.perf_counter() - started
                route = _route_template(scope)
                metrics.observe_request(scope["method"], route, status, elapsed)
                log.info(
                    "request",
                    method=scope["method"],
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
    body = msgspec.json.encode(
        Problem(
            type="urn:fairway:problem:rate_limited",
            title=ALL_CODES["rate_limited"],
            status=429,
            code="rate_limited",
            detail=f"too many requests from this client; retry after {retry_after} s",
            instance=path,
        )
    )
    await send(
        {
            "type": "http.response.start",
            "status": 429,
            "headers": [
                (b"content-type", PROBLEM_JSON.encode()),
                (b"content-length", str(len(body)).encode()),
                (b"retry-after", retry_after.encode()),
            ],
        }
    )
    await send({"type": "http.response.body", "body": body})
