"""A person playing against bots over HTTP: the client's side of a game with bot seats."""

from __future__ import annotations

import random
import time
from typing import Any

import httpx

from domain.variants import DECIDERS
from tests.api.players import concrete
from tests.api.sse import Stream

SEATS = {"hang-ten": 4, "tens": 3, "golf": 3, "basketball": 2, "tens-shedding": 3}
"""Seats per variant: the variant's least for Hang Ten, a person and two bots elsewhere
(one bot in Basketball, its peek step included)."""


def short(variant: str) -> dict[str, Any]:
    """One hand where the variant counts hands: a whole game, quickly."""
    return {"hands": 1} if "hands" in DECIDERS[variant].options else {}


def bot_game(
    http: httpx.Client, variant: str, level: str, seats: int | None = None
) -> dict[str, Any]:
    """A game of `variant` in its lobby: bots of `level` in every seat but seat 0, left
    for the person (`join`). The answer to POST /games."""
    seats = seats or SEATS[variant]
    bots = [{"seat": seat, "level": level} for seat in range(1, seats)]
    body = {"variant": variant, "seats": seats, "options": short(variant), "bots": bots}
    created = http.post("/games", json=body)
    assert created.status_code == 201, created.text
    return dict(created.json())


def join(http: httpx.Client, game: dict[str, Any]) -> str:
    """The person claims seat 0, the last free one: the game starts with the claim (a game
    with bots starts once full). The seat's token."""
    claimed = http.post(f"/games/{game['game_id']}/seats", json={"name": "Ada", "seat": 0})
    assert claimed.status_code == 201, claimed.text
    assert http.get(f"/games/{game['game_id']}").json()["started"] is True
    return str(claimed.json()["token"])


def play_seat(
    http: httpx.Client, game_id: str, token: str, watch: Stream, rng: random.Random
) -> int:
    """Play the person's seat to the end of the game: act when it has legal actions, else
    wait on `watch` (the game's stream) for the next event. Returns the final version."""
    auth = {"Authorization": f"Bearer {token}"}
    while True:
        read = http.get(f"/games/{game_id}/me", headers=auth)
        if read.status_code == 503:
            # The service's documented answer when an operation outlasts `db_timeout`: a
            # client retries after Retry-After. Met when the shared server ran in a thread of
            # the test's own process, whose client and stream-reader threads held the GIL
            # while the server's event loop waited (see `settled` in
            # tests/api/test_api_no_leaks_bots.py), not because the bots starve the pool
            # (inside `fairway serve` they take at most half of it).
            time.sleep(float(read.headers.get("retry-after", "1")))
            continue
        assert read.status_code == 200, read.text
        me = read.json()
        if me["status"]["phase"] == "game_over":
            return int(me["version"])
        if me["legal_actions"]:
            action = concrete(rng.choice(me["legal_actions"]), rng)
            acted = http.post(f"/games/{game_id}/actions", json=action, headers=auth)
            assert acted.status_code in (200, 409), acted.text  # 409: a bot moved first
        else:
            watch.wait_for(me["version"] + 1)
