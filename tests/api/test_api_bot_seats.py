"""Bot seats in the lobby over HTTP: seated at creation or by the creator before the start,
shown as bots (their level) by every view, refused as the issue asks with the stored events
as they were (read from the rows)."""

from __future__ import annotations

import time
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

import httpx
import psycopg
import pytest

from domain.variants import BOT_KINDS

pytestmark = pytest.mark.api

Rows = Callable[[str], list[tuple[Any, ...]]]


def bearer(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


def create(http: httpx.Client, **body: Any) -> dict[str, Any]:
    response = http.post("/games", json={"variant": "golf", "seats": 3} | body)
    assert response.status_code == 201, response.text
    return dict(response.json())


def test_bots_seated_at_creation_are_shown_as_bots_and_hold_no_token(
    http: httpx.Client, stored: Rows
) -> None:
    bots = [{"seat": 1, "level": "greedy"}, {"seat": 2, "level": "random", "name": "Rando"}]
    opened = create(http, bots=bots)
    game = opened["game_id"]
    assert opened["version"] == 3
    summary = http.get(f"/games/{game}").json()
    seats = [(s["name"], s["bot"]) for s in summary["seats"]]
    assert seats == [(None, None), ("greedy bot 1", "greedy"), ("Rando", "random")]
    assert summary["rematch_of"] is None
    assert summary["rematch"] is None
    public = http.get(f"/games/{game}/view").json()
    assert [s["bot"] for s in public["seats"]] == [None, "greedy", "random"]
    feed = http.get(f"/games/{game}/events").json()["events"]
    claims = [e["event"] for e in feed if e["event"]["type"] == "seat.claimed"]
    assert [(c["seat"], c["bot"]) for c in claims] == [(1, "greedy"), (2, "random")]
    assert all("token_hash" not in c for c in claims)
    rows = [row for row in stored(game) if row[2] == "seat.claimed"]
    assert all('"token_hash":""' in row[3] for row in rows)


def test_a_retried_create_with_bots_answers_the_same_game(http: httpx.Client) -> None:
    body = {"variant": "golf", "seats": 2, "bots": [{"seat": 1, "level": "greedy"}]}
    key = {"Idempotency-Key": "bots-create-retry-0123456789"}
    first = http.post("/games", json=body, headers=key)
    again = http.post("/games", json=body, headers=key)
    assert first.status_code == again.status_code == 201
    assert first.json()["game_id"] == again.json()["game_id"]
    other = http.post("/games", json=body | {"bots": [{"seat": 0, "level": "greedy"}]}, headers=key)
    assert other.status_code == 422
    assert other.json()["code"] == "idempotency_key_reused"


def test_the_creator_seats_a_bot_in_a_free_seat(http: httpx.Client) -> None:
    opened = create(http)
    game = opened["game_id"]
    seated = http.post(
        f"/games/{game}/seats/2/bot",
        json={"level": "greedy"},
        headers=bearer(opened["creator_token"]),
    )
    assert seated.status_code == 201, seated.text
    assert seated.json()["seats"][2] == {
        "seat": 2,
        "name": "greedy bot 2",
        "bot": "greedy",
        "resigned": None,
        "turn_deadline": None,
    }
    assert seated.json()["receipt"] is not None


@pytest.mark.parametrize(
    ("case", "status", "code"),
    [
        ("unknown level", 422, "unknown_bot_level"),
        ("seat taken", 409, "seat_taken"),
        ("game started", 409, "game_already_started"),
        ("not the creator", 403, "not_creator"),
        ("no such seat", 422, "invalid_seat"),
    ],
)
def test_a_refused_bot_seat_leaves_the_stored_events_as_they_were(
    http: httpx.Client, stored: Rows, case: str, status: int, code: str
) -> None:
    opened = create(http, seats=2)
    game, creator = opened["game_id"], opened["creator_token"]
    claimed = http.post(f"/games/{game}/seats", json={"name": "Ada", "seat": 0}).json()
    seat, level, token = 1, "greedy", creator
    if case == "unknown level":
        level = "grandmaster"
    elif case == "seat taken":
        seat = 0
    elif case == "game started":
        assert http.post(f"/games/{game}/seats", json={"name": "Bo"}).status_code == 201
        assert http.post(f"/games/{game}/start", headers=bearer(creator)).status_code == 200
    elif case == "not the creator":
        token = claimed["token"]
    else:
        seat = 5
    before = stored(game)
    refused = http.post(
        f"/games/{game}/seats/{seat}/bot", json={"level": level}, headers=bearer(token)
    )
    assert refused.status_code == status, refused.text
    assert refused.headers["content-type"].startswith("application/problem+json")
    assert refused.json()["code"] == code
    if code == "unknown_bot_level":
        assert all(kind in refused.json()["detail"] for kind in BOT_KINDS)
    assert stored(game) == before


@pytest.mark.parametrize(
    ("bots", "status", "code"),
    [
        ([{"seat": 1, "level": "grandmaster"}], 422, "unknown_bot_level"),
        ([{"seat": 1, "level": "greedy"}, {"seat": 1, "level": "random"}], 409, "seat_taken"),
        ([{"seat": 3, "level": "greedy"}], 422, "invalid_seat"),
        ([{"seat": 1, "level": "greedy", "think": 2}], 422, "invalid_request"),
    ],
)
def test_a_create_with_refused_bots_stores_no_game(
    http: httpx.Client, database_url: str, bots: list[dict[str, Any]], status: int, code: str
) -> None:
    before = _game_count(database_url)
    refused = http.post("/games", json={"variant": "golf", "seats": 3, "bots": bots})
    assert refused.status_code == status, refused.text
    assert refused.json()["code"] == code
    if code == "unknown_bot_level":
        assert all(kind in refused.json()["detail"] for kind in BOT_KINDS)
    assert _game_count(database_url) == before


def _game_count(database_url: str) -> int:
    with psycopg.connect(database_url, autocommit=True) as conn:
        row = conn.execute("SELECT count(*) FROM events WHERE type = 'game.created'").fetchone()
    assert row is not None
    return int(row[0])


def test_the_lobby_listing_and_scoreboard_show_bot_seats(http: httpx.Client) -> None:
    since = datetime.now(UTC).isoformat()
    opened = create(http, bots=[{"seat": 0, "level": "random"}])
    game = opened["game_id"]
    wanted = [(0, "random bot 0", "random"), (1, None, None), (2, None, None)]

    def listed() -> list[tuple[Any, ...]] | None:
        query = {"variant": "golf", "limit": 200, "updated_after": since}
        for listing in http.get("/games", params=query).json()["games"]:
            if listing["game_id"] == game:
                return [(s["seat"], s["name"], s["bot"]) for s in listing["seats"]]
        return None

    def scored() -> list[tuple[Any, ...]] | None:
        response = http.get(f"/games/{game}/scoreboard")
        if response.status_code != 200:
            return None
        return [(s["seat"], s["name"], s["bot"]) for s in response.json()["seats"]]

    _wait(lambda: listed() == wanted)
    _wait(lambda: scored() == wanted)


def _wait(condition: Callable[[], bool], seconds: float = 20.0) -> None:
    """Poll until `condition()` holds: the read models follow the events shortly."""
    deadline = time.monotonic() + seconds
    while not condition():
        assert time.monotonic() < deadline, "the read models did not show it in time"
        time.sleep(0.05)


def test_a_game_with_bots_starts_once_every_seat_is_held(http: httpx.Client) -> None:
    """The bots are ready: the claim, or the bot, that fills the last free seat starts the
    game in the same write; a game of bots only starts as it is opened. A game of people
    only waits for its creator (above)."""
    opened = create(http, seats=3, bots=[{"seat": 2, "level": "greedy"}])
    game, creator = opened["game_id"], opened["creator_token"]
    assert http.post(f"/games/{game}/seats", json={"name": "Ada"}).status_code == 201
    assert http.get(f"/games/{game}").json()["started"] is False
    last = http.post(
        f"/games/{game}/seats/1/bot", json={"level": "random"}, headers=bearer(creator)
    )
    assert last.status_code == 201, last.text
    assert last.json()["started"] is True
    assert last.json()["status"]["hand"] == 1
    again = http.post(f"/games/{game}/start", headers=bearer(creator))
    assert again.json()["code"] == "game_already_started"

    claimed = create(http, seats=2, bots=[{"seat": 1, "level": "greedy"}])
    seat = http.post(f"/games/{claimed['game_id']}/seats", json={"name": "Bo"})
    assert seat.status_code == 201
    assert seat.json()["version"] > 3  # the claim, the start and the first deal
    assert http.get(f"/games/{claimed['game_id']}").json()["started"] is True

    bots = [{"seat": seat, "level": "greedy"} for seat in range(2)]
    only = create(http, seats=2, bots=bots, options={"hands": 1})
    assert only["version"] > 3
    assert http.get(f"/games/{only['game_id']}").json()["started"] is True
