"""FAIRWAY_SPECTATOR_DELAY: spectators see the game N seat actions behind on every read path
(summary, view, events, scores, stream), seats see it live, and a finished game is shown
whole.

The oracle counts the actions the test itself takes: a spectator's horizon is the version
the game stood at before the N-th most recent of them. The view it should see is folded by
the domain from the events stored in PostgreSQL up to that version."""

from __future__ import annotations

import random
from collections.abc import Iterator
from typing import Any

import httpx
import msgspec
import psycopg
import pytest

from domain.variants import fold
from events.codec import default_codec
from events.schema.common import GameStarted
from service.ops.settings import Settings
from tests.api.players import Table, concrete, open_table
from tests.api.server import running_server
from tests.api.sse import Stream

pytestmark = pytest.mark.api

DELAY = 2
CODEC = default_codec()


@pytest.fixture(scope="module")
def delayed(api_settings: Settings) -> Iterator[str]:
    with running_server(msgspec.structs.replace(api_settings, spectator_delay=DELAY)) as base:
        yield base


def spectator_view_at(database_url: str, game_id: str, version: int) -> Any:
    with psycopg.connect(database_url, autocommit=True) as conn:
        rows = conn.execute(
            "SELECT type, schema_version, data::text FROM events WHERE stream_id = %s "
            "AND stream_version <= %s ORDER BY stream_version",
            (f"game:{game_id}", version),
        ).fetchall()
    events = [CODEC.decode(kind, schema, data) for kind, schema, data in rows]
    started = next(i for i, e in enumerate(events) if isinstance(e, GameStarted))
    decider, state = fold(events[started:])
    as_json = msgspec.json.decode(
        msgspec.json.encode((decider.view(state, None), decider.status(state)))
    )
    return as_json[0], as_json[1]


def check_spectator_paths(
    http: httpx.Client, table: Table, horizon: int, database_url: str, stream: Stream
) -> int:
    """Checks each path at `horizon`; returns it (what the stream has been compared up to)."""
    game = f"/games/{table.game_id}"
    summary = http.get(game)
    assert summary.json()["version"] == horizon
    assert summary.headers["etag"] == f'"{horizon}"'
    assert http.get(game, headers={"If-None-Match": f'"{horizon}"'}).status_code == 304

    public = http.get(f"{game}/view").json()
    assert public["version"] == horizon
    view, status = spectator_view_at(database_url, table.game_id, horizon)
    assert public["view"] == view
    assert public["status"] == status
    assert summary.json()["status"] == status

    events = http.get(f"{game}/events", params={"limit": 1000}).json()
    assert events["version"] == horizon
    assert [e["version"] for e in events["events"]] == list(range(1, horizon + 1))
    assert http.get(f"{game}/events", params={"after": horizon}).json()["events"] == []

    scores = http.get(f"{game}/scores").json()
    assert scores["version"] == horizon
    assert scores["totals"] == status["totals"]

    streamed = stream.wait_for(horizon)
    assert [e["version"] for e in streamed] == list(range(1, horizon + 1)), "not past the horizon"
    # Sent as it became visible, each event as the feed shows it at the same horizon (less
    # the fields only the feed reads from the store: event id, time, metadata).
    store_only = dict.fromkeys(("event_id", "recorded_at", "metadata"))
    fed = [entry | store_only for entry in events["events"]]
    assert streamed[stream.compared :] == fed[stream.compared :]
    stream.compared = horizon
    return horizon


def test_spectators_see_the_game_n_actions_behind_on_every_path_and_seats_see_it_live(
    delayed: str, database_url: str
) -> None:
    with httpx.Client(base_url=delayed, timeout=20) as http:
        table = open_table(http, "golf", 2, {"hands": 1, "turn_limit": 3})
        rng = random.Random(17)
        version = int(
            http.get(f"/games/{table.game_id}/events", headers=table.auth(0)).json()["version"]
        )
        before_actions: list[int] = []
        path = f"/games/{table.game_id}/stream"
        with Stream(delayed, path) as stream:
            check_spectator_paths(http, table, version, database_url, stream)
            for _ in range(300):
                seat = table.me(0)["status"]["to_act"][0]
                action = concrete(rng.choice(table.me(seat)["legal_actions"]), rng)
                answer = table.act(seat, action)
                assert answer.status_code == 200, answer.text
                before_actions.append(version)
                version = answer.json()["version"]
                if answer.json()["status"]["phase"] == "game_over":
                    break
                horizon = before_actions[max(0, len(before_actions) - DELAY)]
                check_spectator_paths(http, table, horizon, database_url, stream)
                for seat_viewer in (0, 1):  # seats are never held back
                    mine = http.get(f"/games/{table.game_id}/me", headers=table.auth(seat_viewer))
                    assert mine.json()["version"] == version
                    feed = http.get(
                        f"/games/{table.game_id}/events", headers=table.auth(seat_viewer)
                    )
                    assert feed.json()["version"] == version
            else:
                pytest.fail("the game did not end")
            # Over: everything is shown, to spectators too.
            check_spectator_paths(http, table, version, database_url, stream)
            assert len(before_actions) > DELAY
