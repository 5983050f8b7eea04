"""The standings function (domain/tournament/standings.py): the order, its tie-breaks, byes,
low and high wins, withdrawn players, and the bye score."""

from __future__ import annotations

import pytest

from domain.tournament.standings import RoundResult, Seat, round_mean, standings


def ranked(rows: list) -> list[tuple[int, str]]:  # type: ignore[type-arg]
    return [(row.rank, row.player) for row in rows]


def test_the_lowest_total_leads_the_golf_family_and_the_highest_basketball() -> None:
    game = RoundResult(1, (Seat("Ada", 10, 2, True), Seat("Bo", 25, 2), Seat("Cy", 17, 2)))
    assert ranked(standings(["Ada", "Bo", "Cy"], [game], high_wins=False)) == [
        (1, "Ada"),
        (2, "Cy"),
        (3, "Bo"),
    ]
    assert ranked(standings(["Ada", "Bo", "Cy"], [game], high_wins=True)) == [
        (1, "Bo"),
        (2, "Cy"),
        (3, "Ada"),
    ]


def test_totals_games_hands_wins_and_average_add_up_over_rounds() -> None:
    rounds = [
        RoundResult(1, (Seat("Ada", 10, 2, True), Seat("Bo", 14, 2))),
        RoundResult(2, (Seat("Ada", 9, 3), Seat("Bo", 3, 3, True))),
    ]
    rows = {row.player: row for row in standings(["Ada", "Bo"], rounds, high_wins=False)}
    assert (rows["Ada"].total, rows["Ada"].games, rows["Ada"].hands, rows["Ada"].won) == (
        19,
        2,
        5,
        1,
    )
    assert rows["Ada"].average == 3.8
    assert (rows["Bo"].total, rows["Bo"].won, rows["Bo"].average) == (17, 1, 3.4)
    assert rows["Bo"].rank == 1


def test_equal_totals_are_split_by_average_then_wins_else_share_a_rank() -> None:
    # Ada and Bo: 20 each; Ada over 4 hands (5.0), Bo over 5 (4.0): lower average first.
    # Cy and Di: 30 each over 3 hands; Di won a game, Cy none. Ed and Fay: equal in all.
    rounds = [
        RoundResult(
            1,
            (
                Seat("Ada", 20, 4),
                Seat("Bo", 20, 5),
                Seat("Cy", 30, 3),
                Seat("Di", 30, 3, True),
                Seat("Fay", 40, 2),
                Seat("Ed", 40, 2),
            ),
        )
    ]
    rows = standings(["Ada", "Bo", "Cy", "Di", "Ed", "Fay"], rounds, high_wins=False)
    assert ranked(rows) == [(1, "Bo"), (2, "Ada"), (3, "Di"), (4, "Cy"), (5, "Ed"), (5, "Fay")]


def test_higher_average_breaks_a_tie_when_high_totals_win() -> None:
    rounds = [RoundResult(1, (Seat("Ada", 20, 4), Seat("Bo", 20, 5)))]
    assert ranked(standings(["Ada", "Bo"], rounds, high_wins=True)) == [(1, "Ada"), (2, "Bo")]


def test_a_bye_scores_the_bye_score_and_counts_a_game_but_no_hand() -> None:
    rounds = [RoundResult(1, (Seat("Ada", 12, 3), Seat("Bo", 18, 3)), byes=("Cy",), bye_score=15)]
    rows = {row.player: row for row in standings(["Ada", "Bo", "Cy"], rounds, high_wins=False)}
    cy = rows["Cy"]
    assert (cy.total, cy.games, cy.hands, cy.byes, cy.average, cy.rank) == (15, 1, 0, 1, None, 2)


def test_a_player_without_a_hand_ranks_behind_an_equal_total_with_one() -> None:
    rounds = [RoundResult(1, (Seat("Ada", 0, 2),), byes=("Bo",), bye_score=0)]
    assert ranked(standings(["Ada", "Bo", "Cy"], rounds, high_wins=False)) == [
        (1, "Ada"),
        (2, "Bo"),
        (2, "Cy"),
    ]


def test_withdrawn_players_stay_ranked_and_are_marked() -> None:
    rounds = [RoundResult(1, (Seat("Ada", 5, 1), Seat("Bo", 9, 1)))]
    rows = standings(["Ada", "Bo"], rounds, high_wins=False, withdrawn=["Ada"])
    assert [(r.player, r.rank, r.withdrawn) for r in rows] == [("Ada", 1, True), ("Bo", 2, False)]


def test_every_registered_player_is_listed_even_before_a_round() -> None:
    rows = standings(["Bo", "Ada"], [], high_wins=False)
    assert [(r.rank, r.player, r.total, r.games, r.average) for r in rows] == [
        (1, "Ada", 0, 0, None),
        (1, "Bo", 0, 0, None),
    ]


@pytest.mark.parametrize(
    ("totals", "mean"),
    [
        ((), 0),
        ((1, 2), 2),
        ((1, 2, 2), 2),
        ((-1, -2), -2),
        ((-3, 2), -1),
        ((-3, 4), 1),
        ((-4, 5, 0), 0),
        ((10, 11, 11, 11), 11),
    ],
)
def test_the_bye_score_is_the_mean_rounded_half_away_from_zero(
    totals: tuple[int, ...], mean: int
) -> None:
    assert round_mean(totals) == mean
