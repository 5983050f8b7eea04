"""Matchpoints (domain/tournament/matchpoints.py) against boards worked by hand, and as
properties: a board's points always add up to the points available, and a player's
percentage does not move when every table's result at a seat shifts by the same amount."""

from __future__ import annotations

from fractions import Fraction

import pytest
from hypothesis import given
from hypothesis import strategies as st

from domain.tournament.matchpoints import TableHands, board, standings, top, travellers

pytestmark = pytest.mark.unit


def test_a_golf_board_worked_by_hand_with_a_tie() -> None:
    # Four tables held the same cards: 3 beats 5, 5 and 9; the two 5s tie and beat 9.
    assert board({1: 5, 2: 3, 3: 9, 4: 5}, high_wins=False) == {1: 3, 2: 6, 3: 0, 4: 3}
    assert top(4) == 6
    assert sum(board({1: 5, 2: 3, 3: 9, 4: 5}, high_wins=False).values()) == 4 * 3


def test_basketball_is_won_high() -> None:
    assert board({1: 5, 2: 3, 3: 9, 4: 5}, high_wins=True) == {1: 3, 2: 0, 3: 6, 4: 3}


def test_everyone_tied_is_half_of_the_top() -> None:
    assert board({1: 7, 2: 7, 3: 7}, high_wins=False) == {1: 2, 2: 2, 3: 2}


def test_a_board_played_at_one_table_compares_nothing() -> None:
    assert board({2: 11}, high_wins=False) == {2: 0}
    assert top(1) == 0


def three_tables() -> list[TableHands]:
    """Round 2 of a golf tournament: three tables of two, two hands each (seven players,
    so g sits out), scores by hand then seat."""
    return [
        TableHands(1, "g1", ("a", "b"), ((4, 10), (0, 6))),
        TableHands(2, "g2", ("c", "d"), ((4, 2), (5, 6))),
        TableHands(3, "g3", ("e", "f"), ((9, 2), (1, 8))),
    ]


def test_two_seats_of_three_tables_worked_by_hand() -> None:
    boards = travellers(2, three_tables(), high_wins=False)
    assert [(t.hand, t.seat) for t in boards] == [(1, 0), (1, 1), (2, 0), (2, 1)]
    points = {(t.hand, t.seat): [(e.player, e.matchpoints) for e in t.entries] for t in boards}
    # hand 1, seat 0: 4, 4, 9 -> the 4s tie each other and beat 9
    assert points[1, 0] == [("a", 3), ("c", 3), ("e", 0)]
    # hand 1, seat 1: 10, 2, 2 -> the 2s tie and beat 10
    assert points[1, 1] == [("b", 0), ("d", 3), ("f", 3)]
    assert points[2, 0] == [("a", 4), ("c", 0), ("e", 2)]
    assert points[2, 1] == [("b", 3), ("d", 3), ("f", 0)]
    first = boards[0].entries[0]
    assert (first.game_id, first.score, first.top, first.percent) == ("g1", 4, 4, 75.0)
    rows = standings("abcdefg", boards, byes=["g"])
    by_name = {row.player: row for row in rows}
    # a: 3/4, 4/4 -> 87.5%; c: 3/4, 0/4 -> 37.5%; d: 3/4, 3/4 -> 75%
    assert by_name["a"].percent == 87.5
    assert (by_name["a"].matchpoints, by_name["a"].top, by_name["a"].boards) == (7, 8, 2)
    assert by_name["c"].percent == 37.5
    assert by_name["d"].percent == 75.0
    # the bye plays no board: no percentage, ranked last, its bye counted
    assert by_name["g"].percent is None
    assert by_name["g"].byes == 1
    # b, c, f: 37.5% with 3 points each share rank 3; e: 0/4 and 2/4, 25%
    assert [r.player for r in rows] == ["a", "d", "b", "c", "f", "e", "g"]
    assert [r.rank for r in rows] == [1, 2, 3, 3, 3, 6, 7]


