"""One client cannot take the service: it holds a share of the connections and a number of
event streams, a body it dribbles is cut with a 408, a stream ends after its lifetime and
resumes, and when the server is full the client holding the most gives way. Meanwhile
`/health`, `/ready` and every other client keep being answered.

Each client is a loopback address (Linux routes 127.0.0.0/8 to the server on 127.0.0.1), or,
behind a trusted proxy, what X-Forwarded-For names: the rate limiter's rules."""

from __future__ import annotations

import random
import socket
import threading
import time
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager

import httpx
import msgspec
import pytest

from service.http.connections import client_share
from service.ops.settings import Settings
from tests.api.players import open_table, play_step
from tests.api.server import running_server
from tests.api.sse import Stream
from tests.api.test_api_connections import (
    DEADLINE,
    address,
    assert_problem,
    connect,
    parse_response,
    read_until_closed,
    wait_until,
)

pytestmark = pytest.mark.api

HOG, OTHER, THIRD = "127.0.0.2", "127.0.0.3", "127.0.0.4"
BODY_LENGTH = 1000


def client_from(base: str, source: str) -> httpx.Client:
    transport = httpx.HTTPTransport(local_address=source)
    return httpx.Client(base_url=base, timeout=DEADLINE, transport=transport)


def lobby_game(http: httpx.Client) -> str:
    """A game left in its lobby: its stream would never end by itself."""
    created = http.post("/games", json={"variant": "golf", "seats": 2})
    assert created.status_code == 201, created.text
    return str(created.json()["game_id"])


def stream_of(base: str, game_id: str, source: str | None = None, **headers: str) -> Stream:
    return Stream(base, f"/games/{game_id}/stream", headers=headers, source=source)


def body_on_its_way(where: tuple[str, int], source: str) -> socket.socket | None:
    """A POST whose head asks to go on (`Expect: 100-continue`) and whose body has sent one
    byte of BODY_LENGTH; None when the server refused the connection."""
    sock = connect(where, source)
    head = (
        b"POST /games HTTP/1.1\r\nHost: fairway\r\nContent-Type: application/json\r\n"
        b"Content-Length: %d\r\nExpect: 100-continue\r\n\r\n" % BODY_LENGTH
    )
    try:
        sock.sendall(head)
        answer = sock.recv(100)
    except OSError:  # refused at once: the head came after the answer and the close
        answer = b""
    if not answer.startswith(b"HTTP/1.1 100 Continue"):
        sock.close()
        return None
    sock.sendall(b"{")
    return sock


@contextmanager
def dribbling(socks: list[socket.socket]) -> Iterator[None]:
    """Sends a space of each body's BODY_LENGTH - 1 to come on each socket, every 0.05 s,
    until the block ends; a socket the server has closed is left alone."""
    stop = threading.Event()

    def run() -> None:
        live = list(socks)
        for _ in range(BODY_LENGTH - 1):
            for sock in list(live):
                try:
                    sock.send(b" ")
                except OSError:
                    live.remove(sock)
            if stop.wait(0.05) or not live:
                return

    thread = threading.Thread(target=run, name="body-dribbler", daemon=True)
    thread.start()
    try:
        yield
    finally:
        stop.set()
        thread.join(DEADLINE)


def health(base: str, source: str = "127.0.0.1") -> int:
    with connect(address(base), source) as sock:
        sock.sendall(b"GET /health HTTP/1.1\r\nHost: fairway\r\nConnection: close\r\n\r\n")
        return parse_response(read_until_closed(sock))[0]


