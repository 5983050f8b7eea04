"""GET /games/{id}/stream on the fast path (service/http/direct.py): the game's pump writes
each move straight to the connections of the streams waiting for it. Streams on it get the
bytes a stream written through ASGI gets, each event once, in order; a client that stops
reading falls back to its outbox, later gets every event once, and is back on the fast path;
streams that end by their lifetime or by a shutdown end cleanly with their last message; an
HTTP/1.0 client, never offered the fast path, gets the same stream as before."""

from __future__ import annotations

import asyncio
import contextlib
import random
import socket
import threading
from collections import Counter
from collections.abc import Iterator
from contextlib import ExitStack
from typing import Any

import httpx
import msgspec
import pytest

from service.http.direct import Direct
from service.ops.settings import Settings
from tests.api.players import Table, open_table
from tests.api.server import running_server
from tests.api.sse import WAIT, Stream
from tests.api.test_api_stream import feed, open_stream, step, stream_path

pytestmark = pytest.mark.api


class Writes:
    """The fast-path writes the server (in a thread of this process) tries, by the port its
    client connected from: how many went straight to the client, how many it refused."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.straight: Counter[int] = Counter()
        self.refused: Counter[int] = Counter()
        self.squeezed: set[int] = set()
        write = Direct.write

        def counted(direct: Direct, framed: bytes) -> bool:
            client = direct.protocol.client if direct.protocol is not None else None
            port = client[1] if client else 0
            if port in self.squeezed and direct.protocol is not None:
                self.squeezed.discard(port)
                squeeze(direct.protocol.transport)
            wrote = write(direct, framed)
            (self.straight if wrote else self.refused)[port] += 1
            return wrote

        monkeypatch.setattr(Direct, "write", counted)


def squeeze(transport: asyncio.Transport) -> None:
    """Small buffers for this connection on the server's side (in the server's loop): its
    client, once it stops reading, fills them with a few dozen moves rather than megabytes
    (Linux grows a loopback connection's send buffer to 4 MiB)."""
    transport.get_extra_info("socket").setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, 4096)
    transport.set_write_buffer_limits(high=8192)


@pytest.fixture
def writes(monkeypatch: pytest.MonkeyPatch) -> Writes:
    return Writes(monkeypatch)


@pytest.fixture(scope="module")
def local_base(api_settings: Settings) -> Iterator[str]:
    """A server in a thread of this process, whose writes `Writes` counts (the session's
    shared server runs in a process of its own)."""
    with running_server(api_settings) as base:
        yield base


@pytest.fixture
def local_http(local_base: str) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=local_base, timeout=WAIT) as client:
        yield client


def port_of(stream: Stream) -> int:
    return int(stream.sock.getsockname()[1])


class Http10Stream:
    """The stream asked for on HTTP/1.0 over a raw socket, read whole in a thread."""

    def __init__(self, base: str, path: str, headers: dict[str, str]) -> None:
        host, port = base.removeprefix("http://").split(":")
        self.sock = socket.create_connection((host, int(port)), timeout=WAIT)
        self.port = int(self.sock.getsockname()[1])
        lines = "".join(f"{name}: {value}\r\n" for name, value in headers.items())
        self.sock.sendall(f"GET {path} HTTP/1.0\r\nHost: {host}\r\n{lines}\r\n".encode())
        self.received = bytearray()
        self.changed = threading.Condition()
        self.thread = threading.Thread(target=self._read, daemon=True)
        self.thread.start()

    def _read(self) -> None:
        while True:
            try:
                chunk = self.sock.recv(65536)
            except OSError:
                chunk = b""
            with self.changed:
                self.received += chunk
                self.changed.notify_all()
            if not chunk:
                return

    def body(self) -> bytes:
        """The body so far, its chunked framing (uvicorn frames it even for HTTP/1.0) undone."""
        with self.changed:
            raw = bytes(self.received)
        head, _, rest = raw.partition(b"\r\n\r\n")
        if b"transfer-encoding: chunked" not in head.lower():
            return rest
        body = bytearray()
        while b"\r\n" in rest:
            size, _, rest = rest.partition(b"\r\n")
            length = int(size, 16)
            if length == 0 or len(rest) < length + 2:
                break
            body += rest[:length]
            rest = rest[length + 2 :]
        return bytes(body)

    def wait_for(self, version: int) -> None:
        marker = b"id: %d\n" % version
        with self.changed:
            ok = self.changed.wait_for(lambda: marker in self.received, timeout=WAIT)
        assert ok, f"HTTP/1.0 stream: no version {version}"

    def close(self) -> None:
        with contextlib.suppress(OSError):
            self.sock.shutdown(socket.SHUT_RDWR)
        self.thread.join(WAIT)
        self.sock.close()


def ids(raw: bytes) -> list[int]:
    return [int(line[4:]) for line in raw.split(b"\n") if line.startswith(b"id: ")]


