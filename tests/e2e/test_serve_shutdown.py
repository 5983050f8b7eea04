"""`fairway serve` (the real command) stopping on SIGTERM, as an orchestrator stops it: it takes
no new connection, finishes the request in flight, ends its event streams with a reconnect
hint, and exits once FAIRWAY_SHUTDOWN_GRACE is over even if a request never finishes."""

from __future__ import annotations

import json
import signal
import socket
import subprocess
import time
from pathlib import Path
from urllib.parse import urlsplit

import httpx
import pytest

from tests.api.players import open_table
from tests.api.sse import Stream
from tests.api.test_api_stream import stream_path
from tests.e2e.test_cli import serving

pytestmark = pytest.mark.e2e

GRACE = 4.0
MARGIN = 20.0
"""Seconds past the grace for the application's own shutdown (the store closed, the log
written) and the interpreter's exit, on a machine busy with other tests."""
BODY = json.dumps({"variant": "golf", "seats": 2}).encode()


def begin_post(base: str) -> socket.socket:
    """POST /games whose body is held back: returns once the handler waits for it (the
    server sends `100 Continue` when the application first reads the body)."""
    url = urlsplit(base)
    sock = socket.create_connection((url.hostname, url.port), timeout=60)
    head = (
        f"POST /games HTTP/1.1\r\nHost: {url.netloc}\r\nContent-Type: application/json\r\n"
        f"Content-Length: {len(BODY)}\r\nExpect: 100-continue\r\n\r\n"
    )
    sock.sendall(head.encode())
    heard = b""
    while b"\r\n\r\n" not in heard:
        chunk = sock.recv(4096)
        assert chunk, f"closed before 100 Continue: {heard!r}"
        heard += chunk
    assert heard.startswith(b"HTTP/1.1 100"), heard
    return sock


def response(sock: socket.socket) -> bytes:
    received = b""
    while chunk := sock.recv(65536):
        received += chunk
    return received


def refused(base: str) -> bool:
    url = urlsplit(base)
    try:
        socket.create_connection((url.hostname, url.port), timeout=5).close()
    except ConnectionRefusedError:
        return True
    return False


@pytest.mark.parametrize("workers", [1, 2], ids=["one-process-embedded", "two-workers-postgres"])
def test_sigterm_finishes_requests_in_flight_ends_streams_with_a_hint_and_exits_in_time(
    tmp_path: Path, workers: int, request: pytest.FixtureRequest
) -> None:
    env = {
        "FAIRWAY_SHUTDOWN_GRACE": str(GRACE),
        # only the grace may end the request that never sends its body
        "FAIRWAY_BODY_TIMEOUT": "600",
    }
    if workers > 1:  # the supervisor passes SIGTERM on to each worker
        env["DATABASE_URL"] = request.getfixturevalue("served_database")
    with serving(tmp_path, env=env, args=("--workers", str(workers))) as served:
        with httpx.Client(base_url=served.base, timeout=20) as http:
            table = open_table(http, "golf", 2, {"hands": 1})
        stream = Stream(served.base, stream_path(table))
        stream.wait_until(lambda s: s.retry is not None)  # the stream's first message came
        deadline = time.monotonic() + 120
        while sum('"started"' in line for line in served.stderr_lines()) < workers:
            assert time.monotonic() < deadline, "not every worker started"
            time.sleep(0.1)
        finishing = begin_post(served.base)
        hanging = begin_post(served.base)

        served.process.send_signal(signal.SIGTERM)
        stopped_at = time.monotonic()

        assert stream.ended.wait(30)
        assert stream.ended_cleanly, "the stream's body was ended, not cut"
        last = stream.messages[-1]
        assert (last.event, last.id, json.loads(last.data)) == (
            "reconnect",
            None,
            {"reason": "shutdown"},
        )
        assert stream.retry == 1000
        assert "shutting down; reconnect with Last-Event-ID" in stream.comments
        stream.close()

        deadline = time.monotonic() + 30
        while not refused(served.base):  # new connections are no longer taken
            assert time.monotonic() < deadline, "still accepting after SIGTERM"
            time.sleep(0.05)

        finishing.sendall(BODY)  # the request in flight is finished, then its connection
        answer = response(finishing)  # read until the server closes it
        assert answer.startswith(b"HTTP/1.1 201"), answer[:200]
        assert b'"game_id"' in answer

        try:
            code = served.process.wait(timeout=GRACE + MARGIN)
        except subprocess.TimeoutExpired:
            pytest.fail(f"still running {GRACE + MARGIN} s after SIGTERM")
        # uvicorn re-raises the signal once it has shut down (one process); the supervisor
        # of several returns.
        assert code in (0, -signal.SIGTERM)
        assert time.monotonic() - stopped_at >= GRACE, "it waited for the hanging request"
        cut = response(hanging)  # past the grace: answered, never a 500
        assert cut.startswith(b"HTTP/1.1 503"), cut[:200]
        assert b'"code":"shutting_down"' in cut
        assert b"retry-after: 1" in cut.lower()
        finishing.close()
        hanging.close()
    stopped = [line for line in served.stderr_lines() if '"stopped"' in line]
    assert len(stopped) == workers, "each worker's lifespan ended"
