"""Over HTTP, for every variant: a person against bots of each level plays to the end; the
bots' moves carry their seat and level, are legal (the audit of the finished game passes)
and a spectator's stream shows them."""

from __future__ import annotations

import random
from typing import Any

import httpx
import pytest

from domain.variants import BOT_KINDS, DECIDERS
from tests.api.bots import bot_game, join, play_seat
from tests.api.sse import Stream

pytestmark = pytest.mark.api


def bot_moves(entries: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [e for e in entries if (e.get("metadata") or {}).get("bot")]


@pytest.mark.parametrize("level", BOT_KINDS)
@pytest.mark.parametrize("variant", sorted(DECIDERS))
def test_a_person_plays_a_whole_game_against_bots(
    http: httpx.Client, api_base: str, variant: str, level: str
) -> None:
    game = bot_game(http, variant, level)
    game_id = game["game_id"]
    with Stream(api_base, f"/games/{game_id}/stream") as spectator:
        token = join(http, game)
        last = play_seat(http, game_id, token, spectator, random.Random(variant + level))
        seen = spectator.wait_for(last)
    assert [e["version"] for e in seen] == list(range(1, last + 1))
    feed = http.get(f"/games/{game_id}/events", params={"limit": 1000}).json()["events"]
    by_bots = {e["version"]: e["metadata"] for e in bot_moves(feed)}  # the game is over
    assert {meta["seat"] for meta in by_bots.values()} == set(
        range(1, len(game_seats(http, game_id)))
    )
    assert all(meta["bot"] == level and meta["action"] for meta in by_bots.values())
    streamed = [e for e in seen if e["version"] in by_bots]
    assert streamed, "the spectator's stream showed no bot move"
    wanted = [e["event"] for e in feed if e["version"] in by_bots]  # cards hidden when live
    assert [(e["event"]["type"], e["event"].get("seat")) for e in streamed] == [
        (event["type"], event.get("seat")) for event in wanted
    ]
    audit = http.get(f"/games/{game_id}/audit").json()
    assert audit["ok"] is True, audit["failures"]
    summary = http.get(f"/games/{game_id}").json()
    assert summary["status"]["phase"] == "game_over"
    assert [s["bot"] for s in summary["seats"]][1:] == [level] * (len(summary["seats"]) - 1)


def game_seats(http: httpx.Client, game_id: str) -> list[dict[str, Any]]:
    return list(http.get(f"/games/{game_id}").json()["seats"])
