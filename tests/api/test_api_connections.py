"""Connections that cost the server without asking it anything: silent ones, ones that dribble
their headers, too many at once, and requests h11 cannot parse. The service keeps answering;
the idle are closed after the header timeout; one over the cap is refused with a problem.
(One client that takes more than its share: test_api_hogs.py.)"""

from __future__ import annotations

import json
import socket
import threading
import time
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from typing import Any
from urllib.parse import urlsplit

import httpx
import msgspec
import pytest

from service.contract.problems import ALL_CODES
from service.ops.settings import Settings
from tests.api.server import running_server

pytestmark = pytest.mark.api

SILENT = 600
DRIBBLERS = 20
DEADLINE = 30.0
"""Generous seconds for the server to act on a timeout; nothing here times its speed."""
CAP = 40
CLIENTS = [f"127.0.0.{n}" for n in range(2, 6)]
"""Loopback addresses the full house is spread over (Linux routes 127.0.0.0/8 to the server
on 127.0.0.1), each far below its share of the cap: the cap itself is what is tested."""
BODY_TO_FOLLOW = (
    b"POST /games HTTP/1.1\r\nHost: fairway\r\nContent-Type: application/json\r\n"
    b"Content-Length: 100\r\nExpect: 100-continue\r\n\r\n"
)
"""A request whose body never comes: the connection is busy, not idle."""


def address(base: str) -> tuple[str, int]:
    host, _, port = urlsplit(base).netloc.partition(":")
    return host, int(port)


def connect(where: tuple[str, int], source: str = "127.0.0.1") -> socket.socket:
    """A connection to the server from the loopback address `source`: one client each."""
    return socket.create_connection(where, timeout=DEADLINE, source_address=(source, 0))


def spread(where: tuple[str, int], count: int) -> list[socket.socket]:
    """`count` connections, from each of CLIENTS in turn."""
    return [connect(where, CLIENTS[i % len(CLIENTS)]) for i in range(count)]


def read_until_closed(sock: socket.socket, timeout: float = DEADLINE) -> bytes:
    """Everything the server sends before it closes the connection."""
    sock.settimeout(timeout)
    chunks = []
    while True:
        try:
            chunk = sock.recv(65536)
        except ConnectionResetError:
            break
        if not chunk:
            break
        chunks.append(chunk)
    return b"".join(chunks)


def parse_response(raw: bytes) -> tuple[int, dict[str, str], dict[str, Any]]:
    head, _, body = raw.partition(b"\r\n\r\n")
    status_line, *header_lines = head.decode("latin-1").split("\r\n")
    headers = {}
    for line in header_lines:
        name, _, value = line.partition(":")
        headers[name.strip().lower()] = value.strip()
    return int(status_line.split()[1]), headers, json.loads(body)


def assert_problem(raw: bytes, status: int, code: str) -> dict[str, Any]:
    got, headers, body = parse_response(raw)
    assert got == status, raw
    assert headers["content-type"] == "application/problem+json"
    assert body["status"] == status
    assert body["code"] == code
    assert body["type"] == f"urn:fairway:problem:{code}"
    assert body["title"] == ALL_CODES[code]
    assert body["detail"]
    return body


@contextmanager
def dribbling(sockets: list[socket.socket]) -> Iterator[set[int]]:
    """Sends a request head one byte at a time on each socket; yields the indexes of those
    the server has closed, filled in as it happens."""
    head = b"GET /health HTTP/1.1\r\nHost: fairway\r\n" + b"X-Slow: " + b"a" * 10_000
    closed: set[int] = set()
    stop = threading.Event()

    def run() -> None:
        for offset in range(len(head)):
            for index, sock in enumerate(sockets):
                if index in closed:
                    continue
                try:
                    if sock.recv(1, socket.MSG_DONTWAIT) == b"":
                        closed.add(index)
                        continue
                except BlockingIOError:
                    pass
                except OSError:
                    closed.add(index)
                    continue
                try:
                    sock.send(head[offset : offset + 1])
                except OSError:
                    closed.add(index)
            if stop.wait(0.1) or len(closed) == len(sockets):
                return

    thread = threading.Thread(target=run, name="dribbler", daemon=True)
    thread.start()
    try:
        yield closed
    finally:
        stop.set()
        thread.join(timeout=DEADLINE)


def wait_until(condition: Any, what: str) -> None:
    deadline = time.monotonic() + DEADLINE
    while not condition():
        assert time.monotonic() < deadline, f"{what} within {DEADLINE} s"
        time.sleep(0.05)


