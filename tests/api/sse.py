"""A Server-Sent Events client for the tests: one stream read in a thread over a raw socket
(h11 parses the HTTP), each message parsed as the SSE specification says."""

from __future__ import annotations

import contextlib
import json
import socket
import threading
import time
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlencode, urlsplit

import h11

WAIT = 30.0
"""Generous seconds for an event to arrive; nothing here times the server's speed."""


@dataclass
class Message:
    id: str | None
    event: str | None
    data: str

    @property
    def entry(self) -> dict[str, Any]:
        return json.loads(self.data)  # type: ignore[no-any-return]


@dataclass
class Stream:
    """GET `path` as an event stream; read in the background until closed."""

    base: str
    path: str
    headers: dict[str, str] = field(default_factory=dict)
    params: dict[str, Any] = field(default_factory=dict)
    status: int = 0
    response_headers: dict[str, str] = field(default_factory=dict)
    messages: list[Message] = field(default_factory=list)
    comments: list[str] = field(default_factory=list)
    retry: int | None = None
    body: bytes = b""
    """The body of a response that is not a stream (a problem), once it has ended."""
    ended_cleanly: bool = False
    """The server ended the body properly (the last chunk) rather than cutting it."""
    raw: bytearray = field(default_factory=bytearray)
    """The body as received, its chunked framing undone."""
    compared: int = 0
    """For a test's use: the version up to which it has checked the messages."""
    paused: bool = False
    """Read nothing, with a small receive buffer, until `resume()`: a client that has stopped
    reading."""
    source: str | None = None
    """The loopback address to connect from (127.0.0.2, ...): another client to the server."""

    def __post_init__(self) -> None:
        self.started = threading.Event()
        self.ended = threading.Event()
        self.changed = threading.Condition()
        self.reading = threading.Event()
        if not self.paused:
            self.reading.set()
        url = urlsplit(self.base)
        self.sock = socket.socket()
        if self.paused:
            self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 2048)
        self.sock.settimeout(WAIT)
        if self.source is not None:
            self.sock.bind((self.source, 0))
        self.sock.connect((url.hostname, url.port))
        target = self.path + ("?" + urlencode(self.params) if self.params else "")
        head = [("Host", url.netloc), ("Accept", "text/event-stream"), *self.headers.items()]
        self.conn = h11.Connection(our_role=h11.CLIENT)
        self.sock.sendall(self.conn.send(h11.Request(method="GET", target=target, headers=head)))
        self.sock.sendall(self.conn.send(h11.EndOfMessage()))
        self.thread = threading.Thread(target=self._read, daemon=True)
        self.thread.start()
        if not self.paused and not self.started.wait(WAIT):
            raise AssertionError(f"no response to GET {target}")

    def resume(self) -> None:
        self.reading.set()

    def __enter__(self) -> Stream:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        with contextlib.suppress(OSError):
            self.sock.shutdown(socket.SHUT_RDWR)
        self.thread.join(WAIT)
        self.sock.close()

    def entries(self) -> list[dict[str, Any]]:
        with self.changed:
            return [m.entry for m in self.messages]

    def wait_for(self, version: int, timeout: float = WAIT) -> list[dict[str, Any]]:
        """The entries received once one of `version` (or later) has; fails after `timeout`."""
        deadline = time.monotonic() + timeout
        with self.changed:
            while not self.messages or int(self.messages[-1].id or 0) < version:
                left = deadline - time.monotonic()
                if left <= 0 or self.ended.is_set():
                    got = self.messages[-1].id if self.messages else None
                    raise AssertionError(f"stream {self.path}: wanted version {version}, got {got}")
                self.changed.wait(min(left, 0.5))
            return [m.entry for m in self.messages]

    def wait_until(self, predicate: Any, timeout: float = WAIT) -> None:
        deadline = time.monotonic() + timeout
        with self.changed:
            while not predicate(self):
                left = deadline - time.monotonic()
                if left <= 0:
                    raise AssertionError(f"stream {self.path}: condition not met in {timeout} s")
                self.changed.wait(min(left, 0.5))

    def _read(self) -> None:
        pending = b""
        fields: dict[str, str] = {}
        data: list[str] = []
        self.reading.wait()
        try:
            while True:
                event = self.conn.next_event()
                if event is h11.NEED_DATA:
                    try:
                        chunk = self.sock.recv(65536)
                    except OSError:
                        chunk = b""
                    self.conn.receive_data(chunk)
                    if not chunk:
                        break
                    continue
                if isinstance(event, h11.Response):
                    self.status = event.status_code
                    self.response_headers = {
                        k.decode().lower(): v.decode() for k, v in event.headers
                    }
                    self.started.set()
                elif isinstance(event, h11.Data):
                    self.raw += event.data
                    pending += event.data
                    if not self.response_headers.get("content-type", "").startswith(
                        "text/event-stream"
                    ):
                        self.body += event.data
                        continue
                    *lines, rest = pending.split(b"\n")
                    pending = rest
                    for raw in lines:
                        self._line(raw.decode().rstrip("\r"), fields, data)
                elif isinstance(event, h11.EndOfMessage):
                    self.ended_cleanly = True
                    break
                elif isinstance(event, h11.ConnectionClosed):
                    break
        except h11.RemoteProtocolError:
            pass
        finally:
            self.started.set()
            self.ended.set()
            with self.changed:
                self.changed.notify_all()

    def _line(self, line: str, fields: dict[str, str], data: list[str]) -> None:
        if not line:  # a blank line dispatches the message
            if data:
                with self.changed:
                    self.messages.append(
                        Message(fields.get("id"), fields.get("event"), "\n".join(data))
                    )
                    self.changed.notify_all()
            fields.clear()
            data.clear()
            return
        if line.startswith(":"):
            with self.changed:
                self.comments.append(line[1:].strip())
                self.changed.notify_all()
            return
        name, _, value = line.partition(":")
        value = value.removeprefix(" ")
        if name == "data":
            data.append(value)
        elif name == "retry":
            self.retry = int(value)
        else:
            fields[name] = value
