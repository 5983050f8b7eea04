"""Tens-shedding, legal actions: one play option per rank the seat holds (its hand cards and
face-up stacks of that rank), each uncovered blind card; every covered action accepted."""

from __future__ import annotations

import pytest
from shedding_given import RULES, actions, dealt, rejected, stacks_chosen, table

from events.schema.common import Act
from events.schema.shedding import PlayBlind, PlayCards, PlayOption

pytestmark = pytest.mark.unit

STATE = table(
    [["5H", "5S", "9C", "2D"], ["3S"]],
    face_up=[["5D", None, "9H", "KS"], ["KS", "KH", "KD", "KC"]],
    face_down=[["QS", "4H", "QD", "QC"], ["QS", "QH", "QD", "QC"]],
    pile=["JH"],
)
UP = ["KS", "KH", "KD", "KC"]


def test_one_play_option_per_rank_held_and_each_uncovered_blind_card() -> None:
    assert RULES.legal_actions(STATE, 0) == (
        PlayOption("2", hand=("2D",)),
        PlayOption("5", hand=("5H", "5S"), stacks=(0,)),
        PlayOption("9", hand=("9C",), stacks=(2,)),
        PlayOption("K", stacks=(3,)),
        PlayBlind(1),
    )


def test_a_play_option_covers_every_non_empty_combination_in_any_order() -> None:
    fives = PlayOption("5", hand=("5H", "5S"), stacks=(0,))
    for play in (
        PlayCards(hand=("5S",)),
        PlayCards(hand=("5S", "5H"), stacks=(0,)),
        PlayCards(stacks=(0,)),
    ):
        assert RULES.covers(fives, play)
        assert RULES.decide(STATE, Act(0, play))
    for play in (
        PlayCards(),
        PlayCards(hand=("5H", "5H")),
        PlayCards(hand=("5D",)),
        PlayCards(stacks=(0, 0)),
        PlayCards(hand=("5H",), stacks=(2,)),
    ):
        assert not RULES.covers(fives, play)
        assert rejected(STATE, Act(0, play))
    nines = PlayOption("9", hand=("9C",), stacks=(2,))
    assert not RULES.covers(fives, PlayCards(stacks=(2,)))
    assert RULES.covers(nines, PlayCards(stacks=(2,)))


def test_a_card_held_twice_may_be_played_twice() -> None:
    state = table([["5H", "5H", "2D"], ["3S"]], face_up=[["5D", None, "9H", "KS"], UP], pile=["JH"])
    (fives, *_) = [o for o in RULES.legal_actions(state, 0) if getattr(o, "rank", "") == "5"]
    assert fives == PlayOption("5", hand=("5H", "5H"), stacks=(0,))
    assert RULES.covers(fives, PlayCards(hand=("5H", "5H")))
    assert RULES.decide(state, Act(0, PlayCards(hand=("5H", "5H"))))


def test_a_seat_not_to_act_has_no_legal_action() -> None:
    assert RULES.legal_actions(STATE, 1) == ()
    assert RULES.legal_actions(STATE, 5) == ()


def test_every_legal_action_is_accepted() -> None:
    for state in (STATE, stacks_chosen(dealt(4))):
        seat = RULES.status(state).to_act[0]
        for action in actions(state, seat):
            assert RULES.decide(state, Act(seat, action))
