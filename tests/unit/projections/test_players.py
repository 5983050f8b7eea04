"""The players projection: who played, how each game ended for them, in their own words."""

from __future__ import annotations

import pytest

from events.schema.common import GameEnded, GameOptions, GameStarted
from events.schema.lobby import GameCreated, SeatClaimed, SeatReleased
from events.schema.tournament import RoundClosed, TableResult
from projections.players import Players, places
from tests.support import readmodel_reference as reference
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


# ---- duplicate rounds: a table's result waits for its round --------------------------------

TABLE_A, TABLE_B = "00000000000000d1", "00000000000000d2"


def duplicate_round(*, peers: bool = True) -> list:
    """Two tables of one round; table A ends first, then B, then the round closes."""
    ids = (TABLE_A, TABLE_B) if peers else ()

    def table(first: str, second: str) -> list[object]:
        return [
            GameCreated("golf", 2, GameOptions(), "0" * 64, tournament="t1", round=1, peers=ids),
            SeatClaimed(0, first, "x"),
            SeatClaimed(1, second, "x"),
            GameStarted("golf", 2),
        ]

    a = game(*table("Ada", "Bo"), stream=f"game:{TABLE_A}", position=0)
    b = game(*table("Cyd", "Dee"), stream=f"game:{TABLE_B}", position=10)
    a.append(record(f"game:{TABLE_A}", 5, 20, GameEnded((8, 15), (0,))))
    b.append(record(f"game:{TABLE_B}", 5, 21, GameEnded((20, 11), (1,))))
    closed = RoundClosed(
        1,
        (
            TableResult(1, TABLE_A, ("Ada", "Bo"), (8, 15), 3, (0,)),
            TableResult(2, TABLE_B, ("Cyd", "Dee"), (20, 11), 3, (1,)),
        ),
    )
    return [*a, *b, record("tournament:t1", 1, 22, closed)]


async def test_a_duplicate_table_that_ended_reads_as_in_play_until_its_round_closes() -> None:
    feed = duplicate_round()
    before = await project(Players(), feed[:-2])  # table A over, table B still playing
    assert before.counters["player:Ada"] == {"games": 1}
    assert before.counters["player:Bo"] == {"games": 1}
    doc = before.docs[f"game:{TABLE_A}"]
    assert not doc.get("finished")
    assert "totals" not in doc
    assert "places" not in doc
    both_over = await project(Players(), feed[:-1])
    assert both_over.counters["player:Dee"] == {"games": 1}
    assert both_over.docs == before.docs | {f"game:{TABLE_B}": both_over.docs[f"game:{TABLE_B}"]}
    assert "totals" not in both_over.docs[f"game:{TABLE_B}"]


async def test_a_duplicate_table_counts_once_when_its_round_closes() -> None:
    model = await project(Players(), duplicate_round(), batch=3)
    assert model.counters["player:Ada"] == {
        "games": 1,
        "finished": 1,
        "wins": 1,
        "points": 8,
        "place:1": 1,
    }
    assert model.counters["player:Dee"] == {
        "games": 1,
        "finished": 1,
        "wins": 1,
        "points": 11,
        "place:1": 1,
    }
    assert model.docs[f"game:{TABLE_B}"]["places"] == [2, 1]
    assert model.docs[f"game:{TABLE_A}"]["finished"] is True


async def test_a_tournament_game_without_duplicate_deals_counts_at_its_end_and_only_then() -> None:
    feed = duplicate_round(peers=False)
    at_end = await project(Players(), feed[:-1])
    closed = await project(Players(), feed)
    assert at_end.counters["player:Ada"]["finished"] == 1
    assert closed.counters == at_end.counters
    assert closed.docs == at_end.docs


async def test_the_round_close_names_the_round_games_as_its_keys() -> None:
    players = Players()
    assert RoundClosed in players.types
    close = duplicate_round()[-1]
    assert players.keys(close) == (f"game:{TABLE_A}", f"game:{TABLE_B}")
    assert players.apply(close, {}) == []  # games it never saw: nothing to count


@pytest.mark.parametrize("cut", range(1, 12))
async def test_the_reference_agrees_with_the_projection_at_every_point_of_a_duplicate_round(
    cut: int,
) -> None:
    feed = duplicate_round()[:cut]
    model = await project(Players(), feed, batch=2)
    expected = reference.players(feed)
    assert (model.docs, model.counters, model.indexes) == (
        expected.docs,
        expected.counters,
        expected.indexes,
    )