@pytest.mark.slow
def test_silent_and_dribbling_connections_are_closed_while_the_service_answers(
    api_settings: Settings,
) -> None:
    settings = msgspec.structs.replace(
        api_settings,
        header_timeout=1.0,
        keep_alive_timeout=1.0,
        max_connections=2000,
        max_connections_per_client=2000,  # all from one address: the timeouts close them
    )
    with running_server(settings) as base, ExitStack() as stack:
        where = address(base)
        opened = time.monotonic()
        silent = [stack.enter_context(socket.create_connection(where)) for _ in range(SILENT)]
        slow = [stack.enter_context(socket.create_connection(where)) for _ in range(DRIBBLERS)]
        dribbled_closed = stack.enter_context(dribbling(slow))

        with httpx.Client(base_url=base, timeout=DEADLINE) as http:
            assert http.get("/health").status_code == 200
            created = http.post("/games", json={"variant": "golf", "seats": 2})
            assert created.status_code == 201, created.text

        kept_alive = stack.enter_context(socket.create_connection(where))
        kept_alive.sendall(b"GET /health HTTP/1.1\r\nHost: fairway\r\n\r\n")
        answered = read_until_closed(kept_alive)
        assert answered.startswith(b"HTTP/1.1 200"), answered

        for sock in silent:
            assert read_until_closed(sock) == b""
        wait_until(lambda: len(dribbled_closed) == DRIBBLERS, "every dribbler closed")
        print(f"{SILENT} silent, {DRIBBLERS} dribbling: closed {time.monotonic() - opened:.1f} s")


def test_a_new_connection_above_the_cap_closes_the_one_idle_longest(
    api_settings: Settings,
) -> None:
    settings = msgspec.structs.replace(api_settings, header_timeout=60.0, max_connections=CAP)
    with running_server(settings) as base, ExitStack() as stack:
        where = address(base)
        idle = [stack.enter_context(sock) for sock in spread(where, CAP)]

        assert httpx.get(base + "/health", timeout=DEADLINE).status_code == 200
        game = {"variant": "golf", "seats": 2}
        created = httpx.post(base + "/games", json=game, timeout=DEADLINE)
        assert created.status_code == 201, created.text

        assert read_until_closed(idle[0]) == b""


def test_a_connection_above_the_cap_is_refused_with_a_problem_when_none_is_idle(
    api_settings: Settings,
) -> None:
    settings = msgspec.structs.replace(
        api_settings, header_timeout=60.0, body_timeout=60.0, max_connections=CAP
    )
    with running_server(settings) as base, ExitStack() as stack:
        where = address(base)
        busy = [stack.enter_context(sock) for sock in spread(where, CAP)]
        for sock in busy:
            sock.settimeout(DEADLINE)
            sock.sendall(BODY_TO_FOLLOW)
        for sock in busy:
            assert sock.recv(100).startswith(b"HTTP/1.1 100 Continue"), "a request in progress"

        with connect(where, CLIENTS[0]) as extra:  # no client holds more than this one's
            refused = read_until_closed(extra)
        body = assert_problem(refused, 503, "too_many_connections")
        assert f"maximum of {CAP} connections" in body["detail"]
        assert parse_response(refused)[1]["retry-after"] == "1"

        for sock in busy[:5]:
            sock.close()

        def answers() -> bool:
            try:
                return httpx.get(base + "/health", timeout=DEADLINE).status_code == 200
            except httpx.TransportError:
                return False

        wait_until(answers, "/health answers once connections are freed")


@pytest.mark.parametrize(
    "request_bytes",
    [
        b"GARBAGE\r\n\r\n",
        b"GET /health HTTP/1.1\r\nHost fairway\r\n\r\n",
    ],
    ids=["request line", "header without a colon"],
)
def test_a_request_h11_cannot_parse_gets_a_problem(api_base: str, request_bytes: bytes) -> None:
    with socket.create_connection(address(api_base)) as sock:
        sock.sendall(request_bytes)
        body = assert_problem(read_until_closed(sock), 400, "malformed_request")
    assert body["detail"] == "the request line or headers are not valid HTTP/1.1"


def test_a_request_head_past_64_kib_gets_a_problem(api_base: str) -> None:
    """A request's head is held to 64 KiB: a bigger one is not buffered on."""
    head = b"GET /health HTTP/1.1\r\nHost: fairway\r\n" + b"X-Big: " + b"a" * 70_000 + b"\r\n\r\n"
    with socket.create_connection(address(api_base)) as sock:
        sock.sendall(head)
        assert_problem(read_until_closed(sock), 400, "malformed_request")
    assert httpx.get(api_base + "/health", timeout=DEADLINE).status_code == 200
