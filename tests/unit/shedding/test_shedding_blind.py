"""Tens-shedding, blind plays: an uncovered face-down card, played unseen; then the same
player may add cards of its rank, or end the play; then the play's result follows."""

from __future__ import annotations

import pytest
from shedding_given import RULES, live, rejected, run, table

from domain.shedding import SheddingState
from events.schema.common import Act
from events.schema.shedding import (
    BlindCardTurned,
    CardsPlayed,
    EndPlay,
    PileBurned,
    PilePickedUp,
    PlayBlind,
    PlayCards,
    PlayOption,
    PlayPassed,
)

pytestmark = pytest.mark.unit

UP = ["KS", "KH", "KD", "KC"]


def uncovered(down: str, pile: list[str], hand: list[str] | None = None) -> SheddingState:
    """Seat 0's stack 1 is uncovered, with `down` face down under it."""
    return table(
        [hand or ["2C"], ["3S"]],
        face_up=[["KS", None, "KD", "KC"], UP],
        face_down=[["QS", down, "QD", "QC"], ["QS", "QH", "QD", "QC"]],
        pile=pile,
    )


def test_an_uncovered_face_down_card_is_turned_onto_the_pile() -> None:
    events, after = run(uncovered("4H", ["9S"]), Act(0, PlayBlind(1)))
    assert events == (BlindCardTurned(0, 1, "4H"),)
    round_ = live(after)
    assert round_.pile == ("9S", "4H")
    assert round_.players[0].face_down == ("QS", None, "QD", "QC")


def test_the_play_stays_open_after_the_blind_card_whatever_it_is() -> None:
    _, after = run(uncovered("4H", ["9S"]), Act(0, PlayBlind(1)))
    assert RULES.status(after).to_act == (0,)
    assert RULES.legal_actions(after, 0) == (EndPlay(),)


def test_a_blind_card_need_not_match_but_a_higher_one_picks_up_the_pile() -> None:
    _, turned = run(uncovered("JH", ["9S"]), Act(0, PlayBlind(1)))
    events, after = run(turned, Act(0, EndPlay()))
    assert events == (PilePickedUp(0, ("9S", "JH")),)
    assert RULES.status(after).to_act == (0,)


def test_a_blind_card_at_or_below_the_current_rank_passes_when_the_play_ends() -> None:
    _, turned = run(uncovered("4H", ["9S"]), Act(0, PlayBlind(1)))
    events, _ = run(turned, Act(0, EndPlay()))
    assert events == (PlayPassed(0, 1),)


def test_a_blind_card_on_an_empty_pile_passes_when_the_play_ends() -> None:
    _, turned = run(uncovered("KH", []), Act(0, PlayBlind(1)))
    events, _ = run(turned, Act(0, EndPlay()))
    assert events == (PlayPassed(0, 1),)


def test_a_blind_ten_burns_the_pile_when_the_play_ends() -> None:
    _, turned = run(uncovered("TH", ["9S"]), Act(0, PlayBlind(1)))
    events, _ = run(turned, Act(0, EndPlay()))
    assert events == (PileBurned(0, ("9S", "TH")),)


def test_cards_of_the_blind_cards_rank_may_be_added_to_the_play() -> None:
    state = uncovered("4H", ["9S"], hand=["4S", "4C", "2C"])
    _, turned = run(state, Act(0, PlayBlind(1)))
    assert RULES.legal_actions(turned, 0) == (EndPlay(), PlayOption("4", ("4C", "4S")))
    events, after = run(turned, Act(0, PlayCards(hand=("4S",))))
    assert events == (CardsPlayed(0, ("4S",)), PlayPassed(0, 1))
    assert live(after).pile == ("9S", "4H", "4S")


def test_added_cards_are_judged_against_the_rank_before_the_blind_card() -> None:
    # The pile showed a 9; a blind J plus a J from hand is higher than 9: pick up.
    state = uncovered("JH", ["9S"], hand=["JS", "2C"])
    _, turned = run(state, Act(0, PlayBlind(1)))
    events, _ = run(turned, Act(0, PlayCards(hand=("JS",))))
    assert events[1:] == (PilePickedUp(0, ("9S", "JH", "JS")),)


def test_a_blind_card_that_completes_four_of_a_rank_burns() -> None:
    _, turned = run(uncovered("6H", ["6S", "6D", "6C"]), Act(0, PlayBlind(1)))
    events, _ = run(turned, Act(0, EndPlay()))
    assert isinstance(events[0], PileBurned)


def test_cards_added_after_a_blind_card_can_complete_four_of_a_rank() -> None:
    state = uncovered("6H", ["6S", "6D"], hand=["6C", "2C"])
    _, turned = run(state, Act(0, PlayBlind(1)))
    events, _ = run(turned, Act(0, PlayCards(hand=("6C",))))
    assert events[1] == PileBurned(0, ("6S", "6D", "6H", "6C"))


def test_added_cards_must_be_of_the_blind_cards_rank() -> None:
    state = uncovered("4H", ["9S"], hand=["5S", "2C"])
    _, turned = run(state, Act(0, PlayBlind(1)))
    assert rejected(turned, Act(0, PlayCards(hand=("5S",)))) == "invalid_play"


def test_no_second_blind_card_while_the_play_is_open() -> None:
    state = table(
        [["2C"], ["3S"]],
        face_up=[[None, None, "KD", "KC"], UP],
        face_down=[["QS", "4H", "QD", "QC"], ["QS", "QH", "QD", "QC"]],
    )
    _, turned = run(state, Act(0, PlayBlind(1)))
    assert rejected(turned, Act(0, PlayBlind(0))) == "wrong_phase"


def test_a_covered_face_down_card_cannot_be_played() -> None:
    assert rejected(uncovered("4H", []), Act(0, PlayBlind(0))) == "illegal_position"


def test_a_face_down_card_already_played_is_gone() -> None:
    _, turned = run(uncovered("4H", []), Act(0, PlayBlind(1)))
    _, passed = run(turned, Act(0, EndPlay()))
    _, back = run(passed, Act(1, PlayCards(hand=("3S",))))
    assert rejected(back, Act(0, PlayBlind(1))) == "card_not_available"


def test_end_play_needs_a_blind_card_turned() -> None:
    assert rejected(uncovered("4H", []), Act(0, EndPlay())) == "wrong_phase"
