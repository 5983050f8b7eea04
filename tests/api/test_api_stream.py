"""GET /games/{id}/stream: every event once, in order, redacted for its viewer; resumable;
across instances; heartbeats; and a stream is a good citizen of the server (never closed as
idle, never cut by the header timeout, never holding up a shutdown)."""

from __future__ import annotations

import random
import socket
from collections.abc import Iterator
from contextlib import ExitStack
from pathlib import Path
from typing import Any

import httpx
import msgspec
import pytest

from service.ops.settings import Settings
from tests.api.players import Table, concrete, open_table
from tests.api.server import running_server
from tests.api.sse import Stream

pytestmark = pytest.mark.api


def stream_path(table: Table) -> str:
    return f"/games/{table.game_id}/stream"


def step(table: Table, rng: random.Random) -> int | None:
    """One legal action by a seat to act; the game's version after it, None when over."""
    status = table.public()["status"]
    if status["phase"] == "game_over":
        return None
    seat = rng.choice(status["to_act"])
    action = concrete(rng.choice(table.me(seat)["legal_actions"]), rng)
    response = table.act(seat, action)
    assert response.status_code == 200, response.text
    return int(response.json()["version"])


def feed(table: Table, viewer: int | None, after: int) -> list[dict[str, Any]]:
    headers = {} if viewer is None else table.auth(viewer)
    page = table.http.get(
        f"/games/{table.game_id}/events", params={"after": after, "limit": 1000}, headers=headers
    )
    assert page.status_code == 200, page.text
    return [_streamed(entry) for entry in page.json()["events"]]


_READ_FROM_THE_STORE = ("event_id", "recorded_at", "metadata")


def _streamed(entry: dict[str, Any]) -> dict[str, Any]:
    """A feed entry as the stream sends it: the same event and chain hashes, without the
    fields the feed reads from the store for entries the viewer may know whole."""
    return entry | dict.fromkeys(_READ_FROM_THE_STORE)


def open_stream(base: str, table: Table, viewer: int | None, **params: Any) -> Stream:
    headers = {} if viewer is None else table.auth(viewer)
    stream = Stream(base, stream_path(table), headers=headers, params=params)
    assert stream.status == 200, stream.body
    return stream


def test_each_viewer_gets_every_event_once_in_order_redacted_as_the_feed_shows_it(
    http: httpx.Client, api_base: str
) -> None:
    table = open_table(http, "basketball", 3, {})
    rng = random.Random(5)
    viewers: list[int | None] = [None, 0, 1, 2]
    with ExitStack() as stack:
        streams = {v: stack.enter_context(open_stream(api_base, table, v)) for v in viewers}
        stream = streams[None]
        assert stream.response_headers["content-type"].startswith("text/event-stream")
        assert stream.response_headers["cache-control"] == "no-cache"
        version = int(http.get(f"/games/{table.game_id}").json()["version"])
        seen = 0
        while True:
            for viewer, stream in streams.items():
                received = stream.wait_for(version)
                assert received[seen:] == feed(table, viewer, seen), f"viewer {viewer}"
            seen = version
            after = step(table, rng)
            if after is None:
                break
            version = after
        for viewer, stream in streams.items():
            stream.ended.wait(30)
            assert stream.ended_cleanly, "the stream ends after game.ended"
            ids = [int(m.id or 0) for m in stream.messages]
            assert ids == list(range(1, version + 1)), f"viewer {viewer}: each event once"
            assert [m.event for m in stream.messages] == [
                m.entry["event"]["type"] for m in stream.messages
            ]
            assert stream.retry is not None
            assert stream.retry > 0
    assert stream.messages[-1].event == "game.ended"
    # Nothing is left to send: 204, which tells EventSource to stop reconnecting.
    done = http.get(stream_path(table), headers={"Last-Event-ID": str(version)})
    assert done.status_code == 204


