"""Golf (eight cards), rule by rule."""

from __future__ import annotations

from typing import Any

import pytest
from grid_helpers import act, all_up, dealt, first_legal_until, given, mask, rejects, types

from domain.grid import GOLF
from domain.grid.state import GridState
from events.schema.common import Act, GameEnded, HandEnded
from events.schema.grid import (
    CardDiscarded,
    CardDrawn,
    CardReplaced,
    CardTurned,
    Discard,
    Draw,
    EndTurn,
    Flip,
    GoOut,
    Peek,
    PlayerWentOut,
    Replace,
    SetupCardTurned,
    SetupFlip,
    TurnEnded,
)

pytestmark = pytest.mark.unit

LAYOUT = "AS 2S 3S 4S / 5S 6S 7S 8S"
FULL = all_up(4)


def up(*spots: tuple[int, int]) -> int:
    return mask(*spots, columns=4)


def playing(face_up: int = 0, **changes: Any) -> GridState:
    """Seat 0 to draw, every player's first-turn flips done."""
    changes.setdefault("stock", "KD QD JD TD")
    return given(
        GOLF,
        3,
        to_play=0,
        setup_left=(0, 0, 0),
        step="draw",
        layouts={0: LAYOUT},
        face_up={0: face_up},
        piles={0: "9C 3H"},
        **changes,
    )


# ---- the first turn --------------------------------------------------------------------------


def test_the_first_turn_starts_with_two_flips_in_one_column_before_drawing() -> None:
    state = dealt(GOLF, 3)
    first = state.to_play
    assert GOLF.status(state).phase == "playing"
    assert len(GOLF.legal_actions(state, first)) == 8
    rejects(GOLF, state, Act(first, Draw("stock")), "setup_incomplete")
    state, events = act(GOLF, state, first, SetupFlip(0, 2))
    assert GOLF.legal_actions(state, first) == (SetupFlip(1, 2),)
    error = rejects(GOLF, state, Act(first, SetupFlip(1, 3)), "illegal_position")
    assert "same column" in error.message
    state, more = act(GOLF, state, first, SetupFlip(1, 2))
    layout = state.layouts[first]
    assert events + more == [
        SetupCardTurned(first, 0, 2, layout[2]),
        SetupCardTurned(first, 1, 2, layout[6]),
    ]
    assert state.step == "draw"


def test_other_players_flip_only_at_the_start_of_their_own_first_turn() -> None:
    state = dealt(GOLF, 3)
    other = (state.to_play + 1) % 3
    rejects(GOLF, state, Act(other, SetupFlip(0, 0)), "not_your_turn")
    state, _ = act(GOLF, state, state.to_play, SetupFlip(0, 0), SetupFlip(1, 0))
    state, _ = act(GOLF, state, state.to_play, Draw("stock"), Replace(0, 1))
    assert (state.to_play, state.step) == (other, "setup")
    assert GOLF.status(state).to_act == (other,)


def test_the_first_turn_flips_happen_once() -> None:
    state = playing()
    rejects(GOLF, state, Act(0, SetupFlip(0, 0)), "already_done")


# ---- drawing ---------------------------------------------------------------------------------


def test_draw_from_the_stock_or_the_discard_pile() -> None:
    state = playing()
    assert GOLF.legal_actions(state, 0) == (Draw("stock"), Draw("discard"))
    _, events = act(GOLF, state, 0, Draw("discard"))
    assert events == [CardDrawn(0, "discard", None, "3H")]


def test_there_is_no_centre_card_and_no_personal_pile() -> None:
    state = playing()
    rejects(GOLF, state, Act(0, Draw("centre")), "card_not_available")
    rejects(GOLF, state, Act(0, Draw("pile", 1)), "card_not_available")


# ---- placing ---------------------------------------------------------------------------------


def test_replace_any_card_the_replaced_card_goes_face_up_onto_the_discard_pile() -> None:
    state, _ = act(GOLF, playing(face_up=up((0, 1), (1, 1))), 0, Draw("stock"))
    after, events = act(GOLF, state, 0, Replace(0, 1))
    assert events == [CardReplaced(0, 0, 1, "KD", "2S", was_face_up=True), TurnEnded(0, 1)]
    assert after.piles == (("9C", "3H", "2S"),)
    after, events = act(GOLF, state, 0, Replace(1, 3))
    assert events[0] == CardReplaced(0, 1, 3, "KD", "8S", was_face_up=False)


def test_a_card_from_the_discard_pile_must_be_kept() -> None:
    state, _ = act(GOLF, playing(), 0, Draw("discard"))
    error = rejects(GOLF, state, Act(0, Discard()), "must_keep_card")
    assert "must be kept" in error.message