def moved(table: Table, rng: random.Random, streams: list[Any], times: int) -> int:
    """`times` moves, each awaited by every stream; the game's version after them."""
    version = 0
    for _ in range(times):
        version = step(table, rng) or version
        for stream in streams:
            stream.wait_for(version)
    return version


def test_streams_of_one_game_on_the_fast_path_get_the_outbox_path_s_bytes_each_event_once(
    local_http: httpx.Client, local_base: str, writes: Writes
) -> None:
    table = open_table(local_http, "tens-shedding", 2, {"turn_limit": 200})
    with ExitStack() as stack:
        fast: dict[int | None, list[Stream]] = {}
        plain: dict[int | None, Http10Stream] = {}
        for viewer in (None, 0, 1):
            fast[viewer] = [
                stack.enter_context(open_stream(local_base, table, v)) for v in [viewer] * 3
            ]
            headers = {} if viewer is None else table.auth(viewer)
            plain[viewer] = Http10Stream(local_base, stream_path(table), headers)
            stack.callback(plain[viewer].close)
        every = [s for group in fast.values() for s in group]
        start = feed(table, None, 0)[-1]["version"]
        for stream in [*every, *plain.values()]:  # the game's history: what follows is live
            stream.wait_for(start)
        version = moved(table, random.Random(11), [*every, *plain.values()], 12)
        for viewer, group in fast.items():
            expected = feed(table, viewer, 0)
            for stream in group:
                assert stream.wait_for(version) == expected
                assert ids(bytes(stream.raw)) == list(range(1, version + 1)), "once, in order"
                assert writes.straight[port_of(stream)] > 0, "the pump wrote to it straight"
                assert bytes(stream.raw) == plain[viewer].body(), "the bytes ASGI writes"
            assert plain[viewer].port not in writes.straight, "HTTP/1.0: no fast path"
            assert plain[viewer].port not in writes.refused


def test_a_client_that_stops_reading_falls_back_then_gets_every_event_once_and_the_fast_path(
    local_http: httpx.Client, local_base: str, writes: Writes
) -> None:
    table = open_table(local_http, "golf", 2, {"hands": 100})
    rng = random.Random(12)
    with (
        Stream(local_base, stream_path(table), paused=True) as stalled,
        open_stream(local_base, table, None) as reading,
    ):
        writes.squeezed.add(port_of(stalled))
        version = 0
        for _ in range(1000):  # until its connection, full, has refused a straight write
            version = step(table, rng) or version
            reading.wait_for(version)
            if writes.refused[port_of(stalled)]:
                break
        assert writes.refused[port_of(stalled)], "a client that stops reading is not written to"
        assert writes.straight[port_of(stalled)], "it was written to straight while it read"
        version = moved(table, rng, [reading], 150)  # past MAX_PENDING: it falls behind
        stalled.resume()
        assert stalled.wait_for(version) == reading.entries()
        assert ids(bytes(stalled.raw)) == list(range(1, version + 1)), "once, in order"
        before = writes.straight[port_of(stalled)]
        version = moved(table, rng, [reading, stalled], 1)
        assert writes.straight[port_of(stalled)] > before, "back on the fast path, caught up"
        assert bytes(stalled.raw) == bytes(reading.raw)


def test_streams_on_the_fast_path_end_cleanly_at_their_lifetime_and_at_shutdown(
    api_settings: Settings, writes: Writes
) -> None:
    settings = msgspec.structs.replace(api_settings, sse_lifetime=6.0)
    rng = random.Random(13)
    with running_server(settings) as base, httpx.Client(base_url=base, timeout=WAIT) as http:
        table = open_table(http, "tens-shedding", 2, {"turn_limit": 200})
        with open_stream(base, table, None) as lived:
            lived.wait_until(lambda s: s.messages)
            version = moved(table, rng, [lived], 3)
            assert writes.straight[port_of(lived)] > 0
            assert lived.ended.wait(WAIT), "the stream ended after its lifetime"
            assert lived.ended_cleanly, "with its last chunk"
            assert lived.comments[-1] == "lifetime over; reconnect with Last-Event-ID"
            assert lived.raw.endswith(b"retry: 2000\n\n")
            assert ids(bytes(lived.raw)) == list(range(1, version + 1))
        stopped = open_stream(base, table, None)
        stopped.wait_until(lambda s: s.messages)
        version = moved(table, rng, [stopped], 3)
        assert writes.straight[port_of(stopped)] > 0
    assert stopped.ended.wait(WAIT), "the server ended the stream when it shut down"
    stopped.close()
    assert stopped.ended_cleanly, "with its last chunk"
    assert stopped.messages[-1].event == "reconnect"
    assert ids(bytes(stopped.raw)) == list(range(1, version + 1)), "once, in order"
