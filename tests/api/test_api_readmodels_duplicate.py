"""GET /players/{name}, GET /ratings/{name} and duplicate deals: a table of a duplicate round
that has ended still reads as in play, adds nothing to its players' records and moves no
rating, until the round closes (`round.closed` in the tournament's stream); then its result
counts as any game's. Its final totals (or who gained) would otherwise tell the tables still
playing how the cards to come went.

The round is built by hand (tests/support/duplicate_rounds.py) on the session server's
PostgreSQL and played by the greedy bot; the record is read over real HTTP."""

from __future__ import annotations

import asyncio
import random
import secrets
import time
import uuid
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass
from typing import Any

import httpx
import pytest

from domain.simulate import play_game
from domain.variants import DECIDERS, bot
from events.schema.common import GameOptions
from events.schema.lobby import GameCreated, SeatClaimed
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
from tests.support.duplicate_rounds import Round, open_round, play

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


@dataclass
class HeldRound:
    """A duplicate round of two tables (`ann`, `bob` at A; `cat`, `dan` at B) and its
    tournament's stream, as the service writes it up to the round's close. The games do not
    name the tournament, so the service's round keeper leaves this round to the test."""

    played: Round
    stream: str
    names: tuple[str, ...]


async def held_round(store: EventStore, games: GameService, tag: str) -> HeldRound:
    names = tuple(f"{who} {tag}" for who in ("ann", "bob", "cat", "dan"))
    ann, bob, cat, dan = names
    played = await open_round(
        games, number=1, seed=secrets.token_bytes(32), seating=[(ann, bob), (cat, dan)]
    )
    stream = f"tournament:{secrets.token_hex(8)}"
    config = TournamentCreated(
        "dup", "golf", GameOptions(hands=2), 2, 1, "rotation", True, token_hash(new_token()), ""
    )
    seats = tuple(TableSeats(i, t.game_id, t.players) for i, t in enumerate(played.tables, 1))
    opening = [config, *(PlayerRegistered(n, token_hash(new_token())) for n in names)]
    opening.append(RoundStarted(1, seats, seat_seed=played.seat_seed))
    await store.append(stream, 0, [NewEvent(uuid.uuid4(), e) for e in opening])
    return HeldRound(played, stream, names)


async def close_round(store: EventStore, games: GameService, held: HeldRound) -> list[TableResult]:
    """`round.closed` with every table's result, as the round keeper writes it."""
    results = []
    for number, table in enumerate(held.played.tables, 1):
        status = (await games.load(table.game_id)).status()
        assert status is not None
        assert status.phase == "game_over"
        results.append(
            TableResult(
                number, table.game_id, table.players, status.totals, status.hand, status.winners
            )
        )
    closed = RoundClosed(1, tuple(results), server_seed=held.played.seed.hex())
    await store.append(held.stream, 6, [NewEvent(uuid.uuid4(), closed)])
    return results


async def casual(store: EventStore, names: tuple[str, str], seed: int) -> None:
    """A casual game of the two, played to its end by bots: rated at its own end."""
    rng = random.Random(seed)
    options = GameOptions(hands=1)
    lobby: list[Any] = [GameCreated("golf", 2, options, token_hash(new_token()))]
    lobby += [SeatClaimed(seat, name, token_hash(new_token())) for seat, name in enumerate(names)]
    bots = [bot("greedy", "golf")] * 2
    played = play_game(DECIDERS["golf"], 2, bots, rng.randbytes(32), rng, options)
    events = [*lobby, *played.events]
    stream = f"game:{secrets.token_hex(8)}"
    await store.append(stream, 0, [NewEvent(uuid.uuid4(), e) for e in events])


async def rating_of(
    http: httpx.AsyncClient, name: str, holds: Callable[[dict[str, Any] | None], bool]
) -> dict[str, Any] | None:
    """The player's rating (None: not rated) once `holds` says the ratings projection has
    got that far."""
    deadline = time.monotonic() + 60
    while True:
        response = await http.get(f"/ratings/{name}")
        assert response.status_code in (200, 404, 503), response.text
        if response.status_code != 503:
            found = response.json() if response.status_code == 200 else None
            if holds(found):
                return found
        assert time.monotonic() < deadline, f"{name}'s rating did not catch up: {response.text}"
        await asyncio.sleep(0.05)