def test_one_address_opening_streams_and_bodies_without_end_leaves_room_for_everyone_else(
    api_settings: Settings,
) -> None:
    cap, streams_each = 120, 20
    settings = msgspec.structs.replace(
        api_settings,
        max_connections=cap,
        max_streams_per_client=streams_each,
        header_timeout=60.0,
        body_timeout=60.0,
    )
    share = client_share(settings.max_connections_per_client, cap)
    with (
        running_server(settings) as base,
        ExitStack() as held,
        client_from(base, OTHER) as other,
    ):
        where = address(base)
        game_id = lobby_game(other)
        # The hog asks for more than the whole server, twice over, and keeps what it gets.
        streams = [attempt_stream(base, game_id, HOG) for _ in range(cap + 30)]
        held.callback(lambda: [s.close() for s in streams if s is not None])
        bodies = [body_on_its_way(where, HOG) for _ in range(cap)]
        held.callback(lambda: [sock.close() for sock in bodies if sock is not None])
        held.enter_context(dribbling([sock for sock in bodies if sock is not None]))

        assert health(base) == 200
        assert httpx.get(base + "/ready", timeout=DEADLINE).status_code == 200
        table = open_table(other, "golf", 2, {"hands": 1})
        with stream_of(base, table.game_id, OTHER) as watching:
            assert watching.status == 200
            assert play_step(table, random.Random(1))
            version = int(other.get(f"/games/{table.game_id}").json()["version"])
            assert watching.wait_for(version)[-1]["version"] == version

        # What the hog got: its streams, then bodies up to its share, and problems after.
        statuses = [0 if s is None else s.status for s in streams]
        assert statuses.count(200) == streams_each
        assert statuses.count(429) == len(streams) - streams_each
        refused_stream = next(s for s in streams if s is not None and s.status == 429)
        refused_stream.ended.wait(DEADLINE)
        assert msgspec.json.decode(refused_stream.body)["code"] == "too_many_streams"
        assert refused_stream.response_headers["retry-after"]
        assert sum(sock is not None for sock in bodies) == share - streams_each
        with connect(where, HOG) as one_more:
            body = assert_problem(read_until_closed(one_more), 429, "too_many_client_connections")
        assert f"holds {share} connections" in body["detail"]
        assert not any(s.ended.is_set() for s in streams if s is not None and s.status == 200)


def attempt_stream(base: str, game_id: str, source: str) -> Stream | None:
    """A stream asked for; None when the server closed the connection before the request."""
    try:
        return stream_of(base, game_id, source)
    except OSError:
        return None


def test_when_the_server_is_full_the_client_holding_the_most_gives_way(
    api_settings: Settings,
) -> None:
    cap = 40
    settings = msgspec.structs.replace(
        api_settings, max_connections=cap, header_timeout=60.0, body_timeout=60.0
    )
    share = client_share(settings.max_connections_per_client, cap)
    with running_server(settings) as base, ExitStack() as held:
        where = address(base)
        with client_from(base, OTHER) as other:
            game_id = lobby_game(other)
        streams = [held.enter_context(stream_of(base, game_id, HOG)) for _ in range(share)]
        assert {s.status for s in streams} == {200}
        bodies = [body_on_its_way(where, (OTHER, THIRD)[i % 2]) for i in range(cap - share)]
        assert all(sock is not None for sock in bodies), "the house is full, all busy"
        held.callback(lambda: [sock.close() for sock in bodies if sock is not None])

        assert health(base) == 200

        newest = streams[-1]
        assert newest.ended.wait(DEADLINE), "the hog's newest stream gave way"
        assert newest.ended_cleanly, "ended as a stream ends: the client resumes"
        assert not any(s.ended.is_set() for s in streams[:-1])
        waiting = bodies[0]
        assert waiting is not None
        waiting.sendall(b'"variant": "golf", "seats": 2}'.ljust(BODY_LENGTH - 1))
        assert parse_response(read_answer(waiting))[0] == 201, "another client's body stayed"


def read_answer(sock: socket.socket) -> bytes:
    """One whole response with a Content-Length, on a connection kept alive."""
    sock.settimeout(DEADLINE)
    raw = b""
    while b"\r\n\r\n" not in raw or len(raw.partition(b"\r\n\r\n")[2]) < _length(raw):
        chunk = sock.recv(65536)
        assert chunk, f"closed before a whole answer: {raw!r}"
        raw += chunk
    return raw


def _length(raw: bytes) -> int:
    head = raw.partition(b"\r\n\r\n")[0].decode("latin-1").lower()
    return next(
        int(line.partition(":")[2])
        for line in head.split("\r\n")
        if line.startswith("content-length")
    )