def test_a_discarded_stock_card_is_followed_by_a_compulsory_flip() -> None:
    state, _ = act(GOLF, playing(face_up=up((0, 0), (1, 0))), 0, Draw("stock"))
    state, events = act(GOLF, state, 0, Discard())
    assert events == [CardDiscarded(0, "KD")]
    assert GOLF.legal_actions(state, 0) == tuple(Flip(r, c) for r in (0, 1) for c in (1, 2, 3))
    rejects(GOLF, state, Act(0, EndTurn()), "wrong_phase")
    rejects(GOLF, state, Act(0, GoOut()), "wrong_phase")
    rejects(GOLF, state, Act(0, Flip(0, 0)), "illegal_position")
    after, events = act(GOLF, state, 0, Flip(1, 2))
    assert events == [CardTurned(0, 1, 2, "7S"), TurnEnded(0, 1)]
    assert after.face_up[0] == up((0, 0), (1, 0), (1, 2))


def test_a_flip_leaving_one_card_down_ends_the_turn() -> None:
    state, _ = act(GOLF, playing(face_up=FULL & ~up((0, 0), (1, 0))), 0, Draw("stock"), Discard())
    _, events = act(GOLF, state, 0, Flip(0, 0))
    assert events == [CardTurned(0, 0, 0, "AS"), TurnEnded(0, 1)]


def test_with_one_card_down_after_discarding_it_may_be_left_down() -> None:
    state, _ = act(GOLF, playing(face_up=FULL & ~up((1, 3))), 0, Draw("stock"), Discard())
    assert GOLF.legal_actions(state, 0) == (GoOut(), EndTurn())
    rejects(GOLF, state, Act(0, Flip(1, 3)), "wrong_phase")
    after, events = act(GOLF, state, 0, EndTurn())
    assert events == [TurnEnded(0, 1)]
    assert after.went_out is None
    assert after.face_up[0] == FULL & ~up((1, 3))


def test_with_one_card_down_after_replacing_the_player_may_go_out() -> None:
    state, _ = act(GOLF, playing(face_up=FULL & ~up((1, 3))), 0, Draw("discard"), Replace(0, 0))
    assert GOLF.legal_actions(state, 0) == (GoOut(), EndTurn())
    after, events = act(GOLF, state, 0, GoOut())
    assert events == [CardTurned(0, 1, 3, "8S"), PlayerWentOut(0), TurnEnded(0, 1)]
    assert after.went_out == 0


def test_replacing_leaving_one_card_down_offers_the_same_choice() -> None:
    state, _ = act(
        GOLF, playing(face_up=FULL & ~up((1, 3), (1, 2))), 0, Draw("stock"), Replace(1, 2)
    )
    assert GOLF.legal_actions(state, 0) == (GoOut(), EndTurn())


def test_replacing_the_last_face_down_card_goes_out() -> None:
    state = playing(face_up=FULL & ~up((1, 3)))
    _, events = act(GOLF, state, 0, Draw("stock"), Replace(1, 3))
    assert types(events) == ["CardDrawn", "CardReplaced", "PlayerWentOut", "TurnEnded"]


def test_after_going_out_every_other_player_has_exactly_one_final_turn() -> None:
    state, _ = act(GOLF, playing(face_up=FULL & ~up((1, 3))), 0, Draw("stock"), Replace(1, 3))
    state, events = act(GOLF, state, 1, Draw("stock"), Replace(0, 0))
    assert events[-1] == TurnEnded(1, 2)
    state, events = act(GOLF, state, 2, Draw("stock"), Replace(0, 0))
    assert types(events)[-3:] == ["TurnEnded", "LayoutsRevealed", "HandEnded"]
    assert events[-1].reason == "went_out"
    rejects(GOLF, state, Act(0, Draw("stock")), "hand_over")


def test_golf_has_no_peek() -> None:
    rejects(GOLF, playing(), Act(0, Peek()), "unknown_action")


def test_a_position_off_the_four_column_grid_is_illegal() -> None:
    state, _ = act(GOLF, playing(), 0, Draw("stock"))
    error = rejects(GOLF, state, Act(0, Replace(0, 4)), "illegal_position")
    assert "2x4" in error.message


# ---- the game --------------------------------------------------------------------------------


def test_a_game_is_nine_holes_and_the_lowest_total_wins() -> None:
    state = first_legal_until(GOLF, dealt(GOLF, 2, turn_limit=1), ("game_over",))
    assert state.hand == 9
    assert GOLF.status(state).winners == tuple(
        seat for seat, total in enumerate(state.totals) if total == min(state.totals)
    )


def test_the_ninth_hand_ends_the_game() -> None:
    state = given(GOLF, 2, to_play=1, went_out=0, hand=9, setup_left=(0, 0), step="draw")
    _, events = act(GOLF, state, 1, Draw("stock"), Replace(0, 0))
    assert isinstance(events[-2], HandEnded)
    assert isinstance(events[-1], GameEnded)
