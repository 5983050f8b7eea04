"""POST /games/{id}/rematch over HTTP: a finished game opens again with the same variant,
options and seats, each holder with the old token, bots with their level; one rematch per
game; the two games link to each other; refused for a game in play (rows unchanged)."""

from __future__ import annotations

import random
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import httpx
import pytest

from service.play.rematch import rematch_id
from tests.api.bots import bot_game, join, play_seat
from tests.api.players import open_table
from tests.api.sse import Stream

pytestmark = pytest.mark.api

Rows = Callable[[str], list[tuple[Any, ...]]]


def bearer(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


def finished(http: httpx.Client, api_base: str, variant: str = "golf") -> dict[str, Any]:
    game = bot_game(http, variant, "greedy")
    with Stream(api_base, f"/games/{game['game_id']}/stream") as watch:
        game["token"] = join(http, game)
        play_seat(http, game["game_id"], game["token"], watch, random.Random(7))
    return game


def test_a_rematch_seats_the_same_holders_with_their_tokens_and_links_both_games(
    http: httpx.Client, api_base: str, stored: Rows
) -> None:
    game = finished(http, api_base, "tens")
    old = game["game_id"]
    asked = http.post(f"/games/{old}/rematch", headers=bearer(game["token"]))
    assert asked.status_code == 201, asked.text
    new = asked.json()["game_id"]
    assert new != old
    assert asked.json()["rematch_of"] == old
    assert asked.headers["location"] == f"/games/{new}"
    before, after = http.get(f"/games/{old}").json(), http.get(f"/games/{new}").json()
    assert (before["rematch"], before["rematch_of"]) == (new, None)
    assert (after["rematch_of"], after["rematch"]) == (old, None)
    assert http.get(f"/games/{old}/view").json()["rematch"] == new
    assert http.get(f"/games/{new}/view").json()["rematch_of"] == old
    assert after["started"] is True
    assert (after["variant"], after["options"], after["title"]) == (
        before["variant"],
        before["options"],
        before["title"],
    )
    assert [(s["name"], s["bot"]) for s in after["seats"]] == [
        (s["name"], s["bot"]) for s in before["seats"]
    ]
    me = http.get(f"/games/{new}/me", headers=bearer(game["token"]))
    assert me.status_code == 200
    assert me.json()["seat"] == 0
    claims = sorted(r[3] for r in stored(old) if r[2] == "seat.claimed")
    assert sorted(r[3] for r in stored(new) if r[2] == "seat.claimed") == claims  # same hashes
    rematched = [r for r in stored(old) if r[2] == "game.rematched"]
    assert len(rematched) == 1
    assert new in rematched[0][3]
    with Stream(api_base, f"/games/{new}/stream") as watch:  # the bots play the rematch too
        play_seat(http, new, game["token"], watch, random.Random(8))
    assert http.get(f"/games/{new}/audit").json()["ok"] is True
    assert http.get(f"/games/{old}/audit").json()["ok"] is True


def test_a_rematch_asked_again_or_at_once_answers_the_same_game(
    http: httpx.Client, api_base: str, stored: Rows
) -> None:
    game = finished(http, api_base)
    old = game["game_id"]

    def ask(_: int) -> httpx.Response:
        return httpx.post(f"{api_base}/games/{old}/rematch", headers=bearer(game["token"]))

    with ThreadPoolExecutor(4) as pool:
        answers = list(pool.map(ask, range(4)))
    assert {a.status_code for a in answers} == {201}
    assert len({a.json()["game_id"] for a in answers}) == 1
    again = http.post(f"/games/{old}/rematch", headers=bearer(game["token"]))
    assert again.json()["game_id"] == answers[0].json()["game_id"]
    assert [r[2] for r in stored(old)].count("game.rematched") == 1


@pytest.mark.parametrize("case", ["in play", "in the lobby", "no seat's token", "no token"])
def test_a_refused_rematch_leaves_the_stored_events_as_they_were(
    http: httpx.Client, stored: Rows, case: str
) -> None:
    status, code = 409, "game_in_play"
    if case == "in play":  # people only: nothing moves while the test looks
        table = open_table(http, "golf", 2)
        old, token = table.game_id, table.tokens[1]
    else:  # a game with a bot, in its lobby (a person in seat 0, seat 1 free)
        body = {"variant": "golf", "seats": 3, "bots": [{"seat": 2, "level": "greedy"}]}
        game = http.post("/games", json=body).json()
        old = game["game_id"]
        token = http.post(f"/games/{old}/seats", json={"name": "Ada", "seat": 0}).json()["token"]
    if case == "no seat's token":
        status, code, token = 401, "invalid_token", game["creator_token"]
    elif case == "no token":
        status, code, token = 401, "token_required", ""
    rows = stored(old)
    refused = http.post(f"/games/{old}/rematch", headers=bearer(token) if token else {})
    assert refused.status_code == status, refused.text
    assert refused.headers["content-type"].startswith("application/problem+json")
    assert refused.json()["code"] == code
    assert stored(old) == rows
    assert stored(rematch_id(old)) == []