def test_a_dribbled_body_is_answered_408_and_a_body_that_keeps_the_rate_is_not(
    api_settings: Settings,
) -> None:
    settings = msgspec.structs.replace(api_settings, body_timeout=1.0, body_min_rate=1024)
    with running_server(settings) as base, connect(address(base)) as sock:
        sock.sendall(
            b"POST /games HTTP/1.1\r\nHost: fairway\r\nContent-Type: application/json\r\n"
            b"Content-Length: %d\r\n\r\n{" % BODY_LENGTH
        )
        with dribbling([sock]):
            body = assert_problem(read_until_closed(sock), 408, "body_too_slow")
        assert "did not arrive within 1 s" in body["detail"]

        def counted() -> bool:
            metrics = httpx.get(base + "/metrics", timeout=DEADLINE).text
            line = 'fairway_http_requests_total{method="POST",route="/games",status="408"}'
            return any(row.startswith(line) for row in metrics.splitlines())

        wait_until(counted, "the 408 counted in the metrics")

        # 8 KiB in 1 KiB pieces, one every 0.25 s: longer than the body timeout, at four
        # times the floor: each piece buys a second.
        game = b'{"variant": "golf", "seats": 2}'.ljust(8 * 1024)
        with connect(address(base)) as steady:
            steady.sendall(
                b"POST /games HTTP/1.1\r\nHost: fairway\r\nContent-Type: application/json\r\n"
                b"Content-Length: %d\r\nConnection: close\r\n\r\n" % len(game)
            )
            for offset in range(0, len(game), 1024):
                steady.sendall(game[offset : offset + 1024])
                time.sleep(0.25)
            assert parse_response(read_until_closed(steady))[0] == 201


def test_a_stream_on_a_game_never_started_ends_after_its_lifetime_and_resumes(
    api_settings: Settings,
) -> None:
    settings = msgspec.structs.replace(api_settings, sse_lifetime=1.0)
    with running_server(settings) as base, httpx.Client(base_url=base, timeout=DEADLINE) as http:
        game_id = lobby_game(http)
        with stream_of(base, game_id) as first:
            assert first.status == 200
            assert first.ended.wait(DEADLINE), "the stream ended after its lifetime"
            assert first.ended_cleanly
            assert first.comments[-1] == "lifetime over; reconnect with Last-Event-ID"
            assert first.retry == 2000
            seen = first.entries()
        assert seen, "the lobby's events were sent"
        claimed = http.post(f"/games/{game_id}/seats", json={"name": "Ada"})
        assert claimed.status_code == 201, claimed.text
        last = seen[-1]["version"]
        with stream_of(base, game_id, **{"Last-Event-ID": str(last)}) as resumed:
            assert resumed.ended.wait(DEADLINE)
            assert [e["version"] for e in resumed.entries()] == [last + 1]
            assert resumed.entries()[0]["event"]["type"] == "seat.claimed"


def test_one_address_holds_so_many_streams_and_another_address_is_not_held_back(
    api_settings: Settings,
) -> None:
    settings = msgspec.structs.replace(api_settings, max_streams_per_client=2)
    with running_server(settings) as base, client_from(base, OTHER) as other:
        game_id = lobby_game(other)
        with ExitStack() as held:
            hogged = [held.enter_context(stream_of(base, game_id, HOG)) for _ in range(2)]
            assert [s.status for s in hogged] == [200, 200]
            with stream_of(base, game_id, HOG) as refused:
                refused.ended.wait(DEADLINE)
                assert refused.status == 429
                assert refused.response_headers["content-type"] == "application/problem+json"
                assert msgspec.json.decode(refused.body)["code"] == "too_many_streams"
            with stream_of(base, game_id, OTHER) as another:
                assert another.status == 200
            hogged[0].close()

            def slot_given_back() -> bool:
                with stream_of(base, game_id, HOG) as again:
                    return again.status == 200

            wait_until(slot_given_back, "a stream closed frees its slot")


def test_behind_a_trusted_proxy_streams_count_for_the_forwarded_client(
    api_settings: Settings,
) -> None:
    settings = msgspec.structs.replace(
        api_settings, max_streams_per_client=2, trusted_proxies=("127.0.0.1",)
    )
    with running_server(settings) as base, httpx.Client(base_url=base, timeout=DEADLINE) as http:
        game_id = lobby_game(http)
        first = {"X-Forwarded-For": "198.51.100.1"}
        with ExitStack() as held:
            for _ in range(2):
                assert held.enter_context(stream_of(base, game_id, **first)).status == 200
            with stream_of(base, game_id, **first) as refused:
                assert refused.status == 429
            second = {"X-Forwarded-For": "198.51.100.2"}
            with stream_of(base, game_id, **second) as another:
                assert another.status == 200