async def people(http: httpx.AsyncClient) -> set[str]:
    """Every name on the leaderboard without bots (`GET /ratings?bots=false`), page by page."""
    names: set[str] = set()
    params: dict[str, Any] = {"bots": "false", "limit": 200}
    while True:
        page = (await http.get("/ratings", params=params)).json()
        names |= {rating["name"] for rating in page["ratings"]}
        if page["next_cursor"] is None:
            return names
        params["cursor"] = page["next_cursor"]


async def test_a_duplicate_table_counts_for_its_players_only_once_its_round_closes(
    store: EventStore, api_base: str
) -> None:
    """Given a duplicate round of two tables where table A has ended and table B plays on,
    then A's players have played one game and finished none, and A is listed in play with
    no total and no place; once both ended and the round closed, A counts with its totals."""
    games = GameService(store, Metrics())
    tag = secrets.token_hex(3)
    held = await held_round(store, games, tag)
    ann = held.names[0]
    a, b = held.played.tables
    await play(games, a)
    await play(games, b, actions=2)
    # A later game seen in /players means the projection is past A's `game.ended`.
    await open_round(
        games, number=1, seed=secrets.token_bytes(32), seating=[(f"eve {tag}", f"fay {tag}")]
    )
    async with httpx.AsyncClient(base_url=api_base, timeout=30) as http:
        await record_of(http, f"eve {tag}", lambda body: body["games_played"] == 1)
        held_record = await record_of(http, ann, lambda body: True)
        counts = ("games_played", "games_finished", "wins")
        assert tuple(held_record[k] for k in counts) == (1, 0, 0)
        places = ("points", "best_place", "worst_place")
        assert tuple(held_record[k] for k in places) == (0, None, None)
        assert held_record["games"] == [
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
        results = await close_round(store, games, held)

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


async def test_a_duplicate_table_moves_no_rating_until_its_round_closes(
    store: EventStore, api_base: str
) -> None:
    """Given a duplicate round of two tables, ann rated once before it (a casual game),
    when table A has ended and table B plays on the same deals, then ann's rating is as it
    was and bob (rated by no other game) has none; once B ended and the round closed, every
    player of both tables has one game more rated."""
    games = GameService(store, Metrics())
    tag = secrets.token_hex(3)
    held = await held_round(store, games, tag)
    ann, bob, cat, dan = held.names
    a, b = held.played.tables
    await casual(store, (ann, f"zed {tag}"), seed=1)
    async with httpx.AsyncClient(base_url=api_base, timeout=30) as http:
        before = await rating_of(http, ann, lambda found: found is not None)
        assert before is not None
        assert before["games"] == 1

        await play(games, a)
        await play(games, b, actions=2)
        # A later game rated means the ratings projection is past A's `game.ended`.
        await casual(store, (f"eve {tag}", f"fay {tag}"), seed=2)
        await rating_of(http, f"eve {tag}", lambda found: found is not None)
        assert await rating_of(http, ann, lambda found: True) == before
        for name in (bob, cat, dan):
            assert await rating_of(http, name, lambda found: True) is None, name
        assert not {bob, cat, dan} & await people(http), "nor on the board without bots"

        await play(games, b)
        await close_round(store, games, held)
        after = await rating_of(http, ann, lambda found: found is not None and found["games"] == 2)
        assert after is not None
        # rated once more: the uncertainty shrinks whatever the result (the round's deals are
        # random, and a tie with the other table's seat would leave mu where it was)
        assert after["sigma"] < before["sigma"]
        for name in (bob, cat, dan):
            rated = await rating_of(http, name, lambda found: found is not None)
            assert rated is not None
            assert rated["games"] == 1, name
        assert {ann, bob, cat, dan} <= await people(http)
