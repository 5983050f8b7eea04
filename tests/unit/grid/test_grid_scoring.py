"""Scoring a layout, variant by variant, with every worked example of the rules."""

from __future__ import annotations

import msgspec
import pytest

from domain.errors import RuleViolation
from domain.grid import BASKETBALL, GOLF, HANG_TEN, TENS, GridGame

pytestmark = pytest.mark.unit


def columns(*pairs: str) -> list[list[str]]:
    """`"AS/AH"` is a column, top card (row 0) first."""
    tops, bottoms = zip(*(pair.split("/") for pair in pairs), strict=True)
    return [list(tops), list(bottoms)]


def pairs(rank: str, k: int) -> list[str]:
    """`k` columns that are pairs of `rank`, the suits taken in turn (real decks hold them)."""
    suits = "SHDC" * 5
    return [f"{rank}{suits[2 * i]}/{rank}{suits[2 * i + 1]}" for i in range(k)]


# ---- Hang Ten --------------------------------------------------------------------------------


def test_hang_ten_values_seven_zero_ace_one_faces_ten() -> None:
    layout = columns("7S/AS", "2S/3S", "4S/5S", "6S/8S", "9S/TS")
    assert HANG_TEN.score(layout).total == 0 + 1 + 5 + 9 + 14 + 19
    assert (
        HANG_TEN.score(columns("JS/QS", "KS/7H", "2S/3S", "4S/5S", "6S/8S")).total
        == 20 + 10 + 5 + 9 + 14
    )


def test_hang_ten_a_column_of_one_rank_scores_zero() -> None:
    assert HANG_TEN.score(columns("KS/KH", "9S/9D", "2S/3S", "4S/5S", "6S/8S")).total == 5 + 9 + 14


def test_hang_ten_jack_and_queen_never_pair() -> None:
    assert HANG_TEN.score(columns("JS/QH", "2S/2D", "3S/3D", "4S/4D", "5S/5D")).total == 20


def test_hang_ten_a_block_of_four_scores_minus_ten() -> None:
    score = HANG_TEN.score(columns("8S/8H", "8D/8C", "2S/3S", "4S/5S", "6S/9S"))
    assert score.total == -10 + 5 + 9 + 15
    assert [(c.kind, c.rank, c.columns, c.points) for c in score.combos] == [
        ("block", "8", (0, 1), -10)
    ]


def test_hang_ten_adjacent_pairs_of_different_ranks_are_no_block() -> None:
    assert HANG_TEN.score(columns("8S/8H", "9D/9C", "2S/3S", "4S/5S", "6S/9S")).total == 29


def test_hang_ten_pairs_apart_are_no_block() -> None:
    assert HANG_TEN.score(columns("8S/8H", "2S/3S", "8D/8C", "4S/5S", "6S/9S")).total == 29


FILLER = ["2S/3S", "4S/5S", "6S/9S", "TS/JS"]


@pytest.mark.parametrize(("run", "total"), [(2, -10 + 29), (3, -10 + 14), (4, -20 + 5), (5, -20)])
def test_hang_ten_blocks_are_taken_left_to_right_without_overlap(run: int, total: int) -> None:
    layout = columns(*(pairs("8", run) + FILLER[: 5 - run]))
    assert HANG_TEN.score(layout).total == total
    assert len(HANG_TEN.score(layout).combos) == run // 2


# ---- Tens ------------------------------------------------------------------------------------


def test_tens_worked_example_plus_six() -> None:
    assert TENS.score(columns("AS/AH", "7S/7H", "7D/7C", "7S/9H", "KS/JH")).total == 6


def test_tens_worked_example_minus_nineteen() -> None:
    assert TENS.score(columns("3S/3H", "6S/6H", "6D/6C", "2S/2H", "KS/AH")).total == -19


