"""Tens-shedding, a play and its result: burn, next player, or pick up the pile."""

from __future__ import annotations

import pytest
from shedding_given import RULES, live, run, table

from events.schema.common import Act
from events.schema.shedding import CardsPlayed, PileBurned, PilePickedUp, PlayCards, PlayPassed

pytestmark = pytest.mark.unit

UP = ["KS", "KH", "KD", "KC"]
DOWN = ["QS", "QH", "QD", "QC"]


def test_a_play_puts_cards_of_one_rank_from_hand_and_face_up_stacks_on_the_pile() -> None:
    state = table([["5H", "5C", "9S"], ["2S"]], face_up=[["5D", "KH", "5S", "KC"], UP])
    events, after = run(state, Act(0, PlayCards(hand=("5C",), stacks=(2, 0))))
    assert events[0] == CardsPlayed(0, ("5C",), (2, 0), ("5S", "5D"))
    round_ = live(after)
    assert round_.pile == ("5C", "5S", "5D")
    assert round_.players[0].hand == ("5H", "9S")
    assert round_.players[0].face_up == (None, "KH", None, "KC")


def test_a_play_on_an_empty_pile_passes_to_the_next_player() -> None:
    events, after = run(table([["KS", "2H"], ["3S"]]), Act(0, PlayCards(hand=("KS",))))
    assert events[1:] == (PlayPassed(0, 1),)
    assert RULES.status(after).to_act == (1,)


def test_a_play_at_the_current_rank_passes_to_the_next_player() -> None:
    state = table([["2S"], ["8S", "3H"], ["4D"]], pile=["8H"], turn=1)
    events, after = run(state, Act(1, PlayCards(hand=("8S",))))
    assert events[1:] == (PlayPassed(1, 2),)
    assert live(after).pile == ("8H", "8S")


def test_a_play_below_the_current_rank_passes_to_the_next_player() -> None:
    state = table([["2S", "3C"], ["8S"]], pile=["JH"])
    events, _ = run(state, Act(0, PlayCards(hand=("2S",))))
    assert events[1:] == (PlayPassed(0, 1),)


def test_play_goes_to_the_left_and_wraps_around_to_seat_0() -> None:
    state = table([["2S"], ["3S"], ["4S", "4H"]], turn=2)
    events, _ = run(state, Act(2, PlayCards(hand=("4S",))))
    assert events[1:] == (PlayPassed(2, 0),)


def test_a_higher_rank_takes_the_whole_pile_into_the_hand_and_plays_again() -> None:
    state = table([["9S", "2C"], ["3S"]], pile=["4H", "7D"])
    events, after = run(state, Act(0, PlayCards(hand=("9S",))))
    assert events[1:] == (PilePickedUp(0, ("4H", "7D", "9S")),)
    round_ = live(after)
    assert round_.pile == ()
    assert sorted(round_.players[0].hand) == sorted(["2C", "4H", "7D", "9S"])
    assert RULES.status(after).to_act == (0,)


def test_a_ten_burns_the_pile_and_the_same_player_plays_again() -> None:
    state = table([["TS", "2C"], ["3S"]], pile=["4H", "KD"])
    events, after = run(state, Act(0, PlayCards(hand=("TS",))))
    assert events[1:] == (PileBurned(0, ("4H", "KD", "TS")),)
    round_ = live(after)
    assert round_.pile == ()
    assert round_.burned == ("4H", "KD", "TS")
    assert RULES.status(after).to_act == (0,)


def test_a_ten_burns_even_on_an_empty_pile() -> None:
    events, _ = run(table([["TS", "2C"], ["3S"]]), Act(0, PlayCards(hand=("TS",))))
    assert events[1:] == (PileBurned(0, ("TS",)),)


def test_a_ten_burns_rather_than_picking_up_a_lower_pile() -> None:
    events, _ = run(table([["TS", "2C"], ["3S"]], pile=["3H"]), Act(0, PlayCards(hand=("TS",))))
    assert isinstance(events[1], PileBurned)


def test_four_of_a_rank_in_one_play_burn_the_pile() -> None:
    state = table([["6S", "6H", "6D", "2C"], ["3S"]], face_up=[["6C", *UP[1:]], UP], pile=["9D"])
    events, after = run(state, Act(0, PlayCards(hand=("6S", "6H", "6D"), stacks=(0,))))
    assert events[1:] == (PileBurned(0, ("9D", "6S", "6H", "6D", "6C")),)
    assert RULES.status(after).to_act == (0,)


def test_four_consecutive_cards_of_a_rank_across_plays_burn_the_pile() -> None:
    state = table([["5S", "5H", "2C"], ["3S"]], pile=["9D", "5D", "5C"])
    events, _ = run(state, Act(0, PlayCards(hand=("5S", "5H"))))
    assert events[1:] == (PileBurned(0, ("9D", "5D", "5C", "5S", "5H")),)


def test_four_of_a_rank_that_are_not_consecutive_on_top_do_not_burn() -> None:
    state = table([["5S", "5H", "2C"], ["3S"]], pile=["5D", "4C", "5C"])
    events, _ = run(state, Act(0, PlayCards(hand=("5S", "5H"))))
    assert events[1:] == (PlayPassed(0, 1),)


def test_a_burn_by_four_of_a_rank_comes_before_the_next_player() -> None:
    state = table([["7S", "2C"], ["3S"]], pile=["7D", "7C", "7H"])
    events, _ = run(state, Act(0, PlayCards(hand=("7S",))))
    assert isinstance(events[1], PileBurned)


def test_a_burn_by_four_of_a_rank_comes_before_a_pick_up() -> None:
    # Four eights on top of a lower rank: higher than the 3 below, but burned, not taken.
    state = table([["8S", "8H", "8D", "8C", "2C"], ["3S"]], face_up=[UP, UP], pile=["3D"])
    events, _ = run(state, Act(0, PlayCards(hand=("8S", "8H", "8D", "8C"))))
    assert isinstance(events[1], PileBurned)


def test_after_a_burn_the_next_play_goes_on_an_empty_pile() -> None:
    state = table([["TS", "KC", "2D"], ["3S"]], pile=["4H"])
    _, burned = run(state, Act(0, PlayCards(hand=("TS",))))
    events, _ = run(burned, Act(0, PlayCards(hand=("KC",))))
    assert events[1:] == (PlayPassed(0, 1),)