def test_a_table_that_played_fewer_hands_leaves_a_board_to_the_others() -> None:
    tables = [
        TableHands(1, "g1", ("a", "b"), ((1, 2), (3, 4), (5, 6))),
        TableHands(2, "g2", ("c", "d"), ((2, 2), (3, 5))),
        TableHands(3, "g3", ("e", "f"), ((3, 1),)),
    ]
    boards = {(t.hand, t.seat): t for t in travellers(1, tables, high_wins=False)}
    assert [e.table for e in boards[2, 0].entries] == [1, 2]
    assert boards[2, 0].entries[0].top == 2
    alone = boards[3, 1].entries
    assert len(alone) == 1
    assert (alone[0].matchpoints, alone[0].top, alone[0].percent) == (0, 0, None)
    rows = {row.player: row for row in standings("abcdef", boards.values())}
    assert rows["a"].boards == 2  # hand 3 compared nothing: left out of a's percentage
    assert rows["e"].percent == 0.0  # 3 against 1 and 2: last on its one board


def test_a_withdrawn_player_keeps_the_boards_their_seat_earned() -> None:
    rows = standings("abcdefg", travellers(2, three_tables(), False), withdrawn=["a"])
    assert rows[0].player == "a"
    assert rows[0].withdrawn


def test_equal_players_share_a_rank_and_are_listed_by_name() -> None:
    tables = [
        TableHands(1, "g1", ("b", "x"), ((1, 1),)),
        TableHands(2, "g2", ("a", "y"), ((1, 1),)),
    ]
    rows = standings(["a", "b", "x", "y"], travellers(1, tables, False))
    assert [(r.rank, r.player, r.percent) for r in rows] == [
        (1, "a", 50.0),
        (1, "b", 50.0),
        (1, "x", 50.0),
        (1, "y", 50.0),
    ]


scores = st.lists(st.integers(-50, 120), min_size=1, max_size=9)


@given(scores, st.booleans())
def test_a_boards_points_add_up_to_the_points_available(results: list[int], high: bool) -> None:
    earned = board(dict(enumerate(results, start=1)), high)
    n = len(results)
    assert sum(earned.values()) == n * top(n) // 2 == n * (n - 1)
    assert all(0 <= points <= top(n) for points in earned.values())


@st.composite
def rounds(draw: st.DrawFn) -> list[TableHands]:
    seats = draw(st.integers(2, 4))
    tables = draw(st.integers(2, 5))
    hands = draw(st.integers(1, 4))
    score = st.integers(-20, 60)
    return [
        TableHands(
            table,
            f"g{table}",
            tuple(f"p{table}.{seat}" for seat in range(seats)),
            tuple(tuple(draw(score) for _ in range(seats)) for _ in range(hands)),
        )
        for table in range(1, tables + 1)
    ]


@given(rounds(), st.booleans(), st.data())
def test_a_percentage_is_unchanged_when_a_seats_results_all_shift(
    tables: list[TableHands], high: bool, data: st.DataObject
) -> None:
    seat = data.draw(st.integers(0, len(tables[0].players) - 1))
    hand = data.draw(st.integers(1, len(tables[0].scores)))
    shift = data.draw(st.integers(-30, 30))

    def shifted(table: TableHands) -> TableHands:
        scores = [list(row) for row in table.scores]
        scores[hand - 1][seat] += shift
        return TableHands(table.table, table.game_id, table.players, tuple(map(tuple, scores)))

    players = [p for t in tables for p in t.players]
    before = standings(players, travellers(1, tables, high))
    after = standings(players, travellers(1, [shifted(t) for t in tables], high))
    assert before == after


@given(rounds(), st.booleans())
def test_every_board_of_a_round_shares_out_its_points(tables: list[TableHands], high: bool) -> None:
    for traveller in travellers(1, tables, high):
        n = len(traveller.entries)
        assert sum(e.matchpoints for e in traveller.entries) == n * (n - 1)
        total = sum(Fraction(e.matchpoints, e.top) for e in traveller.entries)
        assert total == Fraction(n, 2)  # the percentages average 50%
