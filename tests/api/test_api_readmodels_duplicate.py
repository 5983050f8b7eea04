"""GET /players/{name} and duplicate deals: a table of a duplicate round that has ended
still reads as in play, and adds nothing to its players' records, until the round closes
(`round.closed` in the tournament's stream); then its result counts as any game's. Its
final totals would otherwise tell the tables still playing the cards they have to come.

The round is built by hand (tests/support/duplicate_rounds.py) on the session server's
PostgreSQL and played by the greedy bot; the record is read over real HTTP."""

from __future__ import annotations

import asyncio
import secrets
import time
import uuid
from collections.abc import AsyncIterator, Callable
from typing import Any

import httpx
import pytest

from events.schema.common import GameOptions
from events.schema.tournament import (
    PlayerRegistered,
    RoundClosed,
    RoundStarted,
    TableResult,
    TableSeats,
    TournamentCreated,
)
from events.store import EventStore, NewEvent, PostgresStore
from service.ops.metrics import Metrics
from service.play.games import GameService
from service.play.lobby import new_token, token_hash
from tests.support.duplicate_rounds import open_round, play

pytestmark = pytest.mark.api


@pytest.fixture
async def store(database_url: str) -> AsyncIterator[EventStore]:
    opened = await PostgresStore.open(database_url, poll_interval=0.2)
    try:
        yield opened
    finally:
        await opened.close()


async def record_of(
    http: httpx.AsyncClient, name: str, holds: Callable[[dict[str, Any]], bool]
) -> dict[str, Any]:
    """The player's record once `holds` says the players projection has got that far."""
    deadline = time.monotonic() + 60
    while True:
        response = await http.get(f"/players/{name}")
        if response.status_code == 200 and holds(response.json()):
            return response.json()  # type: ignore[no-any-return]
        assert response.status_code in (200, 404, 503), response.text
        assert time.monotonic() < deadline, f"{name}'s record did not catch up: {response.text}"
        await asyncio.sleep(0.05)


async def test_a_duplicate_table_counts_for_its_players_only_once_its_round_closes(
    store: EventStore, api_base: str
) -> None:
    """Given a duplicate round of two tables where table A has ended and table B plays on,
    then A's players have played one game and finished none, and A is listed in play with
    no total and no place; once both ended and the round closed, A counts with its totals."""
    games = GameService(store, Metrics())
    tag = secrets.token_hex(3)
    ann, bob, cat, dan = (f"{who} {tag}" for who in ("ann", "bob", "cat", "dan"))
    played = await open_round(
        games, number=1, seed=secrets.token_bytes(32), seating=[(ann, bob), (cat, dan)]
    )
    a, b = played.tables
    # The tournament's own stream, as the service writes it up to the round's close. The
    # games do not name it, so the service's round keeper leaves this round to the test.
    stream = f"tournament:{secrets.token_hex(8)}"
    config = TournamentCreated(
        "dup", "golf", GameOptions(hands=2), 2, 1, "rotation", True, token_hash(new_token()), ""
    )
    seats = tuple(TableSeats(i, t.game_id, t.players) for i, t in enumerate(played.tables, 1))
    opening = [
        config,
        *(PlayerRegistered(n, token_hash(new_token())) for n in (ann, bob, cat, dan)),
    ]
    opening.append(RoundStarted(1, seats, seat_seed=played.seat_seed))
    await store.append(stream, 0, [NewEvent(uuid.uuid4(), e) for e in opening])
    await play(games, a)
    await play(games, b, actions=2)
    # A later game seen in /players means the projection is past A's `game.ended`.
    await open_round(
        games, number=1, seed=secrets.token_bytes(32), seating=[(f"eve {tag}", f"fay {tag}")]
    )
    async with httpx.AsyncClient(base_url=api_base, timeout=30) as http:
        await record_of(http, f"eve {tag}", lambda body: body["games_played"] == 1)
        held = await record_of(http, ann, lambda body: True)
        assert (held["games_played"], held["games_finished"], held["wins"]) == (1, 0, 0)
        assert (held["points"], held["best_place"], held["worst_place"]) == (0, None, None)
        assert held["games"] == [
            {
                "game_id": a.game_id,
                "seat": 0,
                "variant": "golf",
                "finished": False,
                "total": None,
                "place": None,
                "won": False,
            }
        ]

        await play(games, b)
        results = []
        for number, table in enumerate(played.tables, 1):
            status = (await games.load(table.game_id)).status()
            assert status is not None
            assert status.phase == "game_over"
            results.append(
                TableResult(
                    number, table.game_id, table.players, status.totals, status.hand, status.winners
                )
            )
        closed = RoundClosed(1, tuple(results), server_seed=played.seed.hex())
        await store.append(stream, 6, [NewEvent(uuid.uuid4(), closed)])

        counted = await record_of(http, ann, lambda body: body["games_finished"] == 1)
        totals, winners = results[0].totals, results[0].winners
        place = 1 + sum(other < totals[0] for other in totals)  # Golf: low totals win
        assert counted["games_played"] == 1
        assert counted["wins"] == int(0 in winners)
        assert counted["points"] == totals[0]
        assert counted["best_place"] == counted["worst_place"] == place
        assert counted["games"] == [
            {
                "game_id": a.game_id,
                "seat": 0,
                "variant": "golf",
                "finished": True,
                "total": totals[0],
                "place": place,
                "won": 0 in winners,
            }
        ]
