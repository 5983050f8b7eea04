"""A lost answer never strands a seat (issue 7, item 3): `Idempotency-Key` on every POST,
and the creator can free a claimed seat before the game starts."""

from __future__ import annotations

import uuid
from collections.abc import Callable
from typing import Any

import httpx
import pytest

pytestmark = pytest.mark.api

Stored = Callable[[str], list[tuple[Any, ...]]]


def key() -> dict[str, str]:
    return {"Idempotency-Key": str(uuid.uuid4())}


def bearer(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


def open_game(http: httpx.Client) -> dict[str, Any]:
    created = http.post("/games", json={"variant": "golf", "seats": 2})
    assert created.status_code == 201, created.text
    return created.json()


def test_a_retried_create_returns_the_same_game_and_creator_token(
    http: httpx.Client, stored: Stored
) -> None:
    headers = key()
    body = {"variant": "golf", "seats": 2, "title": "retry me"}
    first = http.post("/games", json=body, headers=headers)
    again = http.post("/games", json=body, headers=headers)
    assert first.status_code == again.status_code == 201
    assert again.json() == first.json()
    assert len(stored(first.json()["game_id"])) == 1
    start = http.post(
        f"/games/{first.json()['game_id']}/start", headers=bearer(again.json()["creator_token"])
    )
    assert start.json()["code"] == "seats_unclaimed", "the replayed token is the creator's"


def test_a_create_key_reused_for_another_game_is_refused(http: httpx.Client) -> None:
    headers = key()
    assert http.post("/games", json={"variant": "golf", "seats": 2}, headers=headers).is_success
    other = http.post("/games", json={"variant": "golf", "seats": 3}, headers=headers)
    assert other.status_code == 422
    assert other.json()["code"] == "idempotency_key_reused"


def test_a_claim_whose_answer_was_lost_gets_the_same_seat_and_token_on_retry(
    http: httpx.Client, stored: Stored
) -> None:
    game = open_game(http)
    claim, headers = f"/games/{game['game_id']}/seats", key()
    first = http.post(claim, json={"name": "ann"}, headers=headers)
    rows = stored(game["game_id"])
    again = http.post(claim, json={"name": "ann"}, headers=headers)
    assert first.status_code == again.status_code == 201
    assert again.json() == first.json()
    assert stored(game["game_id"]) == rows, "the retry stored nothing"
    me = http.get(f"/games/{game['game_id']}/me", headers=bearer(again.json()["token"]))
    assert me.status_code == 200
    assert me.json()["seat"] == first.json()["seat"]


def test_a_claim_key_reused_with_another_body_is_refused_and_stores_nothing(
    http: httpx.Client, stored: Stored
) -> None:
    game = open_game(http)
    claim, headers = f"/games/{game['game_id']}/seats", key()
    assert http.post(claim, json={"name": "ann"}, headers=headers).status_code == 201
    rows = stored(game["game_id"])
    other = http.post(claim, json={"name": "bob"}, headers=headers)
    assert other.status_code == 422
    assert other.json()["code"] == "idempotency_key_reused"
    assert stored(game["game_id"]) == rows


def test_a_short_key_on_a_request_that_returns_a_secret_is_refused(http: httpx.Client) -> None:
    short = http.post(
        "/games", json={"variant": "golf", "seats": 2}, headers={"Idempotency-Key": "1"}
    )
    assert short.status_code == 400
    assert short.json()["code"] == "invalid_request"


def test_the_creator_frees_a_stranded_seat_and_the_game_can_start(
    http: httpx.Client, stored: Stored
) -> None:
    game = open_game(http)
    game_id, creator = game["game_id"], game["creator_token"]
    lost = http.post(f"/games/{game_id}/seats", json={"name": "lost", "seat": 1}).json()
    http.post(f"/games/{game_id}/seats", json={"name": "ann", "seat": 0}).raise_for_status()

    freed = http.delete(f"/games/{game_id}/seats/1", headers=bearer(creator))
    assert freed.status_code == 200, freed.text
    assert freed.json()["seats"][1]["name"] is None
    gone = http.get(f"/games/{game_id}/me", headers=bearer(lost["token"]))
    assert gone.status_code == 401, "a freed seat's token holds nothing"

    http.post(f"/games/{game_id}/seats", json={"name": "bob", "seat": 1}).raise_for_status()
    started = http.post(f"/games/{game_id}/start", headers=bearer(creator))
    assert started.status_code == 200, started.text
    assert [row[2] for row in stored(game_id)].count("seat.released") == 1


def test_a_seat_holder_may_leave_but_not_free_another_seat(http: httpx.Client) -> None:
    game_id = open_game(http)["game_id"]
    ann = http.post(f"/games/{game_id}/seats", json={"name": "ann", "seat": 0}).json()
    http.post(f"/games/{game_id}/seats", json={"name": "bob", "seat": 1}).raise_for_status()
    other = http.delete(f"/games/{game_id}/seats/1", headers=bearer(ann["token"]))
    assert other.status_code == 403
    assert other.json()["code"] == "not_creator"
    own = http.delete(f"/games/{game_id}/seats/0", headers=bearer(ann["token"]))
    assert own.status_code == 200


@pytest.mark.parametrize(
    ("seat", "status", "code"), [(1, 409, "seat_free"), (5, 422, "invalid_seat")]
)
def test_freeing_a_seat_that_is_not_claimed_is_refused_and_stores_nothing(
    http: httpx.Client, stored: Stored, seat: int, status: int, code: str
) -> None:
    game = open_game(http)
    rows = stored(game["game_id"])
    refused = http.delete(
        f"/games/{game['game_id']}/seats/{seat}", headers=bearer(game["creator_token"])
    )
    assert (refused.status_code, refused.json()["code"]) == (status, code)
    assert stored(game["game_id"]) == rows


def test_seats_cannot_be_freed_once_the_game_started(http: httpx.Client, stored: Stored) -> None:
    game = open_game(http)
    game_id, creator = game["game_id"], game["creator_token"]
    for seat in (0, 1):
        http.post(f"/games/{game_id}/seats", json={"name": f"p{seat}"}).raise_for_status()
    http.post(f"/games/{game_id}/start", headers=bearer(creator)).raise_for_status()
    rows = stored(game_id)
    refused = http.delete(f"/games/{game_id}/seats/0", headers=bearer(creator))
    assert (refused.status_code, refused.json()["code"]) == (409, "game_already_started")
    assert stored(game_id) == rows


def test_a_retried_start_returns_the_started_game(http: httpx.Client, stored: Stored) -> None:
    game = open_game(http)
    game_id, creator = game["game_id"], game["creator_token"]
    for seat in (0, 1):
        http.post(f"/games/{game_id}/seats", json={"name": f"p{seat}"}).raise_for_status()
    headers = key() | bearer(creator)
    first = http.post(f"/games/{game_id}/start", headers=headers)
    rows = stored(game_id)
    again = http.post(f"/games/{game_id}/start", headers=headers)
    assert first.status_code == again.status_code == 200, again.text
    assert again.json()["version"] == first.json()["version"]
    assert stored(game_id) == rows


def test_a_retried_release_with_its_key_returns_its_first_answer(
    http: httpx.Client, stored: Stored
) -> None:
    """Freeing a seat whose answer was lost, sent again with the same key: the first answer
    (200, the same version), not `409 seat_free`, and one `seat.released` stored."""
    game = open_game(http)
    game_id, creator = game["game_id"], game["creator_token"]
    http.post(f"/games/{game_id}/seats", json={"name": "ann", "seat": 1}).raise_for_status()
    headers = key() | bearer(creator)
    first = http.delete(f"/games/{game_id}/seats/1", headers=headers)
    rows = stored(game_id)
    again = http.delete(f"/games/{game_id}/seats/1", headers=headers)
    assert first.status_code == again.status_code == 200, again.text
    assert again.json()["version"] == first.json()["version"]
    assert stored(game_id) == rows
    assert [row[2] for row in rows].count("seat.released") == 1
