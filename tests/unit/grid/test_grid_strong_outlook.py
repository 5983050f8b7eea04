"""The strong grid bot's look-ahead: a layout is worth its cost less what the next draw is
expected to save (Golf, Basketball), and nothing once the seat's own turn ends the hand."""

from __future__ import annotations

import pytest
from grid_helpers import all_up, given, mask

from domain.grid import BASKETBALL, GOLF, strong_eval
from domain.grid.scoring import VALUES
from domain.grid.strong import Plan
from domain.grid.strong_eval import Knowledge
from domain.grid.strong_outlook import basketball_outlook, golf_outlook

pytestmark = pytest.mark.unit

GOLF_VALUES = VALUES["golf"]


def golf(ranks: str, odds: dict[str, float], unknown: float = 5.0, weight: float = 1.0) -> float:
    """`"9 K / ? K"`: two rows of ranks, `?` a face-down card."""
    laid = [None if r == "?" else r for r in ranks.replace("/", " ").split()]
    return golf_outlook(laid, len(laid) // 2, GOLF_VALUES, odds, unknown, weight)


def test_without_look_ahead_a_golf_layout_costs_its_score_as_the_rules_count_it() -> None:
    assert golf("6 A 4 T / 2 K 4 T", {}, weight=0.0) == 9
    assert golf("6 A Q Q / 4 K Q Q", {}, weight=0.0) == 1
    assert golf("9 ? / ? K", {}, unknown=5.5, weight=0.0) == 9 + 5.5 + 5.5


def test_a_golf_card_beside_a_face_down_one_is_worth_its_chance_to_pair() -> None:
    # Every unseen card is a 9: the next draw pairs the 9's column (9 + 5 saved).
    assert golf("9 K / ? K", {"9": 1.0}) == 0
    # Half the unseen cards are 9s, half kings: a king is best put over the 9 (9 saved).
    assert golf("9 K / ? K", {"9": 0.5, "K": 0.5}) == 14 - 0.5 * 14 - 0.5 * 9


def test_the_golf_saving_counts_the_group_a_second_paired_column_makes() -> None:
    # Q/Q and Q/?: a queen on the face-down card makes two paired queen columns, -10.
    assert golf("Q Q / Q ?", {"Q": 1.0}) == -10
    # The weight scales the saving only.
    assert golf("Q Q / Q ?", {"Q": 1.0}, weight=0.5) == 15 - 0.5 * 25


def test_the_golf_saving_never_counts_a_draw_that_would_make_the_layout_worse() -> None:
    # Jokers pair for 0, not -10: a joker beside a joker is no gain, the face-down card is.
    assert golf("JK ? / K K", {"JK": 1.0}) == golf("JK ? / K K", {}, weight=0.0) - 10


def basketball_knowledge() -> Knowledge:
    state = given(BASKETBALL, 4, to_play=0)
    return Knowledge(BASKETBALL.view(state, 0))


SINGLES = ["3", "4", "5", "6", "7", "8", "9", "T", "J", "2"]
"""Ten ranks, no group: 64 points."""


def test_a_basketball_layout_with_no_face_down_card_is_worth_its_score() -> None:
    know = basketball_knowledge()
    assert know.cost(SINGLES) == -64
    assert basketball_outlook(know, SINGLES, []) == -64


def test_a_basketball_face_down_card_is_worth_the_best_card_a_draw_may_put_there(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # The draw's look-ahead alone: a peeked card's option (its chance to be swapped out,
    # tested below) is off here; with the king alone in the odds it is nothing anyway.
    monkeypatch.setattr(strong_eval, "BASKETBALL_OPTION", 0.0)
    know = basketball_knowledge()
    know.odds = {"K": 1.0}
    # The peeked 2 gives way to the king the next draw brings: 64 - 2 + 25.
    assert basketball_outlook(know, SINGLES, [9]) == -87
    assert basketball_outlook(know, SINGLES, [0, 9]) == -87
    know = basketball_knowledge()  # a seat's knowledge is made once per decision
    know.odds = {"K": 0.5, "2": 0.5}
    # A 2 drawn onto the 3 would pair the 2s (25 for the two, 3 lost): +20.
    assert basketball_outlook(know, SINGLES, [0, 9]) == -64 - 0.5 * 23 - 0.5 * 20


def golf_plan(face_up: int) -> Plan:
    state = given(
        GOLF,
        4,
        layouts={0: "9S KS 4H 4D / 5C KH 4S 4C"},
        face_up={0: face_up},
        to_play=0,
        setup_left=(0, 0, 0, 0),
    )
    return Plan(GOLF.view(state, 0))


def test_in_golf_a_layout_the_turn_leaves_all_face_up_gets_no_next_draw() -> None:
    plan = golf_plan(all_up(4))
    assert plan.cost(plan.ranks) == plan.know.cost(plan.ranks) == 9 + 5 - 10


def test_in_golf_a_layout_with_a_face_down_card_counts_the_next_draw() -> None:
    plan = golf_plan(all_up(4) & ~mask((1, 0), columns=4))
    assert plan.ranks[4] is None
    assert plan.cost(plan.ranks) < plan.know.cost(plan.ranks)


def golf_finish(second: str) -> Plan:
    """Seat 0 may go out: seven cards up (4 points) and one face down; seat 1 lies as
    given, all face up; seats 2 and 3 are far behind (50)."""
    far = "QS JS TS 9S / 8H 6H 4H 3H"
    state = given(
        GOLF,
        4,
        layouts={0: "3S KS 2S 4S / 3H KH 2H 8D", 1: second, 2: far, 3: far},
        face_up={0: all_up(4) & ~mask((1, 3), columns=4), 1: all_up(4), 2: all_up(4), 3: all_up(4)},
        to_play=0,
        setup_left=(0, 0, 0, 0),
    )
    return Plan(GOLF.view(state, 0))


def test_golf_goes_out_only_if_ahead_of_what_the_others_final_draws_may_bring() -> None:
    # Seat 1 scores 12 now (J/2 and A/9 beside a group of sevens), above seat 0's 4 and a
    # face-down card, but its final draw is likely to cut that by the J or the 9.
    plan = golf_finish("JS 7S 7H AS / 2C 7D 7C 9H")
    assert plan.know.cost(plan.ranks, final=True) < 12
    assert not plan.going_out_pays()
    # Far behind, seat 1 could not catch up with one card.
    assert golf_finish("QS JS TS 9S / 8H 6H 4H 3H").going_out_pays()


def test_a_peeked_basketball_card_still_face_down_is_worth_its_chance_to_be_swapped() -> None:
    know = basketball_knowledge()
    # The peeked 2 at the end: most draws beat it, so it is worth well above its 2 points.
    assert know.cost(SINGLES, open_=[9]) < know.cost(SINGLES) - 3
    # Turned up, or never face down: its value alone.
    assert know.cost(SINGLES, open_=[]) == know.cost(SINGLES) == -64
    # No draw beats a king: a peeked king is worth its 25 and no more.
    kings = [*SINGLES[:9], "K"]
    assert know.cost(kings, open_=[9]) == know.cost(kings)
    # A 3 that pairs another 3 adds 22 points: only a king beats it, so its worth is small.
    paired = [*SINGLES[:9], "3"]
    assert 0 < know.cost(paired) - know.cost(paired, open_=[9]) < 1
