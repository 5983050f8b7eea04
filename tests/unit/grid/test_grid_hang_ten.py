"""Hang Ten, rule by rule: given a hand, when a player acts, then these events or this error."""

from __future__ import annotations

import pytest
from grid_helpers import act, all_up, dealt, first_legal_until, given, mask, rejects, types

from domain.grid import HANG_TEN
from events.schema.common import Act, GameEnded, HandEnded
from events.schema.grid import (
    CardDiscarded,
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
    SetupCardTurned,
    SetupFlip,
    TurnEnded,
)

pytestmark = pytest.mark.unit

HT = HANG_TEN
ROW_0 = "2S 3S 4S 5S 6S"
ROW_1 = "8S 9S TS JS QS"


def setup_state():
    return dealt(HT, 4)


# ---- setup -----------------------------------------------------------------------------------


def test_setup_turns_up_one_card_in_each_row_in_different_columns() -> None:
    state = setup_state()
    after, events = act(HT, state, 2, SetupFlip(0, 0), SetupFlip(1, 1))
    layout = state.layouts[2]
    assert events == [SetupCardTurned(2, 0, 0, layout[0]), SetupCardTurned(2, 1, 1, layout[6])]
    assert after.face_up[2] == mask((0, 0), (1, 1))


def test_setup_refuses_a_second_card_in_the_same_row() -> None:
    state, _ = act(HT, setup_state(), 1, SetupFlip(0, 0))
    error = rejects(HT, state, Act(1, SetupFlip(0, 3)), "illegal_position")
    assert "one in each row, not in the same column" in error.message


def test_setup_refuses_a_second_card_in_the_same_column() -> None:
    state, _ = act(HT, setup_state(), 1, SetupFlip(0, 2))
    rejects(HT, state, Act(1, SetupFlip(1, 2)), "illegal_position")


def test_setup_allows_diagonal_neighbours() -> None:
    state, _ = act(HT, setup_state(), 1, SetupFlip(0, 2), SetupFlip(1, 3))
    assert state.face_up[1] == mask((0, 2), (1, 3))


def test_setup_is_two_flips_only() -> None:
    state, _ = act(HT, setup_state(), 1, SetupFlip(0, 2), SetupFlip(1, 3))
    rejects(HT, state, Act(1, SetupFlip(0, 0)), "already_done")


def test_setup_flips_happen_in_any_order_and_play_starts_when_every_player_is_done() -> None:
    state = setup_state()
    assert HT.status(state).phase == "setup"
    assert HT.status(state).to_act == (0, 1, 2, 3)
    for seat in (3, 1, 0):
        state, _ = act(HT, state, seat, SetupFlip(0, 0), SetupFlip(1, 4))
    assert HT.status(state).phase == "setup"
    assert HT.status(state).to_act == (2,)
    state, _ = act(HT, state, 2, SetupFlip(1, 0), SetupFlip(0, 1))
    assert HT.status(state).phase == "playing"
    assert HT.status(state).to_act == (state.to_play,)


def test_no_turn_starts_before_every_player_has_set_up() -> None:
    state = setup_state()
    first = state.to_play
    state, _ = act(HT, state, first, SetupFlip(0, 0), SetupFlip(1, 4))
    rejects(HT, state, Act(first, Draw("stock")), "setup_incomplete")


# ---- drawing ---------------------------------------------------------------------------------


def test_draw_the_top_card_of_the_stock() -> None:
    state = given(HT, 4, to_play=0, stock="KD 2C 3C")
    after, events = act(HT, state, 0, Draw("stock"))
    assert events == [CardDrawn(0, "stock", None, "KD")]
    assert (after.drawn, after.stock_size) == ("KD", 2)