def test_tens_values_king_zero_queen_and_jack_ten() -> None:
    assert (
        TENS.score(columns("KS/QH", "JS/AS", "2S/3S", "4S/5S", "6S/9S")).total
        == 10 + 11 + 5 + 9 + 15
    )


@pytest.mark.parametrize(("run", "total"), [(2, -20 + 29), (3, -30 + 14), (4, -40 + 5), (5, -50)])
def test_tens_a_run_of_k_same_rank_pair_columns_scores_minus_ten_k(run: int, total: int) -> None:
    layout = columns(*(pairs("8", run) + FILLER[: 5 - run]))
    assert TENS.score(layout).total == total


# ---- Golf ------------------------------------------------------------------------------------


def test_golf_worked_example_nine() -> None:
    assert GOLF.score(columns("6S/2H", "AS/KH", "4S/4H", "TS/TH")).total == 9


def test_golf_worked_example_one() -> None:
    assert GOLF.score(columns("6S/4H", "AS/KH", "QS/QH", "QD/QC")).total == 1


def test_golf_values_joker_minus_five_king_zero() -> None:
    assert GOLF.score(columns("JK/KH", "AS/2S", "JS/QS", "TS/9S")).total == -5 + 3 + 20 + 19


def test_golf_a_joker_pair_scores_zero_not_minus_ten() -> None:
    assert GOLF.score(columns("JK/JK", "AS/2S", "3S/4S", "5S/6S")).total == 21


def test_golf_two_joker_pairs_group_for_minus_ten() -> None:
    assert GOLF.score(columns("JK/JK", "AS/2S", "JK/JK", "5S/6S")).total == -10 + 3 + 11


def test_golf_same_rank_pair_columns_group_two_at_a_time_adjacent_or_not() -> None:
    assert GOLF.score(columns("5S/5H", "AS/2S", "5D/5C", "3S/4S")).total == -10 + 3 + 7


@pytest.mark.parametrize(("count", "points"), [(2, -10), (3, -10), (4, -20)])
def test_golf_an_odd_pair_column_left_over_scores_zero(count: int, points: int) -> None:
    layout = columns(*(pairs("9", count) + ["2S/3S", "2D/3D"][: 4 - count]))
    assert GOLF.score(layout).total == points + 5 * (4 - count)


def test_golf_kings_pair_like_any_rank() -> None:
    assert GOLF.score(columns("KS/KH", "KD/KC", "2S/3S", "4S/5S")).total == -10 + 14


# ---- Basketball ------------------------------------------------------------------------------


def test_basketball_values_ace_fifteen_king_twenty_five() -> None:
    layout = columns("AS/KS", "2S/3S", "4S/5S", "6S/7S", "8S/JS")
    assert BASKETBALL.score(layout).total == 15 + 25 + 5 + 9 + 13 + 18


def test_basketball_three_nines_score_forty_not_twenty_seven() -> None:
    layout = columns("9S/2S", "9H/3S", "9D/4S", "5S/6S", "7S/8S")
    assert BASKETBALL.score(layout).total == 40 + 2 + 3 + 4 + 5 + 6 + 7 + 8


def test_basketball_a_pair_anywhere_scores_twenty_five() -> None:
    layout = columns("QS/2S", "3S/4S", "5S/6S", "7S/8S", "TS/QH")
    assert BASKETBALL.score(layout).total == 25 + 2 + 3 + 4 + 5 + 6 + 7 + 8 + 10


def test_basketball_four_of_a_rank_score_fifty() -> None:
    layout = columns("9S/9H", "9D/9C", "2S/3S", "4S/5S", "6S/7S")
    assert BASKETBALL.score(layout).total == 50 + 27


def test_basketball_two_aces_score_thirty_aces_and_kings_never_group() -> None:
    layout = columns("AS/AH", "KS/KH", "2S/3S", "4S/5S", "6S/7S")
    assert BASKETBALL.score(layout).total == 30 + 50 + 27


