"""Whole games of every variant, played over real HTTP by bots, against PostgreSQL."""

from __future__ import annotations

import random
from typing import Any

import httpx
import pytest

from tests.api.players import open_table, play_step

pytestmark = pytest.mark.api

QUICK = {
    "hang-ten": {"hands": 2},
    "golf": {"hands": 2},
    "basketball": {},
    "tens": {"turn_limit": 12},
    "tens-shedding": {"turn_limit": 150},
}


def every_event(http: httpx.Client, game_id: str) -> list[dict[str, Any]]:
    """The game's whole feed, page after page (a long game of Tens passes 1,000 events, the
    most one page holds)."""
    entries: list[dict[str, Any]] = []
    after = 0
    while True:
        page = http.get(f"/games/{game_id}/events", params={"after": after, "limit": 1000})
        assert page.status_code == 200, page.text
        body = page.json()
        entries += body["events"]
        if not body["has_more"]:
            return entries
        after = body["next_after"]


@pytest.mark.parametrize(
    ("variant", "seats"),
    [("hang-ten", 4), ("tens", 3), ("golf", 3), ("basketball", 2), ("tens-shedding", 3)],
)
def test_bots_play_a_whole_game_over_http(http: httpx.Client, variant: str, seats: int) -> None:
    table = open_table(http, variant, seats, QUICK[variant])
    rng = random.Random(variant)
    steps = 0
    while play_step(table, rng):
        steps += 1
        assert steps < 5000, "the game did not end"

    scores = http.get(f"/games/{table.game_id}/scores").json()
    assert scores["finished"] is True
    assert scores["hands"], "at least one hand was scored"
    assert scores["totals"] == scores["hands"][-1]["totals"]
    best = (max if variant == "basketball" else min)(scores["totals"])
    assert scores["winners"] == [s for s, t in enumerate(scores["totals"]) if t == best]

    entries = every_event(http, table.game_id)
    versions = [entry["version"] for entry in entries]
    assert versions == list(range(1, len(versions) + 1))
    assert entries[-1]["event"]["type"] == "game.ended"

    done = table.act(0, {"type": "draw", "source": "stock"})
    assert done.status_code in (409, 422)
    assert done.json()["code"] in ("game_over", "unknown_action")


def test_a_seat_view_lists_the_actions_it_may_take_and_each_is_accepted(
    http: httpx.Client,
) -> None:
    table = open_table(http, "golf", 2, {"hands": 1})
    seat = table.public()["status"]["to_act"][0]
    me = table.me(seat)
    assert me["seat"] == seat
    assert {a["type"] for a in me["legal_actions"]} == {"setup-flip"}
    response = table.act(seat, me["legal_actions"][0])
    assert response.status_code == 200
    body = response.json()
    assert body["version"] == me["version"] + 1
    assert [e["event"]["type"] for e in body["events"]] == ["setup.card.turned"]
    assert response.headers["etag"] == f'"{body["version"]}"'


def test_the_next_hand_is_dealt_as_soon_as_a_hand_ends(http: httpx.Client) -> None:
    table = open_table(http, "tens", 2, {"turn_limit": 3})
    rng = random.Random(7)
    while table.public()["status"]["hand"] == 1:
        assert play_step(table, rng)
    status = table.public()["status"]
    assert status["hand"] == 2
    assert status["phase"] in ("setup", "game_over")
    feed = http.get(f"/games/{table.game_id}/events", params={"limit": 1000}).json()["events"]
    types = [e["event"]["type"] for e in feed]
    assert types.count("hand.dealt") == 2
    ended = types.index("hand.ended")
    assert types[ended + 1] == "hand.dealt"
    revealed = feed[ended]["event"]["seed"]
    first_deal = feed[types.index("hand.dealt")]["event"]
    assert first_deal["seed"] == revealed, "the first hand's seed is public once it ended"
    import hashlib

    server_seed = feed[ended]["event"]["server_seed"]
    assert first_deal["server_seed"] == server_seed
    assert hashlib.sha256(bytes.fromhex(server_seed)).hexdigest() == first_deal["commitment"]
    second_deal = feed[ended + 1]["event"]
    assert second_deal["commitment"] == server_seed, "hand 2's is the chain's next link"
