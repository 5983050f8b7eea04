"""Tens-shedding, legal actions: one per rank, number of hand cards of that rank, and set
of face-up stacks of that rank; each blind card uncovered; all of them accepted."""

from __future__ import annotations

import pytest
from shedding_given import RULES, dealt, stacks_chosen, table

from events.schema.common import Act
from events.schema.shedding import PlayBlind, PlayCards

pytestmark = pytest.mark.unit

STATE = table(
    [["5H", "5S", "9C", "2D"], ["3S"]],
    face_up=[["5D", None, "9H", "KS"], ["KS", "KH", "KD", "KC"]],
    face_down=[["QS", "4H", "QD", "QC"], ["QS", "QH", "QD", "QC"]],
    pile=["JH"],
)


def test_every_choice_of_rank_count_and_face_up_stacks_is_listed() -> None:
    legal = RULES.legal_actions(STATE, 0)
    assert set(legal) == {
        PlayCards(hand=("2D",)),
        PlayCards(stacks=(0,)),
        PlayCards(hand=("5H",)),
        PlayCards(hand=("5H",), stacks=(0,)),
        PlayCards(hand=("5H", "5S")),
        PlayCards(hand=("5H", "5S"), stacks=(0,)),
        PlayCards(stacks=(2,)),
        PlayCards(hand=("9C",)),
        PlayCards(hand=("9C",), stacks=(2,)),
        PlayCards(stacks=(3,)),
        PlayBlind(1),
    }
    assert len(legal) == 11


def test_a_seat_not_to_act_has_no_legal_action() -> None:
    assert RULES.legal_actions(STATE, 1) == ()
    assert RULES.legal_actions(STATE, 5) == ()


def test_every_legal_action_is_accepted() -> None:
    for state in (STATE, stacks_chosen(dealt(4))):
        seat = RULES.status(state).to_act[0]
        for action in RULES.legal_actions(state, seat):
            assert RULES.decide(state, Act(seat, action))
