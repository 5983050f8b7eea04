"""HTTP as clients expect it (issue 8): ETag on every game response, Location on 201s,
304 for a copy still current, a turn in one request, a retried request answered exactly as
the first time, and a feed that says where to continue."""

from __future__ import annotations

import random
import uuid
from typing import Any

import httpx
import pytest

from tests.api.players import Table, concrete, open_table

pytestmark = pytest.mark.api


def bearer(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


def play_until(table: Table, rng: random.Random, versions: int) -> None:
    """Play legal actions until the game has at least `versions` events (or is over)."""
    while True:
        summary = table.http.get(f"/games/{table.game_id}").json()
        if summary["version"] >= versions or summary["status"]["phase"] == "game_over":
            return
        seat = summary["status"]["to_act"][0]
        listed = rng.choice(table.me(seat)["legal_actions"])
        table.act(seat, concrete(listed, rng)).raise_for_status()


def test_the_201s_carry_the_version_as_etag_and_the_new_resource_as_location(
    http: httpx.Client,
) -> None:
    created = http.post("/games", json={"variant": "golf", "seats": 2})
    game_id = created.json()["game_id"]
    assert created.headers["etag"] == '"1"'
    assert created.headers["location"] == f"/games/{game_id}"
    assert http.get(created.headers["location"]).status_code == 200
    claimed = http.post(f"/games/{game_id}/seats", json={"name": "ann"})
    assert claimed.headers["etag"] == '"2"'
    assert claimed.headers["location"] == f"/games/{game_id}/seats/0"


@pytest.mark.parametrize("path", ["", "/view", "/me", "/events", "/scores"])
def test_every_game_read_carries_its_etag_and_answers_304_while_it_is_current(
    http: httpx.Client, path: str
) -> None:
    table = open_table(http, "golf", 2)
    headers = bearer(table.tokens[0])
    first = http.get(f"/games/{table.game_id}{path}", headers=headers)
    tag = first.headers["etag"]
    assert tag == f'"{first.json()["version"]}"'
    again = http.get(f"/games/{table.game_id}{path}", headers=headers | {"If-None-Match": tag})
    assert again.status_code == 304
    assert again.content == b""
    assert again.headers["etag"] == tag
    play_until(table, random.Random(1), int(tag.strip('"')) + 1)
    moved = http.get(f"/games/{table.game_id}{path}", headers=headers | {"If-None-Match": tag})
    assert moved.status_code == 200
    assert moved.headers["etag"] != tag


def test_a_turn_is_one_request_the_answer_holds_the_new_view_and_legal_actions(
    http: httpx.Client,
) -> None:
    table = open_table(http, "golf", 2)
    rng = random.Random(2)
    for _ in range(12):
        status = table.public()["status"]
        seat = status["to_act"][0]
        acted = table.act(seat, concrete(rng.choice(table.me(seat)["legal_actions"]), rng))
        assert acted.status_code == 200, acted.text
        answer = acted.json()
        me = table.me(seat)
        assert answer["version"] == me["version"]
        assert answer["view"] == me["view"]
        assert answer["legal_actions"] == me["legal_actions"]
        assert answer["status"] == me["status"]


def test_a_retried_action_gets_the_first_answer_exactly_even_after_the_game_moved_on(
    http: httpx.Client,
) -> None:
    table = open_table(http, "golf", 2)
    rng = random.Random(3)
    seat = table.public()["status"]["to_act"][0]
    action = concrete(rng.choice(table.me(seat)["legal_actions"]), rng)
    key = {"Idempotency-Key": str(uuid.uuid4())}
    first = table.act(seat, action, **key)
    assert first.status_code == 200, first.text
    play_until(table, rng, first.json()["version"] + 6)
    again = table.act(seat, action, **key)
    assert again.status_code == 200
    assert again.json() == first.json()
    assert again.headers["etag"] == first.headers["etag"]


def test_the_feed_says_whether_more_follows_and_where_to_continue(http: httpx.Client) -> None:
    table = open_table(http, "golf", 2)
    play_until(table, random.Random(4), 12)
    seen: list[dict[str, Any]] = []
    after: int | None = 0
    while after is not None:
        page = http.get(f"/games/{table.game_id}/events", params={"after": after, "limit": 5})
        body = page.json()
        seen += body["events"]
        assert body["has_more"] == (body["next_after"] is not None)
        after = body["next_after"]
    assert [e["version"] for e in seen] == list(range(1, body["version"] + 1))


def test_feed_events_have_their_public_shape_with_secrets_absent_and_hidden_seeds_null(
    http: httpx.Client,
) -> None:
    table = open_table(http, "golf", 2)
    events = [e["event"] for e in http.get(f"/games/{table.game_id}/events").json()["events"]]
    created = next(e for e in events if e["type"] == "game.created")
    claimed = [e for e in events if e["type"] == "seat.claimed"]
    dealt = next(e for e in events if e["type"] == "hand.dealt")
    assert "creator_hash" not in created
    assert claimed
    assert all("token_hash" not in e for e in claimed)
    assert dealt["seed"] is None
    view = table.public()["view"]
    assert view["seed"] is None
    assert view["family"] == "grid"
