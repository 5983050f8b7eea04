"""Duplicate rounds built by hand, the way the tournament service builds them (written in
parallel): the games' `game.created` appended to the store with the round's peers and the
round chain of `domain.tournament.seeds`, its seats claimed by the players' names and seeded
with the round's seat seed in the same append (as `GameService.open_table` does), then the
games started and played by the greedy bot through GameService (the real command path, on
a real store)."""

from __future__ import annotations

import random
import secrets
import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from domain.seed_chain import new_chain
from domain.shuffle import Stream
from domain.tournament.seeds import round_chain, round_seat_seed, seating_seed
from domain.variants import bot
from events.schema.common import GameOptions
from events.schema.lobby import GameCreated, SeatClaimed, SeatSeedSet
from events.schema.tournament import (
    PlayerRegistered,
    PlayerSeedSet,
    RoundClosed,
    RoundStarted,
    TableResult,
    TableSeats,
    TournamentCreated,
    TournamentEnded,
)
from events.store import NewEvent
from service.play.games import GameService, stream_id
from service.play.lobby import new_token, token_hash


@dataclass
class Table:
    game_id: str
    creator: str
    players: tuple[str, ...]
    tokens: list[str]


@dataclass
class Round:
    number: int
    seed: bytes
    """x_r, the round's link of the tournament's chain."""
    hands: int
    seat_seed: str
    seeds_from: tuple[tuple[str, str], ...]
    tables: list[Table]

    @property
    def ids(self) -> tuple[str, ...]:
        return tuple(table.game_id for table in self.tables)


async def open_round(
    games: GameService,
    *,
    number: int,
    seed: bytes,
    seating: Sequence[tuple[str, ...]],
    variant: str = "golf",
    hands: int = 2,
    tournament: str = "",
    seeds_from: tuple[tuple[str, str], ...] | None = None,
) -> Round:
    """Create, seat, seed and start a duplicate round's games (one per table of `seating`)."""
    chain = round_chain(seed, hands)
    if seeds_from is None:
        seeds_from = tuple(sorted((name, name) for names in seating for name in names))
    seat_seed = round_seat_seed(number, seeds_from)
    ids = tuple(secrets.token_hex(8) for _ in seating)
    tables = []
    for table, (game_id, names) in enumerate(zip(ids, seating, strict=True), 1):
        creator = new_token()
        created = GameCreated(
            variant,
            len(names),
            GameOptions(hands=hands),
            token_hash(creator),
            f"round {number} table {table}",
            seed_anchor=chain.anchor,
            seed_hands=chain.hands,
            seed_secret=chain.secret,
            tournament=tournament,
            round=number,
            table=table,
            peers=ids,
        )
        tokens = [new_token() for _ in names]
        events = [created]
        events += [
            SeatClaimed(seat, name, token_hash(tokens[seat])) for seat, name in enumerate(names)
        ]
        events += [SeatSeedSet(seat, seat_seed) for seat in range(len(names))]
        new = [NewEvent(uuid.uuid4(), event) for event in events]
        await games.store.append(stream_id(game_id), 0, new)
        await games.start(game_id, creator)
        tables.append(Table(game_id, creator, tuple(names), tokens))
    return Round(number, seed, hands, seat_seed, seeds_from, tables)


async def play(
    games: GameService, table: Table, *, hands: int | None = None, actions: int | None = None
) -> None:
    """Play `table` with the greedy bot at every seat until it is over, or has finished
    `hands` hands, or `actions` actions were taken."""
    rng = random.Random(table.game_id)
    taken = 0
    while actions is None or taken < actions:
        record = await games.load(table.game_id)
        decider, state = record.decider, record.state
        assert decider is not None
        status = decider.status(state)
        if status.phase == "game_over":
            return
        if hands is not None and max(record.hand_ended_at, default=0) >= hands:
            return
        seat = status.to_act[rng.randrange(len(status.to_act))]
        player = bot("greedy", decider.name)
        choice = player.choose(decider.view(state, seat), decider.legal_actions(state, seat), rng)
        await games.act(table.game_id, table.tokens[seat], decider.pick(choice, rng))
        taken += 1


@dataclass
class Tournament:
    tournament_id: str
    players: tuple[str, ...]
    rounds: list[Round]


async def run_tournament(
    games: GameService,
    *,
    players: Sequence[str] = ("ann", "bob", "cat", "dan", "eve"),
    table_size: int = 2,
    rounds: int = 2,
    hands: int = 2,
    seeds: dict[str, str] | None = None,
    end: bool = True,
) -> Tournament:
    """An honest duplicate tournament, start to end, in its own stream as the tournament
    service writes it: created (the anchor of its chain over rounds), players registered and
    seeding, then each round's games made, `round.started`, the games played out by the bot,
    `round.closed` revealing x_r; `tournament.ended`. Round 1 is seated by the shuffle;
    later rounds by the reversed shuffle (what seats them is not audited)."""
    seeds = seeds if seeds is not None else {"bob": "bob's luck"}
    tournament_id = secrets.token_hex(8)
    stream = f"tournament:{tournament_id}"
    chain = new_chain(secrets.token_bytes(32), 1, rounds)
    created = TournamentCreated(
        "duplicate cup",
        "golf",
        GameOptions(hands=hands),
        table_size,
        rounds,
        "rotation",
        True,
        token_hash(new_token()),
        chain.anchor,
        chain.secret,
    )
    events: list[Any] = [created]
    events += [PlayerRegistered(name, token_hash(new_token())) for name in players]
    events += [PlayerSeedSet(name, seed) for name, seed in seeds.items()]
    version = await _append(games, stream, 0, events)
    seeds_from = tuple(sorted((name, seeds.get(name, name)) for name in players))
    played_rounds = []
    for number in range(1, rounds + 1):
        seed = chain.server_seed(number)
        order, _ = Stream(seating_seed(seed, 1)).shuffled(sorted(players))
        order = order if number == 1 else tuple(reversed(order))
        seated = len(order) - len(order) % table_size
        seating = [order[i : i + table_size] for i in range(0, seated, table_size)]
        byes = tuple(sorted(order[seated:]))
        played = await open_round(
            games,
            number=number,
            seed=seed,
            seating=seating,
            hands=hands,
            tournament=tournament_id,
            seeds_from=seeds_from,
        )
        tables = tuple(TableSeats(i, t.game_id, t.players) for i, t in enumerate(played.tables, 1))
        started = RoundStarted(number, tables, byes, played.seat_seed, seeds_from)
        version = await _append(games, stream, version, [started])
        results = []
        for i, table in enumerate(played.tables, 1):
            await play(games, table)
            record = await games.load(table.game_id)
            status = record.status()
            assert status is not None
            results.append(
                TableResult(
                    i, table.game_id, table.players, status.totals, status.hand, status.winners
                )
            )
        closed = RoundClosed(number, tuple(results), byes, 0, seed.hex())
        version = await _append(games, stream, version, [closed])
        played_rounds.append(played)
    if end:
        await _append(games, stream, version, [TournamentEnded(rounds)])
    return Tournament(tournament_id, tuple(players), played_rounds)


async def _append(games: GameService, stream: str, version: int, events: list[Any]) -> int:
    result = await games.store.append(
        stream, version, [NewEvent(uuid.uuid4(), event) for event in events]
    )
    return result.last_version
