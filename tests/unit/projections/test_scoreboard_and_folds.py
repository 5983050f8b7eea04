"""The scoreboard, and the fold cache that tells it whose turn it is."""

from __future__ import annotations

import random
from typing import Any

import pytest

from domain.bots.base import RandomBot
from domain.simulate import play_game
from domain.variants import DECIDERS, fold
from events.schema.common import GameOptions, HandEnded
from events.schema.lobby import GameCreated, SeatClaimed, SeatReleased
from events.store.base import RecordedEvent
from projections.folds import FoldError, GameFolds
from projections.runner import VersionGap
from projections.scoreboard import Scoreboard
from tests.support.dict_projector import project
from tests.support.feeds import record

pytestmark = pytest.mark.unit

STREAM = "game:00000000000000aa"


def a_game(variant: str = "tens-shedding", players: int = 3) -> list[RecordedEvent]:
    decider = DECIDERS[variant]
    played = play_game(decider, players, [RandomBot()] * players, b"s" * 32, random.Random(5))
    lobby: list[Any] = [GameCreated(variant, players, GameOptions(), "0" * 64)]
    lobby += [SeatClaimed(seat, f"p{seat}", "x") for seat in range(players)]
    return [record(STREAM, v, v, e) for v, e in enumerate([*lobby, *played.events], start=1)]


def reader(events: list[RecordedEvent], calls: list[tuple[int, int]]) -> Any:
    async def read_stream(stream_id: str, from_version: int, limit: int) -> list[RecordedEvent]:
        calls.append((from_version, limit))
        return events[from_version - 1 : from_version - 1 + limit]

    return read_stream


async def test_the_lobby_shows_who_holds_each_seat_and_no_status() -> None:
    events = [
        record(STREAM, 1, 1, GameCreated("golf", 2, GameOptions(), "0" * 64)),
        record(STREAM, 2, 2, SeatClaimed(1, "Ada", "x")),
        record(STREAM, 3, 3, SeatClaimed(0, "Bo", "x")),
        record(STREAM, 4, 4, SeatReleased(1)),
    ]
    model = await project(Scoreboard(GameFolds()), events)
    assert model.docs == {
        "game:00000000000000aa": {
            "game_id": "00000000000000aa",
            "variant": "golf",
            "version": 4,
            "seats": ["Bo", None],
            "status": None,
        }
    }


async def test_after_every_event_the_turn_is_the_deciders() -> None:
    """Given a whole game, after each event the scoreboard's to_act and phase are those of
    the decider's status folded through that event."""
    events = a_game()
    scoreboard = Scoreboard(GameFolds())
    play = [e.data for e in events[4:]]
    for cut in range(5, len(events) + 1, 7):
        model = await project(scoreboard, events[:cut])
        decider, state = fold(play[: cut - 4])
        status = decider.status(state)
        doc = model.docs[f"game:{STREAM[5:]}"]
        assert doc["status"]["to_act"] == list(status.to_act)
        assert doc["status"]["phase"] == status.phase
        assert doc["version"] == cut
        scoreboard = Scoreboard(GameFolds())
    ended = [e.data for e in events if isinstance(e.data, HandEnded)]
    assert [h["hand"] for h in model.docs[f"hands:{STREAM[5:]}"]["hands"]] == [
        e.hand for e in ended
    ]


async def test_a_game_not_in_the_cache_is_folded_again_from_the_store() -> None:
    events = a_game("golf", 2)
    calls: list[tuple[int, int]] = []
    folds = GameFolds(reader(events, calls), keep=True)
    await folds.prepare(events[30:31])
    assert calls == [(1, 30)]
    assert folds.refolds == 1
    decider, state = fold([e.data for e in events[3:31]])
    assert folds.status_after(events[30]) == decider.status(state)
    assert folds.history(events[30]) == [(e.version, e.data) for e in events[:31]]


async def test_without_a_store_a_miss_is_an_error_not_a_guess() -> None:
    events = a_game("golf", 2)
    with pytest.raises(FoldError, match="no store"):
        await GameFolds().prepare(events[10:11])


async def test_a_store_that_lacks_events_stops_the_projection_as_a_gap() -> None:
    """The runner stops a projection at a gap (state failed, logged, in status): a game
    whose stored stream lacks versions the feed has gone past is one."""
    events = a_game("golf", 2)
    with pytest.raises(VersionGap, match="jumps from version 5 to 11") as gap:
        await GameFolds(reader(events[:5], []), name="scoreboard").prepare(events[10:11])
    assert (gap.value.stream_id, gap.value.applied, gap.value.found) == (STREAM, 5, 11)


async def test_a_store_that_lacks_a_version_inside_the_stream_is_a_gap_not_a_double_fold() -> None:
    """A row missing inside the stored stream (version 7 of 1..30): read by count, the
    stream still gives 30 rows, the next versions in the missing ones' places. Folded, it
    would apply version 8 twice; it stops the projection as a gap instead."""
    events = a_game("golf", 2)
    holed = events[:6] + events[7:]
    with pytest.raises(VersionGap, match="jumps from version 6 to 8") as gap:
        await GameFolds(reader(holed, []), name="scoreboard").prepare(events[30:31])
    assert (gap.value.stream_id, gap.value.applied, gap.value.found) == (STREAM, 6, 8)


async def test_an_event_outside_the_prepared_batch_is_refused() -> None:
    events = a_game("golf", 2)
    folds = GameFolds()
    await folds.prepare(events[:5])
    with pytest.raises(FoldError, match="not in the prepared batch"):
        folds.status_after(events[5])


async def test_the_cache_keeps_at_most_its_bound_and_drops_finished_games() -> None:
    games = [
        [record(f"game:{g:016x}", e.version, e.global_position, e.data) for e in a_game("golf", 2)]
        for g in range(3)
    ]
    folds = GameFolds(max_events=100, keep=True)
    for events in games:
        await folds.prepare(events[:60])
    assert folds.cached_games == 1  # 3 x 60 events > 100: the oldest went first
    last = games[2]
    await folds.prepare(last[60:])
    assert folds.cached_games == 0  # over: no event follows game.ended
    assert folds.status_after(last[-1]) is not None  # the batch is still answered
    assert folds.history(last[-1])[-1] == (last[-1].version, last[-1].data)
