"""What each viewer may know: the view, the redacted event feed, the legal actions."""

from __future__ import annotations

import msgspec
import pytest
from grid_helpers import SEED, act, dealt, given, mask, started

from domain.grid import BASKETBALL, GOLF, HANG_TEN, TENS, GridGame
from events.schema.common import DealHand, HandDealt
from events.schema.grid import (
    CardDiscarded,
    CardDrawn,
    CardReplaced,
    CardsPeeked,
    Draw,
    LayoutsRevealed,
    Peek,
    Replace,
)

pytestmark = pytest.mark.unit

LAYOUT = "2S 3S 4S 5S 6S / 7S 8S 9S TS JS"


def test_face_down_cards_are_hidden_from_everyone_their_owner_included() -> None:
    state = given(HANG_TEN, 4, to_play=0, layouts={0: LAYOUT}, face_up={0: mask((0, 1), (1, 3))})
    for viewer in (0, 1, None):
        assert HANG_TEN.view(state, viewer).layouts[0] == (
            (None, "3S", None, None, None),
            (None, None, None, "TS", None),
        )


def test_a_card_drawn_from_the_stock_is_shown_to_the_drawer_alone() -> None:
    state, _ = act(HANG_TEN, given(HANG_TEN, 4, to_play=0, stock="KD"), 0, Draw("stock"))
    assert HANG_TEN.view(state, 0).drawn == "KD"
    assert HANG_TEN.view(state, 1).drawn is None
    assert HANG_TEN.view(state, None).drawn is None
    assert HANG_TEN.view(state, 1).drawn_from == "stock"


def test_a_card_taken_from_a_pile_is_public() -> None:
    state = given(HANG_TEN, 4, to_play=0, piles={1: "4C"})
    state, _ = act(HANG_TEN, state, 0, Draw("pile", 1))
    assert HANG_TEN.view(state, 2).drawn == "4C"


def test_piles_centre_and_stock_size_are_public_the_stock_order_is_not() -> None:
    state = given(HANG_TEN, 4, to_play=0, piles={1: "4C 5C"}, centre="9H", stock="KD QD")
    view = HANG_TEN.view(state, None)
    assert view.discard_piles == ((), ("4C", "5C"), (), ())
    assert (view.centre, view.stock_size) == ("9H", 2)
    assert b"KD" not in msgspec.json.encode(view)


def test_the_commitment_is_always_shown_the_seed_only_after_the_hand() -> None:
    state = dealt(GOLF, 2)
    view = GOLF.view(state, 0)
    assert view.commitment == state.commitment
    assert view.seed is None
    ended = given(GOLF, 2, to_play=1, went_out=0, setup_left=(0, 0), step="draw")
    ended, _ = act(GOLF, ended, 1, Draw("stock"), Replace(0, 0))
    assert GOLF.view(ended, 0).seed == SEED


def test_after_the_hand_every_card_of_it_is_public() -> None:
    state = given(TENS, 2, to_play=1, went_out=0)
    state, _ = act(TENS, state, 1, Draw("stock"), Replace(0, 0))
    view = TENS.view(state, None)
    assert view.layouts == tuple((lay[:5], lay[5:]) for lay in state.layouts)
    assert view.last_hand is not None
    assert view.last_hand.reason == "went_out"
    assert view.peeked == ()


def test_the_view_tells_whose_turn_and_what_step() -> None:
    state = given(GOLF, 3, to_play=1)
    view = GOLF.view(state, 2)
    assert (view.to_play, view.step, view.to_act) == (1, "setup", (1,))
    assert view.rules.name == "golf"


@pytest.mark.parametrize("game", [HANG_TEN, TENS, GOLF, BASKETBALL], ids=lambda g: g.name)
def test_before_the_first_deal_the_view_holds_no_card(game: GridGame) -> None:
    view = game.view(started(game, 4), None)
    assert (view.phase, view.layouts, view.stock_size) == ("awaiting_deal", (), 0)


def test_a_seat_outside_the_game_sees_what_a_spectator_sees() -> None:
    state, _ = act(HANG_TEN, given(HANG_TEN, 4, to_play=0), 0, Draw("stock"))
    assert HANG_TEN.view(state, 9) == HANG_TEN.view(state, None)


# ---- the redacted feed -----------------------------------------------------------------------


def test_the_seed_of_a_live_hand_is_blanked_for_everyone() -> None:
    (event,) = GOLF.decide(started(GOLF, 2), DealHand(SEED))
    for viewer in (0, 1, None):
        redacted = GOLF.redact(event, viewer, hand_over=False)
        assert isinstance(redacted, HandDealt)
        assert (redacted.seed, redacted.commitment) == ("", event.commitment)
    assert GOLF.redact(event, None, hand_over=True) == event


def test_a_stock_draw_is_blanked_for_all_but_the_drawer() -> None:
    event = CardDrawn(0, "stock", None, "KD")
    assert GOLF.redact(event, 0, hand_over=False) == event
    assert GOLF.redact(event, 1, hand_over=False) == CardDrawn(0, "stock", None, None)
    assert GOLF.redact(event, None, hand_over=False).card is None
    assert GOLF.redact(event, 1, hand_over=True) == event


def test_a_draw_from_a_pile_is_public() -> None:
    event = CardDrawn(0, "discard", None, "KD")
    assert GOLF.redact(event, 1, hand_over=False) == event


def test_peeked_cards_are_blanked_for_all_but_the_owner() -> None:
    state = given(BASKETBALL, 2, to_play=0, layouts={0: LAYOUT})
    _, (event,) = act(BASKETBALL, state, 0, Peek())
    assert BASKETBALL.redact(event, 0, hand_over=False) == event
    assert BASKETBALL.redact(event, 1, hand_over=False) == CardsPeeked(0, 1, None)
    assert BASKETBALL.redact(event, None, hand_over=True) == event


def test_revealed_layouts_are_blanked_while_the_hand_is_live() -> None:
    event = LayoutsRevealed(((("AS",), ("2S",)),))
    assert BASKETBALL.redact(event, 0, hand_over=False) == LayoutsRevealed(None)
    assert BASKETBALL.redact(event, 0, hand_over=True) == event


@pytest.mark.parametrize(
    "event", [CardReplaced(0, 0, 0, "KD", "2S"), CardDiscarded(1, "KD")], ids=repr
)
def test_placed_and_discarded_cards_are_public(event: object) -> None:
    assert HANG_TEN.redact(event, None, hand_over=False) == event


# ---- legal actions ---------------------------------------------------------------------------


def test_a_seat_that_may_not_act_has_no_legal_actions() -> None:
    state = given(HANG_TEN, 4, to_play=0)
    assert HANG_TEN.legal_actions(state, 1) == ()
    assert HANG_TEN.legal_actions(state, 7) == ()
