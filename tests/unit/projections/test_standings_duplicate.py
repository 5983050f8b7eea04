"""A live duplicate round's standings show no table further than every table still playing
has got: a hand ended at one table is still to come at another."""

from __future__ import annotations

import msgspec
import pytest

from projections import boards
from projections.standings import LiveRound, LiveTable, TableGame, Tournament, live_tables, now

pytestmark = pytest.mark.unit


def tournament(duplicate: bool) -> Tournament:
    tables = (LiveTable(1, "g1", ("ann", "bob")), LiveTable(2, "g2", ("cat", "dan")))
    return Tournament(
        name="open",
        variant="golf",
        high_wins=False,
        rounds=1,
        players=("ann", "bob", "cat", "dan"),
        live=LiveRound(1, tables),
        duplicate=duplicate,
    )


def game(table: int, history: list[tuple[int, int]], phase: str = "playing") -> dict[str, object]:
    doc = TableGame(
        "t",
        1,
        table,
        2,
        phase=phase,
        totals=history[-1] if history else (),
        hands=len(history),
        winners=(0,) if phase == "ended" else (),
        history=tuple(history),
    )
    return msgspec.to_builtins(doc)  # type: ignore[no-any-return]


AHEAD = [(3, 5), (7, 6), (9, 14)]
BEHIND = [(4, 4)]


def test_a_table_ahead_is_shown_as_it_stood_where_the_slowest_table_is() -> None:
    games = [game(1, AHEAD), game(2, BEHIND)]
    (first, _), (second, _) = live_tables(tournament(duplicate=True), games)
    assert (first.totals, first.hands) == ((3, 5), 1)
    assert (second.totals, second.hands) == ((4, 4), 1)
    rows = {row.player: row.total for row in now(tournament(duplicate=True), games)}
    assert rows == {"ann": 3, "bob": 5, "cat": 4, "dan": 4}


def test_a_table_that_has_ended_shows_nothing_beyond_the_tables_still_playing() -> None:
    games = [game(1, AHEAD, phase="ended"), game(2, [])]
    (first, phase), _ = live_tables(tournament(duplicate=True), games)
    assert (first.totals, first.hands, first.winners, phase) == ((0, 0), 0, (), "playing")


def test_once_every_table_has_ended_the_round_is_shown_whole() -> None:
    games = [game(1, AHEAD, phase="ended"), game(2, AHEAD, phase="ended")]
    (first, phase), _ = live_tables(tournament(duplicate=True), games)
    assert (first.totals, first.hands, first.winners, phase) == ((9, 14), 3, (0,), "ended")


def test_tables_dealt_their_own_cards_are_shown_as_they_stand() -> None:
    games = [game(1, AHEAD), game(2, BEHIND)]
    (first, _), _ = live_tables(tournament(duplicate=False), games)
    assert (first.totals, first.hands) == ((9, 14), 3)


def test_a_live_rounds_boards_go_no_further_than_the_slowest_table_still_playing() -> None:
    live = msgspec.structs.replace(tournament(duplicate=True), scoring="matchpoints")
    games = [game(1, AHEAD), game(2, BEHIND)]
    found = boards.round_boards(live, 1, games)
    assert found is not None
    assert [(b.hand, b.seat) for b in found] == [(1, 0), (1, 1)]  # hand 2 is to come at table 2
    assert [[(e.player, e.score, e.matchpoints) for e in b.entries] for b in found] == [
        [("ann", 3, 2), ("cat", 4, 0)],
        [("bob", 5, 0), ("dan", 4, 2)],
    ]
    assert boards.round_boards(live, 1, [game(1, AHEAD), game(2, [])]) == []
    assert boards.round_boards(live, 2, games) is None  # not started
    rows = {row.player: row.percent for row in boards.now(live, games)}
    assert rows == {"ann": 100.0, "bob": 0.0, "cat": 0.0, "dan": 100.0}