def test_a_client_that_disconnects_and_resumes_gets_each_event_once(
    http: httpx.Client, api_base: str
) -> None:
    table = open_table(http, "golf", 2, {"hands": 1})
    rng = random.Random(7)
    with open_stream(api_base, table, 1) as first:
        version = int(http.get(f"/games/{table.game_id}").json()["version"])
        part = first.wait_for(version)
    for _ in range(4):
        version = step(table, rng) or version
    expected = feed(table, 1, len(part))
    resumed_header = Stream(
        api_base,
        stream_path(table),
        headers=table.auth(1) | {"Last-Event-ID": str(len(part))},
        params={"after": 0},  # the header wins: EventSource resends the first URL
    )
    resumed_query = Stream(
        api_base, stream_path(table), headers=table.auth(1), params={"after": len(part)}
    )
    with resumed_header, resumed_query:
        for resumed in (resumed_header, resumed_query):
            assert resumed.wait_for(version) == expected
            assert [int(m.id or 0) for m in resumed.messages] == list(
                range(len(part) + 1, version + 1)
            )


@pytest.mark.parametrize(
    ("headers", "params", "source"),
    [
        ({"Last-Event-ID": "seven"}, {}, "header"),
        ({"Last-Event-ID": "-1"}, {}, "header"),
        ({"Last-Event-ID": "999999"}, {}, "Last-Event-ID"),
        ({}, {"after": "-3"}, "query"),
        ({}, {"after": "500"}, "after"),
    ],
)
def test_a_bad_resume_point_gets_a_problem(
    http: httpx.Client, headers: dict[str, str], params: dict[str, str], source: str
) -> None:
    table = open_table(http, "golf", 2, {"hands": 1})
    response = http.get(stream_path(table), headers=headers, params=params)
    assert response.status_code == 400, response.text
    assert response.headers["content-type"] == "application/problem+json"
    problem = response.json()
    assert problem["code"] == "invalid_request"
    assert source in response.text


def test_a_stream_needs_a_game_and_a_valid_token(http: httpx.Client) -> None:
    missing = http.get("/games/0123456789abcdef/stream")
    assert missing.status_code == 404
    assert missing.json()["code"] == "game_not_found"
    table = open_table(http, "golf", 2, {"hands": 1})
    stranger = http.get(stream_path(table), headers={"Authorization": "Bearer nope"})
    assert stranger.status_code == 401
    assert stranger.json()["code"] == "invalid_token"


def test_head_answers_the_stream_headers_without_streaming(http: httpx.Client) -> None:
    table = open_table(http, "golf", 2, {"hands": 1})
    head = http.head(stream_path(table))
    assert head.status_code == 200
    assert head.headers["content-type"].startswith("text/event-stream")
    assert head.content == b""


@pytest.fixture
def second(api_settings: Settings, tmp_path: Path) -> Iterator[httpx.Client]:
    """A second instance of the service on the same database."""
    settings = msgspec.structs.replace(api_settings, data_dir=tmp_path)
    with running_server(settings) as base, httpx.Client(base_url=base, timeout=20) as client:
        yield client


def test_an_action_through_another_instance_reaches_the_stream(
    http: httpx.Client, api_base: str, second: httpx.Client
) -> None:
    table = open_table(http, "golf", 2, {"hands": 1})
    elsewhere = Table(second, table.game_id, table.creator, table.tokens)
    rng = random.Random(3)
    with open_stream(api_base, table, None) as watching, open_stream(api_base, table, 0) as seat:
        for _ in range(5):
            version = step(elsewhere, rng)
            assert version is not None
            assert watching.wait_for(version) == feed(table, None, 0)
            assert seat.wait_for(version) == feed(table, 0, 0)


def test_a_client_that_resumes_on_another_instance_gets_each_event_once(
    http: httpx.Client, api_base: str, second: httpx.Client
) -> None:
    table = open_table(http, "basketball", 2, {})
    rng = random.Random(12)
    with open_stream(api_base, table, 0) as first:
        version = step(table, rng)
        assert version is not None
        part = first.wait_for(version)
    for _ in range(4):
        version = step(table, rng) or version
    other = str(second.base_url).rstrip("/")
    headers = table.auth(0) | {"Last-Event-ID": str(len(part))}
    with Stream(other, stream_path(table), headers=headers) as resumed:
        rest = resumed.wait_for(version)
        assert [e["version"] for e in rest] == list(range(len(part) + 1, version + 1))
        assert rest == feed(Table(second, table.game_id, table.creator, table.tokens), 0, len(part))