def test_take_the_centre_card_and_it_is_gone_until_the_next_deal() -> None:
    state = given(HT, 4, to_play=0, centre="7H")
    after, events = act(HT, state, 0, Draw("centre"))
    assert events == [CardDrawn(0, "centre", None, "7H")]
    after, _ = act(HT, after, 0, Discard())
    assert after.centre is None
    assert Draw("centre") not in HT.legal_actions(after, 1)
    rejects(HT, after, Act(1, Draw("centre")), "card_not_available")


def test_take_the_top_card_of_an_opponents_discard_pile() -> None:
    state = given(HT, 4, to_play=0, piles={2: "4C 9D"})
    after, events = act(HT, state, 0, Draw("pile", 2))
    assert events == [CardDrawn(0, "pile", 2, "9D")]
    assert after.piles[2] == ("4C",)


def test_never_take_from_your_own_discard_pile() -> None:
    state = given(HT, 4, to_play=0, piles={0: "4C 9D"})
    error = rejects(HT, state, Act(0, Draw("pile", 0)), "card_not_available")
    assert "own" in error.message


def test_an_empty_pile_offers_nothing() -> None:
    state = given(HT, 4, to_play=0)
    rejects(HT, state, Act(0, Draw("pile", 1)), "card_not_available")


def test_there_is_no_shared_discard_pile() -> None:
    state = given(HT, 4, to_play=0)
    rejects(HT, state, Act(0, Draw("discard")), "card_not_available")


def test_the_draw_sources_offered() -> None:
    state = given(HT, 4, to_play=0, centre="7H", piles={1: "4C", 3: "5C", 0: "6C"})
    assert HT.legal_actions(state, 0) == (
        Draw("stock"),
        Draw("centre"),
        Draw("pile", 1),
        Draw("pile", 3),
    )


# ---- placing ---------------------------------------------------------------------------------


def test_replace_a_face_up_card_which_goes_face_up_onto_your_own_pile() -> None:
    state = given(
        HT,
        4,
        to_play=0,
        layouts={0: f"{ROW_0} / {ROW_1}"},
        face_up={0: mask((0, 0), (1, 1))},
        stock="KD",
    )
    state, _ = act(HT, state, 0, Draw("stock"))
    after, events = act(HT, state, 0, Replace(0, 0))
    assert events[0] == CardReplaced(0, 0, 0, "KD", "2S", was_face_up=True)
    assert after.layouts[0][0] == "KD"
    assert after.piles[0] == ("2S",)
    assert events[1] == TurnEnded(0, 1)


def test_replace_a_face_down_card_unseen() -> None:
    state = given(HT, 4, to_play=0, layouts={0: f"{ROW_0} / {ROW_1}"}, stock="KD")
    state, _ = act(HT, state, 0, Draw("stock"))
    after, events = act(HT, state, 0, Replace(1, 4))
    assert events[0] == CardReplaced(0, 1, 4, "KD", "QS", was_face_up=False)
    assert after.face_up[0] == mask((1, 4))
    assert after.piles[0] == ("QS",)


def test_discard_the_drawn_card_onto_your_own_pile_and_no_flip_follows() -> None:
    state = given(HT, 4, to_play=0, stock="KD")
    state, _ = act(HT, state, 0, Draw("stock"))
    assert HT.legal_actions(state, 0)[-1] == Discard()
    after, events = act(HT, state, 0, Discard())
    assert events == [CardDiscarded(0, "KD"), TurnEnded(0, 1)]
    assert after.piles[0] == ("KD",)
    assert after.face_up == state.face_up
    assert after.to_play == 1


def test_a_taken_card_may_be_discarded_too() -> None:
    state = given(HT, 4, to_play=0, piles={1: "4C"})
    state, _ = act(HT, state, 0, Draw("pile", 1))
    after, events = act(HT, state, 0, Discard())
    assert events[0] == CardDiscarded(0, "4C")
    assert after.piles[:2] == (("4C",), ())


