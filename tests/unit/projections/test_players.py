"""The players projection: who played, how each game ended for them, in their own words."""

from __future__ import annotations

import pytest

from events.schema.common import GameEnded, GameOptions, GameStarted
from events.schema.lobby import GameCreated, SeatClaimed, SeatReleased
from projections.players import Players, places
from tests.support.dict_projector import DictModel, project
from tests.support.feeds import record

pytestmark = pytest.mark.unit


def game(*events: object, stream: str = "game:00000000000000aa", position: int = 0) -> list:
    return [record(stream, v, position + v, e) for v, e in enumerate(events, start=1)]


def created(seats: int = 3, variant: str = "golf") -> GameCreated:
    return GameCreated(variant, seats, GameOptions(), "0" * 64)


async def test_a_name_counts_from_the_start_once_per_seat_it_holds() -> None:
    model = await project(
        Players(),
        game(
            created(),
            SeatClaimed(0, "Ada", "x"),
            SeatClaimed(1, "Ada", "x"),
            SeatClaimed(2, "Bo", "x"),
            SeatReleased(2),
            SeatClaimed(2, "Cyd", "x"),
            GameStarted("golf", 3),
        ),
    )
    assert model.counters == {"player:Ada": {"games": 2}, "player:Cyd": {"games": 1}}
    assert model.indexes == {
        "games:Ada": {"00000000000000aa:0": 7, "00000000000000aa:1": 7},
        "games:Cyd": {"00000000000000aa:2": 7},
    }


async def test_a_lobby_that_never_starts_counts_for_no_one() -> None:
    model = await project(Players(), game(created(2), SeatClaimed(0, "Ada", "x")))
    assert model.counters == {}
    assert model.indexes == {}


async def test_the_end_of_a_game_gives_each_seat_its_result() -> None:
    model = await project(
        Players(),
        game(
            created(),
            SeatClaimed(0, "Ada", "x"),
            SeatClaimed(1, "Bo", "x"),
            SeatClaimed(2, "Ada", "x"),
            GameStarted("golf", 3),
            GameEnded((12, 30, 12), (0, 2)),
        ),
    )
    assert model.counters["player:Ada"] == {
        "games": 2,
        "finished": 2,
        "wins": 2,
        "points": 24,
        "place:1": 2,
    }
    assert model.counters["player:Bo"] == {
        "games": 1,
        "finished": 1,
        "wins": 0,
        "points": 30,
        "place:3": 1,
    }
    assert model.docs["game:00000000000000aa"]["places"] == [1, 3, 1]


@pytest.mark.parametrize(
    ("totals", "winners", "expected"),
    [
        ((10, 4, 7), (1,), [3, 1, 2]),  # low wins
        ((10, 4, 7), (0,), [1, 3, 2]),  # high wins (Basketball)
        ((5, 5, 9), (0, 1), [1, 1, 3]),  # a tie shares the place
        ((3, 3), (0, 1), [1, 1]),
    ],
)
def test_places_follow_the_winners_whichever_way_the_variant_counts(
    totals: tuple[int, ...], winners: tuple[int, ...], expected: list[int]
) -> None:
    assert places(totals, winners) == expected


async def test_an_event_of_a_game_it_never_saw_created_is_an_error() -> None:
    with pytest.raises(ValueError, match="no game document"):
        await project(Players(), [record("game:00000000000000bb", 1, 1, GameStarted("golf", 2))])


async def test_other_streams_are_not_read() -> None:
    players = Players()
    event = record("tournament:spring", 1, 1, created())
    assert players.keys(event) == ()
    assert players.apply(event, {}) == ()
    assert (await project(players, [event])) == DictModel(versions={"tournament:spring": 1})