@pytest.fixture(scope="module")
def tight(api_settings: Settings) -> Iterator[str]:
    """A server with a short heartbeat, a short header timeout and few connections."""
    settings = msgspec.structs.replace(
        api_settings, sse_heartbeat=0.2, header_timeout=0.5, max_connections=6
    )
    with running_server(settings) as base:
        yield base


def test_an_idle_stream_gets_heartbeats_and_outlives_the_header_timeout(tight: str) -> None:
    with httpx.Client(base_url=tight, timeout=20) as http:
        table = open_table(http, "golf", 2, {"hands": 1})
        with open_stream(tight, table, None) as stream:
            stream.wait_until(lambda s: s.comments.count("keep-alive") >= 5)  # > 1 s, quiet
            version = step(table, random.Random(1))
            assert version is not None
            assert stream.wait_for(version)[-1]["version"] == version


def test_a_stream_is_busy_not_idle_when_the_connection_cap_makes_room(tight: str) -> None:
    with httpx.Client(base_url=tight, timeout=20) as http:
        table = open_table(http, "golf", 2, {"hands": 1})
    host, port = tight.removeprefix("http://").split(":")
    with ExitStack() as stack:
        streams = [stack.enter_context(open_stream(tight, table, None)) for _ in range(3)]
        for _ in range(12):  # each new connection past the cap closes the one idle longest
            stack.enter_context(socket.create_connection((host, int(port))))
        with httpx.Client(base_url=tight, timeout=20) as http:
            table = Table(http, table.game_id, table.creator, table.tokens)
            version = step(table, random.Random(2))
        assert version is not None
        for stream in streams:
            assert stream.wait_for(version)[-1]["version"] == version
            assert not stream.ended.is_set()


def test_open_streams_do_not_hold_up_a_shutdown(api_settings: Settings) -> None:
    with running_server(api_settings) as base, httpx.Client(base_url=base, timeout=20) as http:
        table = open_table(http, "golf", 2, {"hands": 1})
        streams = [open_stream(base, table, v) for v in (None, 0)]
        for stream in streams:
            stream.wait_until(lambda s: s.messages)
        metrics = http.get("/metrics").text
        assert "fairway_sse_streams_open 2" in metrics
        assert "fairway_sse_events_delivered_total" in metrics
    for stream in streams:
        assert stream.ended.wait(30), "the server ended the stream when it shut down"
        assert stream.ended_cleanly
        stream.close()


def test_a_stream_counts_once_against_the_rate_limit_however_many_events_it_carries(
    api_settings: Settings,
) -> None:
    burst = 20
    settings = msgspec.structs.replace(
        api_settings,
        rate_limit_per_second=0.001,
        rate_limit_burst=burst,
        trusted_proxies=("127.0.0.1",),
    )
    watcher = {"X-Forwarded-For": "10.0.0.2"}
    with (
        running_server(settings) as base,
        httpx.Client(base_url=base, timeout=20, headers={"X-Forwarded-For": "10.0.0.1"}) as play,
        httpx.Client(base_url=base, timeout=20, headers=watcher) as reads,
    ):
        table = open_table(play, "golf", 2, {"hands": 1})
        with Stream(base, stream_path(table), headers=watcher) as stream:
            rng = random.Random(4)
            for _ in range(3):
                version = step(table, rng)
            assert version is not None
            assert len(stream.wait_for(version)) == version >= 8
            answers = [reads.get(f"/games/{table.game_id}").status_code for _ in range(burst)]
        assert answers == [200] * (burst - 1) + [429], "the connect took one token, no event did"


def test_a_subscriber_that_stops_reading_holds_up_no_other_and_later_gets_every_event_once(
    http: httpx.Client, api_base: str
) -> None:
    table = open_table(http, "tens-shedding", 2, {"turn_limit": 200})
    rng = random.Random(6)
    with (
        Stream(api_base, stream_path(table), paused=True) as stalled,
        open_stream(api_base, table, None) as reading,
    ):
        version = 0
        for _ in range(40):
            version = step(table, rng) or version
            assert reading.wait_for(version)[-1]["version"] == version
        stalled.resume()
        assert stalled.wait_for(version) == reading.entries()
        assert [int(m.id or 0) for m in stalled.messages] == list(range(1, version + 1))