def test_replace_may_choose_any_card() -> None:
    state = given(HT, 4, to_play=0, face_up={0: all_up()})
    state, _ = act(HT, state, 0, Draw("stock"))
    replaces = [a for a in HT.legal_actions(state, 0) if isinstance(a, Replace)]
    assert len(replaces) == 10


def test_hang_ten_has_no_flip_no_peek_and_no_going_out_by_choice() -> None:
    state = given(HT, 4, to_play=0)
    for action in (Flip(0, 0), GoOut(), EndTurn(), Peek()):
        rejects(HT, state, Act(0, action), "unknown_action")


# ---- turn order ------------------------------------------------------------------------------


def test_only_the_player_to_play_acts() -> None:
    state = given(HT, 4, to_play=0)
    rejects(HT, state, Act(1, Draw("stock")), "not_your_turn")


def test_a_card_is_drawn_before_it_is_placed() -> None:
    state = given(HT, 4, to_play=0)
    rejects(HT, state, Act(0, Replace(0, 0)), "wrong_phase")
    rejects(HT, state, Act(0, Discard()), "wrong_phase")


def test_one_draw_per_turn() -> None:
    state, _ = act(HT, given(HT, 4, to_play=0), 0, Draw("stock"))
    rejects(HT, state, Act(0, Draw("stock")), "wrong_phase")


def test_setup_is_over_once_play_has_started() -> None:
    state = given(HT, 4, to_play=0)
    rejects(HT, state, Act(0, SetupFlip(0, 0)), "already_done")


# ---- going out -------------------------------------------------------------------------------


def test_going_out_gives_every_other_player_exactly_one_more_turn() -> None:
    last_down = all_up() & ~mask((1, 4))
    state = given(HT, 4, to_play=0, face_up={0: last_down}, stock="KD 2C 3C 4C 5C")
    state, _ = act(HT, state, 0, Draw("stock"))
    state, events = act(HT, state, 0, Replace(1, 4))
    assert types(events) == ["CardReplaced", "PlayerWentOut", "TurnEnded"]
    assert events[1:] == [PlayerWentOut(0), TurnEnded(0, 1)]
    for seat in (1, 2):
        state, events = act(HT, state, seat, Draw("stock"), Discard())
        assert events[-1] == TurnEnded(seat, seat + 1)
    state, events = act(HT, state, 3, Draw("stock"), Discard())
    assert types(events) == [
        "CardDrawn",
        "CardDiscarded",
        "TurnEnded",
        "LayoutsRevealed",
        "HandEnded",
    ]
    assert events[2] == TurnEnded(3, None)
    ended = events[-1]
    assert isinstance(ended, HandEnded)
    assert ended.reason == "went_out"
    assert ended.scores == tuple(
        HT.score([list(layout[:5]), list(layout[5:])]).total for layout in state.layouts
    )
    assert HT.status(state).phase == "awaiting_deal"


def test_face_down_cards_are_revealed_when_the_hand_ends() -> None:
    state = given(HT, 4, to_play=3, went_out=0)
    state, events = act(HT, state, 3, Draw("stock"), Discard())
    revealed = events[-2].layouts
    assert revealed == tuple((layout[:5], layout[5:]) for layout in state.layouts)
    view = HT.view(state, None)
    assert all(None not in row for layout in view.layouts for row in layout)


# ---- the game --------------------------------------------------------------------------------


def test_a_game_is_ten_deals_and_the_lowest_total_wins() -> None:
    state = first_legal_until(HT, dealt(HT, 4, turn_limit=1), ("game_over",))
    assert state.hand == 10
    assert HT.status(state).winners == tuple(
        seat for seat, total in enumerate(state.totals) if total == min(state.totals)
    )


def test_the_game_ends_with_the_tenth_hand() -> None:
    state = given(HT, 4, to_play=3, went_out=0, hand=10)
    _, events = act(HT, state, 3, Draw("stock"), Discard())
    assert isinstance(events[-1], GameEnded)
    assert isinstance(events[-2], HandEnded)
