"""A bot seat's move as the runner asks for it (service/bots/moves.py), decided on a game's
record: the same record and seat give the same move (every instance stores the same events);
nothing to do for a seat that is not the bot's or not to act; the runner's fold knows whose
turn is a bot's."""

from __future__ import annotations

import asyncio
import inspect
from datetime import UTC, datetime
from typing import Any
from uuid import uuid4

import pytest

from events.schema.common import GameOptions
from events.schema.lobby import GameCreated, SeatClaimed, SeatResigned
from events.store import RecordedEvent
from service.bots.moves import BOT, OFF_LOOP, THINKING, bot_move
from service.bots.runner import BotTable
from service.commands.command import Actor, Decision, NothingToDo
from service.play.record import ACTION, GameRecord
from service.play.seating import seated, table

pytestmark = pytest.mark.unit

GAME = "0123456789abcdef"


def bot_table(level: str = "greedy") -> tuple[GameRecord, list[Any]]:
    """A started Golf game of two bots of `level`, dealt."""
    created = GameCreated("golf", 2, GameOptions(hands=1), "c" * 64)
    claims = [SeatClaimed(seat, f"bot {seat}", "", bot=level) for seat in range(2)]
    events = seated(GAME, created, claims, 10)
    record = GameRecord.begin(GAME, created)
    for version, event in enumerate(events[1:], start=2):
        record.apply(version, event, {})
    return record, events


def test_the_same_record_and_seat_decide_the_same_move_in_the_seats_name() -> None:
    record, _ = bot_table()
    assert record.decider is not None
    seat = record.decider.status(record.state).to_act[0]
    command = bot_move(GAME, seat, "greedy", 10)
    first = command.decide(record, Actor(f"seat:{seat}", seat))
    again = bot_move(GAME, seat, "greedy", 10).decide(record, Actor(f"seat:{seat}", seat))
    assert isinstance(first, Decision)
    assert isinstance(again, Decision)
    assert (first.events, first.metadata) == (again.events, again.metadata)
    assert first.metadata["seat"] == seat
    assert first.metadata[BOT] == "greedy"
    assert first.metadata[ACTION]
    assert first.answer[THINKING] >= 0.0, "how long the bot took, for the runner's metrics"


def test_a_strong_bot_chooses_off_the_event_loop_the_same_move_each_time() -> None:
    """The strong bot's choice is made in a worker thread: while it is being made, another
    task on the loop runs (an inline choice would have finished first); the move is the
    same each time (every instance decides the same). A greedy bot chooses inline."""
    record, _ = bot_table("strong")
    assert record.decider is not None
    assert "strong" in OFF_LOOP
    seat = record.decider.status(record.state).to_act[0]
    actor = Actor(f"seat:{seat}", seat)

    async def decide_beside_another_task() -> tuple[Any, bool]:
        decided = bot_move(GAME, seat, "strong", 10).decide(record, actor)
        assert inspect.isawaitable(decided)
        move = asyncio.ensure_future(decided)

        async def look() -> bool:
            return move.done()

        meanwhile = asyncio.create_task(look())
        return await move, not await meanwhile

    first, ran_meanwhile = asyncio.run(decide_beside_another_task())
    again, _ = asyncio.run(decide_beside_another_task())
    assert ran_meanwhile
    assert (first.events, first.metadata) == (again.events, again.metadata)
    assert first.answer[THINKING] > 0.0
    assert first.metadata[BOT] == "strong"
    greedy, _ = bot_table()
    assert greedy.decider is not None
    seat = greedy.decider.status(greedy.state).to_act[0]
    inline = bot_move(GAME, seat, "greedy", 10).decide(greedy, Actor(f"seat:{seat}", seat))
    assert not inspect.isawaitable(inline)


@pytest.mark.parametrize("level", ["random", "strong-ish"])
def test_no_move_for_a_level_that_does_not_hold_the_seat(level: str) -> None:
    record, _ = bot_table()
    with pytest.raises(NothingToDo):
        bot_move(GAME, 0, level, 10).decide(record, Actor("seat:0", 0))


def test_no_move_for_a_resigned_seat_the_referee_plays_it_out() -> None:
    record, events = bot_table()
    assert record.decider is not None
    seat = record.decider.status(record.state).to_act[0]
    bot_move(GAME, seat, "greedy", 10).decide(record, Actor(f"seat:{seat}", seat))
    record.apply(len(events) + 1, SeatResigned(seat, "withdrawn"), {})
    with pytest.raises(NothingToDo):
        bot_move(GAME, seat, "greedy", 10).decide(record, Actor(f"seat:{seat}", seat))


def test_the_runners_fold_names_the_bot_seat_to_act_once_per_version() -> None:
    record, events = bot_table()
    table = BotTable()
    at = datetime.now(UTC)
    for version, event in enumerate(events, start=1):
        kind = type(event).__struct_config__.tag
        table.fold(
            RecordedEvent(version, 1, f"game:{GAME}", version, uuid4(), kind, 1, event, {}, at, b"")
        )
    assert record.decider is not None
    seat = min(record.decider.status(record.state).to_act)
    assert table.due() == (seat, "greedy")
    table.tried = table.version
    assert table.due() is None


def test_a_tournament_table_may_seat_a_bot_player() -> None:
    """`seating.table` takes a bot player's level beside its name (no token hash)."""
    created = GameCreated("golf", 2, GameOptions(hands=1), "c" * 64, tournament="t", round=1)
    events = table(GAME, created, [("ann", "a" * 64), ("Robo", "", "greedy")], "", 10)
    claims = [e for e in events if isinstance(e, SeatClaimed)]
    assert claims == [SeatClaimed(0, "ann", "a" * 64), SeatClaimed(1, "Robo", "", bot="greedy")]