def test_basketball_a_group_caps_at_four_and_further_cards_score_singly() -> None:
    layout = columns("9S/9H", "9D/9C", "9S/2S", "3S/4S", "5S/6S")
    score = BASKETBALL.score(layout)
    assert score.total == 50 + 9 + 20
    assert [(g.rank, g.cards, g.points) for g in score.combos] == [("9", 4, 50)]


# ---- the breakdown ---------------------------------------------------------------------------


def test_the_breakdown_adds_up_and_serialises_as_json() -> None:
    score = TENS.score(columns("AS/AH", "7S/7H", "7D/7C", "7S/9H", "KS/JH"))
    assert score.total == sum(c.points for c in score.columns) + sum(c.points for c in score.combos)
    decoded = msgspec.json.decode(msgspec.json.encode(score))
    assert decoded["total"] == 6
    assert decoded["combos"] == [
        {"kind": "run", "rank": "7", "columns": [1, 2], "cards": 4, "points": -20}
    ]


def test_scoring_rejects_what_is_not_a_layout_of_cards() -> None:
    with pytest.raises(RuleViolation, match="2 rows of 4 cards") as wrong_shape:
        GOLF.score([["AS", "2S"], ["3S"]])
    assert wrong_shape.value.code == "illegal_position"
    with pytest.raises(RuleViolation, match="2 rows of 5 cards"):
        TENS.score([["AS", "2S", "3S", "4S"], ["AS", "2S", "3S", "4S"]])
    with pytest.raises(RuleViolation, match="'ZZ' is not a card") as not_a_card:
        GOLF.score([["AS", "ZZ", "2S", "2S"], ["3S", "4S", "5S", "6S"]])
    assert not_a_card.value.code == "card_not_available"


# ---- what a variant cannot hold ----------------------------------------------------------------


@pytest.mark.parametrize(
    ("game", "layout", "card"),
    [
        (TENS, columns("JK/AS", "2S/3S", "4S/5S", "6S/7S", "8S/9S"), "JK"),
        (HANG_TEN, columns("JK/AS", "2S/3S", "4S/5S", "6S/7S", "8S/9S"), "JK"),
        (BASKETBALL, columns("AS/JK", "2S/3S", "4S/5S", "6S/7S", "8S/9S"), "JK"),
        (GOLF, columns("JK/JK", "JK/JK", "JK/JK", "JK/2S"), "JK"),  # 3 x 2 jokers at most
        (BASKETBALL, columns("9S/9S", "9S/2S", "3S/4S", "5S/6S", "7S/8S"), "9S"),  # 2 decks
        (TENS, columns("KD/KD", "KD/KD", "2S/3S", "4S/5S", "6S/7S"), "KD"),  # 3 decks
        (GOLF, columns("AH/AH", "AH/AH", "2S/3S", "4S/5S"), "AH"),  # 3 decks
        (HANG_TEN, columns("7C/7C", "7C/7C", "7C/3S", "4S/5S", "6S/8S"), "7C"),  # 4 decks
    ],
)
def test_the_scorer_refuses_a_card_the_variant_cannot_hold(
    game: GridGame, layout: list[list[str]], card: str
) -> None:
    with pytest.raises(RuleViolation) as refused:
        game.score(layout)
    assert refused.value.code == "card_not_available"
    assert card in refused.value.message


@pytest.mark.parametrize(
    ("game", "layout"),
    [
        (GOLF, columns("JK/JK", "JK/JK", "JK/JK", "2S/3S")),  # six jokers: 6+ players
        (HANG_TEN, columns("7C/7C", "7C/7C", "2S/3S", "4S/5S", "6S/8S")),  # four decks
        (BASKETBALL, columns("9S/9S", "2S/3S", "4S/5S", "6S/7S", "8S/TS")),  # two decks
    ],
)
def test_the_scorer_accepts_as_many_copies_as_the_largest_deck_holds(
    game: GridGame, layout: list[list[str]]
) -> None:
    assert isinstance(game.score(layout).total, int)
