"""Tens-shedding, rejected commands: each names the rule it broke, and the state is unchanged."""

from __future__ import annotations

from typing import Any

import pytest
from msgspec.structs import replace
from shedding_given import RULES, SEED, dealt, rejected, table

from domain.errors import RuleViolation
from events.schema.common import Act, DealHand, GameOptions
from events.schema.shedding import ChooseStacks, EndPlay, PlayBlind, PlayCards

pytestmark = pytest.mark.unit

UP = ["KS", "KH", "KD", "KC"]
PLAYING = table(
    [["5S", "5H", "9C", "2D"], ["3S"]],
    face_up=[["5D", None, "9H", "KS"], UP],
    face_down=[["QS", "4H", "QD", "QC"], ["QS", "QH", "QD", "QC"]],
)


@pytest.mark.parametrize(
    ("command", "code"),
    [
        (Act(1, PlayCards(hand=("3S",))), "not_your_turn"),
        (Act(0, PlayCards(hand=("7S",))), "card_not_available"),
        (Act(0, PlayCards(hand=("5S", "5S"))), "card_not_available"),
        (Act(0, PlayCards(stacks=(1,))), "card_not_available"),
        (Act(0, PlayCards(hand=("5S", "9C"))), "invalid_play"),
        (Act(0, PlayCards(hand=("5S",), stacks=(2,))), "invalid_play"),
        (Act(0, PlayCards()), "invalid_play"),
        (Act(0, PlayCards(stacks=(4,))), "illegal_position"),
        (Act(0, PlayCards(stacks=(-1,))), "illegal_position"),
        (Act(0, PlayCards(stacks=(0, 0))), "illegal_position"),
        (Act(0, PlayBlind(0)), "illegal_position"),
        (Act(0, PlayBlind(7)), "illegal_position"),
        (Act(0, EndPlay()), "wrong_phase"),
        (Act(0, ChooseStacks(("5S", "5H", "9C", "2D"))), "wrong_phase"),
        (DealHand(SEED), "wrong_phase"),
        (Act(2, PlayCards(hand=("3S",))), "invalid_seat"),
        (Act(-1, PlayCards(hand=("3S",))), "invalid_seat"),
        (Act(0, "discard"), "unknown_action"),
        ("shuffle", "unknown_action"),
    ],
)
def test_a_rejected_play_names_its_rule_and_changes_nothing(command: Any, code: str) -> None:
    assert rejected(PLAYING, command) == code


def test_no_action_before_the_first_deal() -> None:
    state = RULES.initial_state(2, GameOptions())
    assert rejected(state, Act(0, PlayCards(hand=("3S",)))) == "game_not_started"


def test_no_action_between_rounds() -> None:
    state = replace(PLAYING, phase="awaiting_deal")
    assert rejected(state, Act(0, PlayCards(hand=("5S",)))) == "hand_over"


def test_nothing_after_the_game_has_ended() -> None:
    state = replace(PLAYING, phase="game_over")
    assert rejected(state, Act(0, PlayCards(hand=("5S",)))) == "game_over"
    assert rejected(state, DealHand(SEED)) == "game_over"


def test_no_deal_during_setup() -> None:
    assert rejected(dealt(2), DealHand(SEED)) == "wrong_phase"


def test_a_deal_needs_a_32_byte_seed() -> None:
    state = RULES.initial_state(2, GameOptions())
    assert rejected(state, DealHand("abc")) == "invalid_config"
    assert rejected(state, DealHand("zz" * 32)) == "invalid_config"


@pytest.mark.parametrize(
    ("players", "options"),
    [
        (1, GameOptions()),
        (11, GameOptions()),
        (4, GameOptions(grab_min=20, grab_max=18)),
        (4, GameOptions(grab_min=41)),
        (4, GameOptions(hands=3)),
        (4, GameOptions(turn_limit=0)),
        (4, GameOptions(grab_min=25)),
    ],
)
def test_a_game_needs_2_to_10_players_and_sensible_options(
    players: int, options: GameOptions
) -> None:
    with pytest.raises(RuleViolation) as raised:
        RULES.initial_state(players, options)
    assert raised.value.code == "invalid_config"
