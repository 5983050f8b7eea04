"""Ten-card Basketball, rule by rule."""

from __future__ import annotations

from typing import Any

import pytest
from grid_helpers import act, all_up, dealt, given, mask, rejects, types

from domain.grid import BASKETBALL
from domain.grid.state import GridState
from events.schema.common import Act, GameEnded, HandEnded
from events.schema.grid import (
    CardDiscarded,
    CardReplaced,
    CardsPeeked,
    CardTurned,
    Discard,
    Draw,
    EndTurn,
    Flip,
    GoOut,
    Peek,
    Replace,
    SetupFlip,
    TurnEnded,
)

pytestmark = pytest.mark.unit

BB = BASKETBALL
LAYOUT = "2S 3S 4S 5S 6S / 7S 8S 9S TS JS"


def playing(face_up: int = 0, **changes: Any) -> GridState:
    changes.setdefault("stock", "KD QD JD TD")
    return given(
        BB, 3, to_play=0, layouts={0: LAYOUT}, face_up={0: face_up}, piles={0: "9C 3H"}, **changes
    )


# ---- the deal --------------------------------------------------------------------------------


def test_one_hand_is_the_whole_game_and_there_is_no_setup() -> None:
    state = dealt(BB, 3)
    assert BB.status(state).phase == "playing"
    assert state.hands == 1
    assert state.setup_left == (0, 0, 0)


# ---- the peek --------------------------------------------------------------------------------


def test_a_player_may_look_once_at_their_row_one_before_their_first_draw() -> None:
    state = playing()
    after, events = act(BB, state, 0, Peek())
    assert events == [CardsPeeked(0, 1, ("7S", "8S", "9S", "TS", "JS"))]
    assert after.face_up[0] == 0
    assert after.peeked[0] == mask((1, 0), (1, 1), (1, 2), (1, 3), (1, 4))
    rejects(BB, after, Act(0, Peek()), "already_done")


def test_a_player_may_peek_while_another_is_to_play() -> None:
    state = playing()
    assert BB.status(state).to_act == (0, 1, 2)
    assert BB.legal_actions(state, 2) == (Peek(),)
    _, events = act(BB, state, 2, Peek())
    assert isinstance(events[0], CardsPeeked)


def test_the_peek_comes_before_the_first_draw() -> None:
    state, _ = act(BB, playing(), 0, Draw("stock"))
    error = rejects(BB, state, Act(0, Peek()), "wrong_phase")
    assert "before your first draw" in error.message
    state, _ = act(BB, state, 0, Replace(0, 0))
    rejects(BB, state, Act(0, Peek()), "wrong_phase")
    assert BB.status(state).to_act == (1, 2)


def test_peeked_cards_stay_face_down_and_only_their_owner_sees_them() -> None:
    state, _ = act(BB, playing(), 0, Peek())
    mine, theirs = BB.view(state, 0), BB.view(state, 1)
    assert mine.layouts[0] == ((None,) * 5, ("7S", "8S", "9S", "TS", "JS"))
    assert mine.peeked == tuple((1, c) for c in range(5))
    assert theirs.layouts[0] == ((None,) * 5, (None,) * 5)
    assert theirs.peeked == ()


# ---- the turn --------------------------------------------------------------------------------


def test_a_stock_card_replaces_a_face_down_card_which_goes_onto_the_discard_pile() -> None:
    state, _ = act(BB, playing(face_up=mask((0, 0))), 0, Draw("stock"))
    replaces = [a for a in BB.legal_actions(state, 0) if isinstance(a, Replace)]
    assert len(replaces) == 9
    after, events = act(BB, state, 0, Replace(1, 2))
    assert events == [CardReplaced(0, 1, 2, "KD", "9S"), TurnEnded(0, 1)]
    assert after.piles == (("9C", "3H", "9S"),)


def test_a_face_up_card_is_never_replaced() -> None:
    state, _ = act(BB, playing(face_up=mask((0, 0))), 0, Draw("stock"))
    error = rejects(BB, state, Act(0, Replace(0, 0)), "illegal_position")
    assert error.message == "Basketball: a face-up card is never replaced"


def test_a_discarded_stock_card_is_followed_by_a_compulsory_flip() -> None:
    state, _ = act(BB, playing(), 0, Draw("stock"))
    state, events = act(BB, state, 0, Discard())
    assert events == [CardDiscarded(0, "KD")]
    assert len(BB.legal_actions(state, 0)) == 10
    assert all(isinstance(a, Flip) for a in BB.legal_actions(state, 0))
    rejects(BB, state, Act(0, EndTurn()), "unknown_action")
    _after, events = act(BB, state, 0, Flip(0, 4))
    assert events == [CardTurned(0, 0, 4, "6S"), TurnEnded(0, 1)]


def test_a_card_from_the_discard_pile_must_replace_a_face_down_card() -> None:
    state, _ = act(BB, playing(face_up=mask((0, 0))), 0, Draw("discard"))
    rejects(BB, state, Act(0, Discard()), "must_keep_card")
    rejects(BB, state, Act(0, Replace(0, 0)), "illegal_position")
    _, events = act(BB, state, 0, Replace(0, 1))
    assert events[0] == CardReplaced(0, 0, 1, "3H", "3S")


def test_each_turn_turns_exactly_one_card_face_up() -> None:
    state = playing()
    state, _ = act(BB, state, 0, Draw("stock"), Replace(0, 0))
    state, _ = act(BB, state, 1, Draw("stock"), Discard(), Flip(1, 1))
    assert [f.bit_count() for f in state.face_up] == [1, 1, 0]


def test_basketball_has_no_setup_flips_and_no_going_out_by_choice() -> None:
    state = playing()
    for action in (SetupFlip(0, 0), GoOut(), EndTurn()):
        rejects(BB, state, Act(0, action), "unknown_action")
    rejects(BB, state, Act(0, Draw("centre")), "card_not_available")
    rejects(BB, state, Act(0, Draw("pile", 1)), "card_not_available")


# ---- the end ---------------------------------------------------------------------------------


def test_the_game_ends_when_every_card_is_face_up_and_the_highest_total_wins() -> None:
    everything = all_up()
    state = given(
        BB,
        3,
        to_play=2,
        layouts={0: LAYOUT, 1: "AS AH KS KH 2S / 3S 4S 5S 6S 7S", 2: LAYOUT},
        face_up={0: everything, 1: everything, 2: everything & ~mask((1, 4))},
        stock="KD",
    )
    state, events = act(BB, state, 2, Draw("stock"), Replace(1, 4))
    assert types(events) == [
        "CardDrawn",
        "CardReplaced",
        "TurnEnded",
        "LayoutsRevealed",
        "HandEnded",
        "GameEnded",
    ]
    ended = events[-2]
    assert isinstance(ended, HandEnded)
    assert ended.reason == "all_face_up"
    assert ended.scores == (2 + 3 + 4 + 5 + 6 + 7 + 8 + 9 + 10 + 10, 30 + 50 + 27, 54 + 25)
    assert isinstance(events[-1], GameEnded)
    assert events[-1].winners == (1,)
    assert BB.status(state).phase == "game_over"


def test_no_player_goes_out_early_play_continues_until_all_cards_are_face_up() -> None:
    everything = all_up()
    state = given(BB, 3, to_play=0, face_up={0: everything & ~mask((0, 0))}, stock="KD")
    state, events = act(BB, state, 0, Draw("stock"), Replace(0, 0))
    assert types(events) == ["CardDrawn", "CardReplaced", "TurnEnded"]
    assert state.to_play == 1
