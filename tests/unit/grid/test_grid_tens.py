"""Tens (the grid game), rule by rule."""

from __future__ import annotations

import pytest
from grid_helpers import act, all_up, dealt, given, mask, rejects, types
from msgspec.structs import replace

from domain.grid import TENS
from domain.grid.state import GridState
from events.schema.common import Act, GameEnded, HandEnded
from events.schema.grid import (
    CardDrawn,
    CardReplaced,
    Discard,
    Draw,
    EndTurn,
    Flip,
    GoOut,
    Peek,
    PlayerWentOut,
    Replace,
    SetupFlip,
    TurnEnded,
)

pytestmark = pytest.mark.unit


def setup_state() -> GridState:
    return dealt(TENS, 3)


# ---- setup -----------------------------------------------------------------------------------


def test_setup_turns_up_three_cards_no_two_orthogonally_adjacent() -> None:
    state, events = act(TENS, setup_state(), 0, SetupFlip(0, 0), SetupFlip(1, 1), SetupFlip(0, 2))
    assert types(events) == ["SetupCardTurned"] * 3
    assert state.face_up[0] == mask((0, 0), (1, 1), (0, 2))


def test_setup_refuses_a_card_beside_another_in_its_row() -> None:
    state, _ = act(TENS, setup_state(), 0, SetupFlip(0, 0))
    error = rejects(TENS, state, Act(0, SetupFlip(0, 1)), "illegal_position")
    assert "no two orthogonally adjacent" in error.message


def test_setup_refuses_a_card_above_or_below_another() -> None:
    state, _ = act(TENS, setup_state(), 0, SetupFlip(0, 3))
    rejects(TENS, state, Act(0, SetupFlip(1, 3)), "illegal_position")


def test_setup_allows_diagonal_neighbours_and_cards_further_apart_in_a_row() -> None:
    state, _ = act(TENS, setup_state(), 0, SetupFlip(0, 0), SetupFlip(1, 1), SetupFlip(1, 3))
    assert state.face_up[0] == mask((0, 0), (1, 1), (1, 3))


def test_setup_is_three_flips_only_and_play_starts_when_all_are_done() -> None:
    state = setup_state()
    for seat in (2, 0, 1):
        state, _ = act(TENS, state, seat, SetupFlip(0, 0), SetupFlip(0, 2), SetupFlip(0, 4))
    assert TENS.status(state).phase == "playing"
    rejects(TENS, state, Act(0, SetupFlip(1, 1)), "already_done")


def test_no_turn_starts_before_every_player_has_set_up() -> None:
    state = setup_state()
    rejects(TENS, state, Act(state.to_play, Draw("stock")), "setup_incomplete")


# ---- drawing ---------------------------------------------------------------------------------


def test_the_first_player_must_draw_from_the_stock() -> None:
    state = given(TENS, 3, to_play=0)
    assert TENS.legal_actions(state, 0) == (Draw("stock"),)
    rejects(TENS, state, Act(0, Draw("pile", 1)), "card_not_available")


def test_take_the_top_card_of_any_other_players_pile() -> None:
    state = given(TENS, 3, to_play=0, piles={2: "3H 8C"})
    state, events = act(TENS, state, 0, Draw("pile", 2))
    assert events == [CardDrawn(0, "pile", 2, "8C")]


def test_never_take_from_your_own_pile() -> None:
    state = given(TENS, 3, to_play=0, piles={0: "3H"})
    rejects(TENS, state, Act(0, Draw("pile", 0)), "card_not_available")


def test_there_is_no_centre_card_and_no_shared_pile() -> None:
    state = given(TENS, 3, to_play=0)
    rejects(TENS, state, Act(0, Draw("centre")), "card_not_available")
    rejects(TENS, state, Act(0, Draw("discard")), "card_not_available")


# ---- placing ---------------------------------------------------------------------------------


def test_the_card_must_be_placed_it_can_never_be_discarded() -> None:
    state, _ = act(TENS, given(TENS, 3, to_play=0), 0, Draw("stock"))
    assert Discard() not in TENS.legal_actions(state, 0)
    error = rejects(TENS, state, Act(0, Discard()), "must_keep_card")
    assert "never discarded" in error.message


