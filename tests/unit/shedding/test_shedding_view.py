"""Tens-shedding, what each viewer may know: public table, own hand, nothing face down,
the seed only once the round has ended; events redacted to match."""

from __future__ import annotations

import msgspec
import pytest
from shedding_given import RULES, SEED, dealt, live, run, stacks_chosen, table

from domain.shuffle import commitment
from events.schema.common import Act, HandDealt
from events.schema.shedding import CardsPlayed, PlayCards, StacksChosen

pytestmark = pytest.mark.unit

NONE4: list[str | None] = [None, None, None, None]


def test_a_seat_sees_its_own_hand_and_only_the_sizes_of_the_others() -> None:
    state = stacks_chosen(dealt(3))
    view = RULES.view(state, 1)
    hands = [p.hand for p in view.players]
    assert hands[0] is None
    assert hands[2] is None
    assert sorted(hands[1] or ()) == sorted(live(state).players[1].hand)
    assert [p.hand_size for p in view.players] == [11, 11, 11]


def test_during_setup_a_seat_sees_the_15_cards_it_chooses_from() -> None:
    state = dealt(3)
    view = RULES.view(state, 2)
    assert sorted(view.players[2].hand or ()) == sorted(live(state).players[2].hand)
    assert len(view.players[2].hand or ()) == 15


def test_a_spectator_sees_no_hand() -> None:
    view = RULES.view(stacks_chosen(dealt(3)), None)
    assert all(p.hand is None for p in view.players)


def test_face_down_cards_are_seen_by_nobody_not_even_their_owner() -> None:
    state = stacks_chosen(dealt(2))
    for viewer in (0, 1, None):
        view = RULES.view(state, viewer)
        assert all(p.face_down_cards is None for p in view.players)
        assert all(p.face_down == (True,) * 4 for p in view.players)
        for down in live(state).players[0].face_down:
            encoded = msgspec.json.encode(view).decode()
            hand = live(state).players[0].hand if viewer == 0 else ()
            face_up = [c for p in live(state).players for c in p.face_up]
            if down not in hand and down not in face_up:
                assert f'"{down}"' not in encoded


def test_face_up_cards_pile_burned_cards_and_uncovered_stacks_are_public() -> None:
    state = table(
        [["2C"], ["3S"]],
        face_up=[["KS", None, "KD", None], ["9S", "9H", "9D", "AC"]],
        face_down=[["QS", "4H", "QD", None], ["QS", "QH", "QD", "QC"]],
        pile=["5H", "6H"],
    )
    view = RULES.view(state, None)
    assert view.players[0].face_up == ("KS", None, "KD", None)
    assert view.players[0].face_down == (True, True, True, False)
    assert view.players[0].uncovered == (False, True, False, False)
    assert (view.pile, view.current_rank, view.to_play) == (("5H", "6H"), "6", 0)


def test_grabs_and_bonuses_are_public() -> None:
    state = table([["2C"], ["3S"]], grabs=[19, 21])
    view = RULES.view(state, None)
    assert [(p.grab, p.bonus) for p in view.players] == [(19, -10), (21, 0)]


def test_the_commitment_is_public_and_the_seed_is_revealed_when_the_round_ends() -> None:
    state = table(
        [["9S"], ["3S"]], face_up=[NONE4] * 2, face_down=[NONE4, ["QS", "QH", "QD", "QC"]]
    )
    live_view = RULES.view(state, 0)
    assert live_view.commitment == commitment(bytes.fromhex(SEED))
    assert live_view.seed is None
    _, ended = run(state, Act(0, PlayCards(hand=("9S",))))
    view = RULES.view(ended, 0)
    assert view.seed == SEED
    assert view.went_out == 0
    assert view.ended == "went_out"
    assert view.players[1].hand == ("3S",)
    assert view.players[1].face_down_cards == ("QS", "QH", "QD", "QC")
    assert [p.score for p in view.players] == [0, 3 + 12 * 4]


def test_the_hand_dealt_seed_is_redacted_while_the_round_is_live() -> None:
    event = HandDealt(1, 0, SEED, commitment(bytes.fromhex(SEED)))
    for viewer in (0, 1, None):
        redacted = RULES.redact(event, viewer, False)
        assert redacted.seed == ""
        assert redacted.commitment == event.commitment
        assert RULES.redact(event, viewer, True) == event


def test_play_events_are_public_as_they_happen() -> None:
    for event in (StacksChosen(0, ("2S", "3S", "4S", "5S")), CardsPlayed(1, ("9D",))):
        assert RULES.redact(event, 0, False) == event
        assert RULES.redact(event, None, False) == event
