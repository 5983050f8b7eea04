"""Bad input for every operation: a problem-details answer naming what was wrong, and the
stored events exactly as they were."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import httpx
import pytest

from tests.api.players import Table, open_table

pytestmark = pytest.mark.api

Stored = Callable[[str], list[tuple[Any, ...]]]


def problem(response: httpx.Response, status: int, code: str) -> dict[str, Any]:
    assert response.status_code == status, response.text
    assert response.headers["content-type"].startswith("application/problem+json")
    body = response.json()
    assert body["code"] == code
    assert body["status"] == status
    assert body["type"] == f"urn:fairway:problem:{code}"
    assert body["detail"]
    return body


@pytest.fixture
def table(http: httpx.Client) -> Table:
    return open_table(http, "golf", 2, {"hands": 1})


def not_to_act(table: Table) -> int:
    to_act = table.public()["status"]["to_act"]
    return next(seat for seat in range(len(table.tokens)) if seat not in to_act)


BAD_ACTION_BODIES: list[tuple[str, bytes | dict[str, Any], int, str]] = [
    ("malformed JSON", b'{"type": "draw", ', 400, "malformed_request"),
    ("not JSON at all", b"\x00\xff garbage", 400, "malformed_request"),
    ("wrong type for a field", {"type": "draw", "source": 7}, 422, "invalid_request"),
    (
        "unknown field",
        {"type": "replace", "row": 0, "col": 0, "card": "AS"},
        422,
        "invalid_request",
    ),
    ("unknown action type", {"type": "cheat"}, 422, "invalid_request"),
    ("missing action type", {"row": 0, "col": 0}, 422, "invalid_request"),
    ("row out of range", {"type": "setup-flip", "row": 2, "col": 0}, 422, "invalid_request"),
    ("negative column", {"type": "setup-flip", "row": 0, "col": -1}, 422, "invalid_request"),
    ("an array, not an object", [1, 2, 3], 422, "invalid_request"),
    ("another variant's action", {"type": "play", "hand": ["AS"]}, 422, "unknown_action"),
]


@pytest.mark.parametrize(
    ("case", "body", "status", "code"), BAD_ACTION_BODIES, ids=[c[0] for c in BAD_ACTION_BODIES]
)
def test_a_bad_action_body_is_refused_and_nothing_is_stored(
    table: Table, stored: Stored, case: str, body: Any, status: int, code: str
) -> None:
    seat = table.public()["status"]["to_act"][0]
    before = stored(table.game_id)
    json = {"content-type": "application/json"}
    kwargs: dict[str, Any] = (
        {"content": body, "headers": table.auth(seat) | json}
        if isinstance(body, bytes)
        else {"json": body, "headers": table.auth(seat)}
    )
    response = table.http.post(f"/games/{table.game_id}/actions", **kwargs)
    problem(response, status, code)
    assert stored(table.game_id) == before


def test_out_of_turn_is_refused_with_not_your_turn(table: Table, stored: Stored) -> None:
    before = stored(table.game_id)
    response = table.act(not_to_act(table), {"type": "setup-flip", "row": 0, "col": 0})
    body = problem(response, 409, "not_your_turn")
    assert "turn" in body["detail"].lower()
    assert stored(table.game_id) == before


def test_an_illegal_move_names_the_rule(table: Table, stored: Stored) -> None:
    seat = table.public()["status"]["to_act"][0]
    before = stored(table.game_id)
    problem(table.act(seat, {"type": "draw", "source": "stock"}), 409, "setup_incomplete")
    assert table.act(seat, {"type": "setup-flip", "row": 0, "col": 1}).status_code == 200
    after_flip = stored(table.game_id)
    problem(table.act(seat, {"type": "setup-flip", "row": 0, "col": 2}), 422, "illegal_position")
    assert stored(table.game_id) == after_flip
    assert len(after_flip) == len(before) + 1


def test_a_wrong_or_missing_token_is_refused(table: Table, stored: Stored) -> None:
    before = stored(table.game_id)
    url = f"/games/{table.game_id}/actions"
    action = {"type": "setup-flip", "row": 0, "col": 0}
    problem(table.http.post(url, json=action), 401, "token_required")
    problem(
        table.http.post(url, json=action, headers={"Authorization": "Bearer nope"}),
        401,
        "invalid_token",
    )
    problem(
        table.http.post(url, json=action, headers={"Authorization": "Basic abc"}),
        401,
        "invalid_token",
    )
    creator = {"Authorization": f"Bearer {table.creator}"}
    problem(table.http.post(url, json=action, headers=creator), 401, "invalid_token")
    problem(table.http.get(f"/games/{table.game_id}/me"), 401, "token_required")
    assert stored(table.game_id) == before


def test_a_token_of_another_game_holds_no_seat_here(http: httpx.Client, table: Table) -> None:
    other = open_table(http, "golf", 2, {"hands": 1})
    response = http.post(
        f"/games/{table.game_id}/actions",
        json={"type": "setup-flip", "row": 0, "col": 0},
        headers=other.auth(0),
    )
    problem(response, 401, "invalid_token")


def test_an_unknown_game_is_404(http: httpx.Client) -> None:
    problem(http.get("/games/00000000deadbeef"), 404, "game_not_found")
    problem(http.get("/games/00000000deadbeef/view"), 404, "game_not_found")
    problem(http.get("/games/not-a-game-id/view"), 400, "invalid_request")
    problem(http.get("/nowhere"), 404, "not_found")


def test_the_lobby_refuses_what_it_must(http: httpx.Client, stored: Stored) -> None:
    created = http.post("/games", json={"variant": "golf", "seats": 2}).json()
    game = created["game_id"]
    creator = {"Authorization": f"Bearer {created['creator_token']}"}
    problem(http.post(f"/games/{game}/start", headers=creator), 409, "seats_unclaimed")
    assert http.post(f"/games/{game}/seats", json={"name": "ann", "seat": 1}).status_code == 201
    problem(http.post(f"/games/{game}/seats", json={"name": "bob", "seat": 1}), 409, "seat_taken")
    problem(http.post(f"/games/{game}/seats", json={"name": "bob", "seat": 5}), 422, "invalid_seat")
    problem(http.post(f"/games/{game}/seats", json={"name": ""}), 422, "invalid_request")
    seat = http.post(f"/games/{game}/seats", json={"name": "cy"}).json()
    assert seat["seat"] == 0
    problem(http.post(f"/games/{game}/seats", json={"name": "dee"}), 409, "no_free_seat")
    before = stored(game)
    problem(
        http.post(f"/games/{game}/start", headers={"Authorization": f"Bearer {seat['token']}"}),
        403,
        "not_creator",
    )
    problem(http.post(f"/games/{game}/start"), 401, "token_required")
    problem(
        http.post(
            f"/games/{game}/actions",
            json={"type": "draw", "source": "stock"},
            headers={"Authorization": f"Bearer {seat['token']}"},
        ),
        409,
        "game_not_started",
    )
    assert stored(game) == before
    assert http.post(f"/games/{game}/start", headers=creator).status_code == 200
    problem(http.post(f"/games/{game}/start", headers=creator), 409, "game_already_started")
    problem(http.post(f"/games/{game}/seats", json={"name": "eve"}), 409, "game_already_started")


@pytest.mark.parametrize(
    ("body", "code"),
    [
        ({"variant": "poker", "seats": 2}, "invalid_request"),
        ({"variant": "golf", "seats": 9}, "invalid_config"),
        ({"variant": "hang-ten", "seats": 2}, "invalid_config"),
        ({"variant": "golf", "seats": 2, "options": {"turn_limit": 0}}, "invalid_request"),
        ({"variant": "golf", "seats": 2, "options": {"jokers": 9}}, "invalid_request"),
        ({"variant": "golf", "seats": "two"}, "invalid_request"),
        (
            {"variant": "tens-shedding", "seats": 2, "options": {"grab_min": 30, "grab_max": 20}},
            "invalid_config",
        ),
    ],
)
def test_creating_a_game_with_bad_settings_is_refused(
    http: httpx.Client, body: dict[str, Any], code: str
) -> None:
    response = http.post("/games", json=body)
    problem(response, 422, code)


def test_if_match_with_a_stale_version_is_409_and_stores_nothing(
    table: Table, stored: Stored
) -> None:
    seat = table.public()["status"]["to_act"][0]
    version = table.me(seat)["version"]
    action = {"type": "setup-flip", "row": 0, "col": 3}
    before = stored(table.game_id)
    problem(table.act(seat, action, **{"If-Match": f'"{version - 1}"'}), 409, "stale_version")
    problem(table.act(seat, action, **{"If-Match": "yesterday"}), 422, "invalid_request")
    assert stored(table.game_id) == before
    ok = table.act(seat, action, **{"If-Match": f'"{version}"'})
    assert ok.status_code == 200
    assert ok.json()["version"] == version + 1


def test_the_same_idempotency_key_replays_the_answer_and_stores_once(
    table: Table, stored: Stored
) -> None:
    seat = table.public()["status"]["to_act"][0]
    action = {"type": "setup-flip", "row": 1, "col": 2}
    first = table.act(seat, action, **{"Idempotency-Key": "flip-1"})
    assert first.status_code == 200
    after = stored(table.game_id)
    again = table.act(seat, action, **{"Idempotency-Key": "flip-1"})
    assert again.status_code == 200
    assert again.json() | {"status": None} == first.json() | {"status": None}
    assert stored(table.game_id) == after
    other = {"type": "setup-flip", "row": 0, "col": 2}
    problem(table.act(seat, other, **{"Idempotency-Key": "flip-1"}), 422, "idempotency_key_reused")
    assert stored(table.game_id) == after


def test_actions_on_a_finished_game_are_refused(http: httpx.Client, stored: Stored) -> None:
    import random

    from tests.api.players import play_step

    table = open_table(http, "basketball", 2)
    rng = random.Random(3)
    while play_step(table, rng):
        pass
    before = stored(table.game_id)
    for seat in (0, 1):
        problem(table.act(seat, {"type": "draw", "source": "stock"}), 409, "game_over")
    assert table.me(0)["legal_actions"] == []
    assert stored(table.game_id) == before


def test_an_oversized_body_is_413(table: Table, stored: Stored) -> None:
    before = stored(table.game_id)
    seat = table.public()["status"]["to_act"][0]
    huge = b'{"type": "draw", "source": "stock", "pad": "' + b"x" * 100_000 + b'"}'
    response = table.http.post(
        f"/games/{table.game_id}/actions",
        content=huge,
        headers=table.auth(seat) | {"content-type": "application/json"},
    )
    problem(response, 413, "body_too_large")
    assert stored(table.game_id) == before