def test_a_taken_card_must_be_placed_too() -> None:
    state = given(TENS, 3, to_play=0, piles={1: "3H"})
    state, _ = act(TENS, state, 0, Draw("pile", 1))
    rejects(TENS, state, Act(0, Discard()), "must_keep_card")


def test_the_card_replaces_any_card_face_up_or_face_down_onto_your_own_pile() -> None:
    layout = "AS 2S 3S 4S 5S / 6S 7S 8S 9S TS"
    state = given(TENS, 3, to_play=0, layouts={0: layout}, face_up={0: mask((0, 1))}, stock="KH QH")
    state, _ = act(TENS, state, 0, Draw("stock"))
    assert len(TENS.legal_actions(state, 0)) == 10
    state, events = act(TENS, state, 0, Replace(0, 1))
    assert events[0] == CardReplaced(0, 0, 1, "KH", "2S", was_face_up=True)
    state = replace(state, to_play=0, step="draw")
    state, events = act(TENS, state, 0, Draw("stock"), Replace(1, 0))
    assert events[1] == CardReplaced(0, 1, 0, "QH", "6S", was_face_up=False)
    assert state.piles[0] == ("2S", "6S")


def test_tens_has_no_flip_no_peek_and_no_going_out_by_choice() -> None:
    state = given(TENS, 3, to_play=0)
    for action in (Flip(0, 0), GoOut(), EndTurn(), Peek()):
        rejects(TENS, state, Act(0, action), "unknown_action")


# ---- going out -------------------------------------------------------------------------------


def test_going_out_gives_every_other_player_exactly_one_more_turn() -> None:
    state = given(TENS, 3, to_play=1, face_up={1: all_up() & ~mask((0, 0))}, stock="2C 3C 4C")
    state, events = act(TENS, state, 1, Draw("stock"), Replace(0, 0))
    assert events[-2:] == [PlayerWentOut(1), TurnEnded(1, 2)]
    state, events = act(TENS, state, 2, Draw("stock"), Replace(0, 0))
    assert events[-1] == TurnEnded(2, 0)
    state, events = act(TENS, state, 0, Draw("stock"), Replace(0, 0))
    assert events[-3] == TurnEnded(0, None)
    assert events[-1].reason == "went_out"


# ---- the game --------------------------------------------------------------------------------


def test_the_game_goes_on_while_every_total_is_within_a_hundred() -> None:
    zero = ("AS", "2S", "AS", "2S", "AS", "AH", "2H", "AH", "2H", "AH")
    state = given(TENS, 2, to_play=1, went_out=0, totals=(100, -100), stock="KS")
    state = replace(state, layouts=(zero, zero))
    state, events = act(TENS, state, 1, Draw("stock"), Replace(0, 0))
    assert isinstance(events[-1], HandEnded)
    assert events[-1].totals == (100, -99)
    assert TENS.status(state).phase == "awaiting_deal"


def test_the_game_ends_after_a_hand_with_a_total_above_a_hundred_lowest_wins() -> None:
    state = given(TENS, 2, to_play=1, went_out=0, totals=(95, 20))
    layouts = ("TS TH TD TC 9S / 9H 9D 9C 8S 8H", "KS KH KD KC KS / QH QD QC JS JH")
    state = replace(
        state, layouts=tuple(tuple(layout.replace("/", "").split()) for layout in layouts)
    )
    _, events = act(TENS, state, 1, Draw("stock"), Replace(0, 0))
    assert isinstance(events[-1], GameEnded)
    assert events[-1].winners == (1,)


def test_the_game_ends_after_a_hand_with_a_total_below_minus_a_hundred() -> None:
    state = given(TENS, 2, to_play=1, went_out=0, totals=(-95, 0))
    runs = ("8S", "8H", "8D", "8C", "8S", "8H", "8D", "8C", "8S", "8H")
    state = replace(state, layouts=(runs, state.layouts[1]))
    _, events = act(TENS, state, 1, Draw("stock"), Replace(0, 0))
    assert events[-2].scores[0] == -50
    assert isinstance(events[-1], GameEnded)
    assert events[-1].winners == (0,)
