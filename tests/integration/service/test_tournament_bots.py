"""Bot players in a tournament, on both real stores: the organiser registers them by name and
level (no token), each of their seats is claimed as a bot seat of that level, with byes,
duplicate seat seeds and withdrawals as for anyone; an unknown level and a registration by
anyone but the organiser are refused and store nothing."""

from __future__ import annotations

import pytest

from domain.errors import RuleViolation
from events.schema.lobby import SeatClaimed, SeatResigned, SeatSeedSet
from events.schema.tournament import PlayerRegistered
from events.store import EventStore
from service.contract.problems import ApiError
from service.ops.metrics import Metrics
from service.play.games import GameService
from service.play.lobby import token_hash
from service.tournaments.record import stream_id
from service.tournaments.service import TournamentService
from tests.support.tournaments import tournament_spec

pytestmark = pytest.mark.integration

BOTS = {"Robo": "greedy", "Dice": "random", "Tin": "greedy"}


async def stored(store: EventStore, stream: str) -> list[object]:
    return [item.data for item in await store.read_stream(stream)]


Opened = tuple[TournamentService, str, str, dict[str, str | None]]


async def opened(store: EventStore, people: int) -> Opened:
    service = TournamentService(store, GameService(store, Metrics()), Metrics())
    record, organiser = await service.create(tournament_spec(), None)
    tid = record.tournament_id
    tokens: dict[str, str | None] = {}
    for name, level in BOTS.items():
        _, tokens[name] = await service.register(tid, organiser, name, bot=level)
    for i in range(people):
        _, tokens[f"player {i}"] = await service.register(tid, organiser, f"player {i}")
    return service, tid, organiser, tokens


async def test_bot_players_are_registered_without_a_token_and_seated_as_bot_seats(
    store: EventStore,
) -> None:
    service, tid, organiser, tokens = await opened(store, 2)
    assert all(tokens[name] is None for name in BOTS)
    registered = [e for e in await stored(store, stream_id(tid)) if isinstance(e, PlayerRegistered)]
    assert [(e.name, e.token_hash, e.bot) for e in registered[:3]] == [
        (name, "", level) for name, level in BOTS.items()
    ]
    started = (await service.start_round(tid, organiser)).record.state.rounds[-1].started
    assert (len(started.tables), len(started.byes)) == (1, 1), "5 players at tables of 4"
    (table,) = started.tables
    events = await stored(store, f"game:{table.game_id}")
    claimed = [e for e in events if isinstance(e, SeatClaimed)]
    for seat, name in enumerate(table.players):
        token = tokens[name]
        digest = "" if token is None else token_hash(token)
        assert claimed[seat] == SeatClaimed(seat, name, digest, BOTS.get(name, ""))
    # A duplicate round: every seat, a bot's too, deals with the round's seat seed.
    seeds = [e for e in events if isinstance(e, SeatSeedSet)]
    assert [s.seed for s in seeds] == [started.seat_seed] * 4
    assert dict(started.seat_seeds_from).keys() >= set(BOTS)

    # The organiser withdraws a seated bot: its seat is resigned as anyone's.
    bot = next(name for name in table.players if name in BOTS)
    before = await stored(store, f"game:{table.game_id}")
    _, resigned = await service.withdraw(tid, organiser, bot)
    assert resigned == [table.game_id]
    after = await stored(store, f"game:{table.game_id}")
    assert after[len(before) :] == [SeatResigned(table.players.index(bot), "withdrawn")]


async def test_an_unknown_level_or_a_bot_not_by_the_organiser_is_refused_and_stores_nothing(
    store: EventStore,
) -> None:
    service, tid, organiser, tokens = await opened(store, 1)
    before = await store.read_stream(stream_id(tid))
    with pytest.raises(RuleViolation) as unknown:
        await service.register(tid, organiser, "Hal", bot="genius")
    assert unknown.value.code == "unknown_bot_level"
    person = tokens["player 0"]
    assert person is not None
    with pytest.raises(ApiError) as not_organiser:
        await service.register(tid, person, "Hal", bot="greedy")
    assert (not_organiser.value.status, not_organiser.value.code) == (403, "not_organiser")
    with pytest.raises(RuleViolation) as taken:
        await service.register(tid, organiser, "Robo", bot="random")
    assert taken.value.code == "name_taken"
    assert await store.read_stream(stream_id(tid)) == before
