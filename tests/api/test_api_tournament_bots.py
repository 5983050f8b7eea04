"""Bot players in tournaments over real HTTP: the organiser registers them by name and level,
every refusal (an unknown level, anyone but the organiser, a taken name) is a problem that
stores nothing; and a tournament of 8 bots and no person runs every round to the end by
itself (the bot runner plays each table, the round keeper closes each round), its standings
mark every bot and are those of its events, its audit passes, and the ratings mark its bots
and leave them out with `bots=false`."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import httpx
import psycopg
import pytest

pytestmark = pytest.mark.api

Rows = Callable[[str], list[tuple[Any, ...]]]


@pytest.fixture
def rows(database_url: str) -> Rows:
    """A stream's stored rows straight from PostgreSQL, bypassing the service."""

    def read(stream: str) -> list[tuple[Any, ...]]:
        with psycopg.connect(database_url, autocommit=True) as conn:
            return conn.execute(
                "SELECT stream_version, event_id, type, data::text FROM events "
                "WHERE stream_id = %s ORDER BY stream_version",
                (stream,),
            ).fetchall()

    return read


def opened(http: httpx.Client, **changes: Any) -> tuple[str, str]:
    body = {"name": "Bot night", "variant": "golf", "table_size": 4, "rounds": 2}
    body |= {"options": {"hands": 1}} | changes
    created = http.post("/tournaments", json=body)
    assert created.status_code == 201, created.text
    return created.json()["tournament_id"], created.json()["organiser_token"]


def register(
    http: httpx.Client, tid: str, token: str, name: str, bot: str | None = None
) -> httpx.Response:
    body = {"name": name} if bot is None else {"name": name, "bot": bot}
    return http.post(
        f"/tournaments/{tid}/players", json=body, headers={"Authorization": f"Bearer {token}"}
    )


def test_the_organiser_registers_a_bot_and_every_refusal_stores_nothing(
    http: httpx.Client, rows: Rows
) -> None:
    tid, organiser = opened(http)
    stream = f"tournament:{tid}"
    added = register(http, tid, organiser, "Robo", "greedy")
    assert added.status_code == 201, added.text
    assert added.json() | {"version": 0} == {
        "tournament_id": tid,
        "name": "Robo",
        "token": None,
        "version": 0,
        "bot": "greedy",
    }
    person = register(http, tid, organiser, "Ada")
    assert person.json()["bot"] is None
    ada = person.json()["token"]
    players = http.get(f"/tournaments/{tid}").json()["players"]
    assert [(p["name"], p["bot"]) for p in players] == [("Robo", "greedy"), ("Ada", None)]

    def refused(response: httpx.Response, status: int, code: str) -> dict[str, Any]:
        assert response.status_code == status, response.text
        assert response.headers["content-type"].startswith("application/problem+json")
        assert response.json()["code"] == code
        return response.json()  # type: ignore[no-any-return]

    before = rows(stream)
    problem = refused(register(http, tid, organiser, "Hal", "genius"), 422, "unknown_bot_level")
    assert "random, greedy" in problem["detail"]
    refused(register(http, tid, ada, "Hal", "greedy"), 403, "not_organiser")
    refused(register(http, tid, "not-a-token", "Hal", "greedy"), 401, "invalid_token")
    refused(register(http, tid, organiser, "Robo", "random"), 409, "name_taken")
    refused(register(http, tid, organiser, "Ada", "random"), 409, "name_taken")
    refused(register(http, tid, organiser, "Hal", ""), 422, "invalid_request")
    refused(
        http.post(
            f"/tournaments/{tid}/players",
            json={"name": "Hal", "bot": 3},
            headers={"Authorization": f"Bearer {organiser}"},
        ),
        422,
        "invalid_request",
    )
    # No token acts for a bot: the organiser sets no seed for it, nor does anyone.
    seed = f"/tournaments/{tid}/players/Robo/seed"
    auth = {"Authorization": f"Bearer {organiser}"}
    refused(http.put(seed, json={"seed": "mine"}, headers=auth), 403, "not_this_player")
    assert rows(stream) == before, "not one refusal stored anything"
