"""A row the code cannot decode stops nothing but its own stream (issue 17, item 4).

Given a game whose stream holds a row appended through `fairway_append` as the
application's role, of a type this release does not know (a newer release wrote it) or of a
known type whose data does not decode (garbage): reads of that game answer a 5xx problem
naming the stream and version, while the referee plays out another clocked game, the
projections follow it, a live stream of a third game hears its events, `GET /projections`
answers, the metric counts the row by kind, and the log line about it is written once."""

from __future__ import annotations

import logging
import time
import uuid
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from typing import Any

import httpx
import msgspec
import psycopg
import pytest
from psycopg import conninfo

from events.migrate import migrate
from service.ops.settings import Settings
from tests.api.players import open_table
from tests.api.server import running_server
from tests.api.sse import Stream
from tests.support.services import throwaway_database

pytestmark = pytest.mark.api

WAIT = 60.0
POISONS = {
    # kind: (type, schema version, data, status, code)
    "newer": ("game.paused", 1, '{"type":"game.paused","by":0}', 503, "event_from_newer_release"),
    "garbage": (
        "seat.claimed",
        1,
        '{"type":"seat.claimed","seat":"north"}',
        500,
        "event_unreadable",
    ),
}


@pytest.fixture
def poisonable(postgres_server_url: str, api_settings: Settings) -> Iterator[tuple[str, str]]:
    """A server of its own (read models in memory) on a database of its own, whose referee's
    clock runs an hour ahead: every clocked turn is out of time as soon as it begins."""
    with throwaway_database(postgres_server_url, "fairway_poison") as url:
        migrate(url)
        settings = msgspec.structs.replace(api_settings, database_url=url, referee_tick=0.05)
        ahead = timedelta(hours=1)
        with running_server(settings, referee_clock=lambda: datetime.now(UTC) + ahead) as base:
            yield base, url


def append_as_the_app(url: str, stream_id: str, expected: int, row: tuple[str, int, str]) -> int:
    """What the application's role may do: append through `fairway_append`, which chains the
    row (its hash verifies) but cannot know what this release will make of its data."""
    event_type, schema_version, data = row
    with psycopg.connect(
        conninfo.make_conninfo(url, options="-c role=fairway_app"), autocommit=True
    ) as conn:
        found = conn.execute(
            "SELECT stream_version FROM fairway_append(%s::text, %s::int4, %s::uuid, %s::text,"
            " %s::int4, %s::text, %s::text)",
            (stream_id, expected, uuid.uuid4(), event_type, schema_version, data, "{}"),
        ).fetchone()
    assert found is not None
    return int(found[0])


def eventually(read: Any, holds: Any, what: str) -> Any:
    deadline = time.monotonic() + WAIT
    while time.monotonic() < deadline:
        value = read()
        if holds(value):
            return value
        time.sleep(0.05)
    raise AssertionError(f"{what}: last seen {value!r}")


@pytest.mark.parametrize("kind", list(POISONS))
def test_an_undecodable_row_stops_its_own_stream_and_nothing_else(
    poisonable: tuple[str, str], kind: str, caplog: pytest.LogCaptureFixture
) -> None:
    base, url = poisonable
    event_type, schema_version, data, status, code = POISONS[kind]
    with httpx.Client(base_url=base, timeout=20) as http:
        created = http.post(
            "/games", json={"variant": "golf", "seats": 2, "options": {"turn_seconds": 5}}
        )
        poisoned = created.json()["game_id"]
        http.post(f"/games/{poisoned}/seats", json={"name": "ann"}).raise_for_status()
        assert http.get(f"/games/{poisoned}").status_code == 200  # cached by the server
        version = append_as_the_app(url, f"game:{poisoned}", 2, (event_type, schema_version, data))
        assert version == 3

        for path in (f"/games/{poisoned}", f"/games/{poisoned}/view", f"/games/{poisoned}"):
            refused = http.get(path)
            assert refused.status_code == status, refused.text
            assert refused.headers["content-type"].startswith("application/problem+json")
            problem = refused.json()
            assert problem["code"] == code
            assert f"stream game:{poisoned} version 3 ({event_type} v1)" in problem["detail"]
            assert ("Retry-After" in refused.headers) is (kind == "newer")

        # A live stream of another game hears its events, appended after the poison row.
        listened = http.post("/games", json={"variant": "golf", "seats": 2}).json()
        with Stream(base, f"/games/{listened['game_id']}/stream") as stream:
            stream.wait_for(1)
            for name in ("bea", "cy"):
                claim = http.post(f"/games/{listened['game_id']}/seats", json={"name": name})
                claim.raise_for_status()
            entries = stream.wait_for(3)
        assert [e["version"] for e in entries] == [1, 2, 3]

        # The referee plays another clocked game out; the projections follow it.
        played = open_table(http, "golf", 2, {"hands": 1, "turn_seconds": 5})
        eventually(
            played.public, lambda v: v["status"]["phase"] == "game_over", "the referee stopped"
        )
        final = http.get(f"/games/{played.game_id}").json()["version"]
        scoreboard = eventually(
            lambda: http.get(f"/games/{played.game_id}/scoreboard"),
            lambda r: r.status_code == 200 and r.json()["version"] == final,
            "the scoreboard stopped",
        )
        assert scoreboard.json()["status"]["phase"] == "game_over"
        lobby = eventually(
            lambda: http.get(f"/games/{listened['game_id']}/scoreboard"),
            lambda r: r.status_code == 200 and r.json()["version"] == 3,
            "the projections stopped",
        )
        assert [s["name"] for s in lobby.json()["seats"]] == ["bea", "cy"]

        projections = http.get("/projections")
        assert projections.status_code == 200, projections.text
        assert {p["state"] for p in projections.json()["projections"]} == {"running"}
        metrics = http.get("/metrics").text
        assert f'fairway_events_unreadable_total{{kind="{kind}"}} 1.0\n' in metrics

    reported = [
        r
        for r in caplog.records
        if r.name == "events.store.unreadable" and f"game:{poisoned} " in r.getMessage()
    ]
    assert len(reported) == 1, [r.getMessage() for r in reported]
    assert reported[0].levelno == logging.ERROR
    assert f"version=3 type={event_type} schema_version=1 kind={kind}" in reported[0].getMessage()
