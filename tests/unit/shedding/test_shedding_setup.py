"""Tens-shedding, setup: each player lays 4 of their 15 cards face up on the stacks, the
other 11 are the hand; simultaneous, in any order; play starts when all have chosen."""

from __future__ import annotations

import pytest
from shedding_given import RULES, actions, dealt, live, rejected, run

from events.schema.common import Act
from events.schema.shedding import ChooseStacks, ChooseStacksOption, PlayCards, StacksChosen

pytestmark = pytest.mark.unit


def test_four_of_the_15_cards_go_face_up_on_the_stacks_in_the_order_given() -> None:
    state = dealt(3)
    fifteen = live(state).players[1].hand
    chosen = (fifteen[7], fifteen[0], fifteen[14], fifteen[3])
    events, after = run(state, Act(1, ChooseStacks(chosen)))
    assert events == (StacksChosen(1, chosen),)
    player = live(after).players[1]
    assert player.face_up == chosen
    assert len(player.hand) == 11
    assert sorted([*player.hand, *chosen]) == sorted(fifteen)
    assert player.face_down == live(state).players[1].face_down


def test_setup_is_simultaneous_and_in_any_order() -> None:
    state = dealt(4)
    assert RULES.status(state).phase == "setup"
    assert RULES.status(state).to_act == (0, 1, 2, 3)
    for seat in (2, 0, 3):
        state = run(state, Act(seat, actions(state, seat)[5]))[1]
    assert RULES.status(state).to_act == (1,)
    assert RULES.status(state).phase == "setup"


def test_play_starts_when_every_player_has_chosen() -> None:
    state = dealt(2)
    state = run(state, Act(0, actions(state, 0)[0]))[1]
    state = run(state, Act(1, actions(state, 1)[0]))[1]
    assert RULES.status(state).phase == "playing"
    assert RULES.status(state).to_act == (live(state).first,)


def test_stacks_are_chosen_once() -> None:
    state = dealt(2)
    state = run(state, Act(0, actions(state, 0)[0]))[1]
    hand = live(state).players[0].hand
    assert rejected(state, Act(0, ChooseStacks(hand[:4]))) == "already_done"
    assert RULES.legal_actions(state, 0) == ()


def test_exactly_four_face_up_cards_are_chosen() -> None:
    state = dealt(2)
    hand = live(state).players[0].hand
    assert rejected(state, Act(0, ChooseStacks(hand[:3]))) == "invalid_play"
    assert rejected(state, Act(0, ChooseStacks(hand[:5]))) == "invalid_play"


def test_face_up_cards_come_from_the_players_own_15_cards() -> None:
    state = dealt(2)
    mine, theirs = live(state).players
    face_down = tuple(card for card in mine.face_down if card is not None)
    assert rejected(state, Act(0, ChooseStacks(face_down))) == "card_not_available"
    not_mine = next(card for card in theirs.hand if card not in mine.hand)
    assert rejected(state, Act(0, ChooseStacks((*mine.hand[:3], not_mine)))) == (
        "card_not_available"
    )
    twice = (mine.hand[0],) * 4
    assert rejected(state, Act(0, ChooseStacks(twice))) == "card_not_available"


def test_nobody_plays_before_setup_is_complete() -> None:
    state = dealt(2)
    state = run(state, Act(0, actions(state, 0)[0]))[1]
    card = live(state).players[0].hand[0]
    assert rejected(state, Act(0, PlayCards(hand=(card,)))) == "setup_incomplete"


def test_the_choices_are_every_set_of_four_of_the_15() -> None:
    state = dealt(2)
    fifteen = live(state).players[0].hand
    assert RULES.legal_actions(state, 0) == (ChooseStacksOption(4, _sorted(fifteen)),)
    choices = actions(state, 0)
    distinct = len(set(fifteen)) == 15  # one deck for 2 players: no identical cards
    assert distinct
    assert len(choices) == 1365
    assert len({tuple(sorted(c.cards)) for c in choices if isinstance(c, ChooseStacks)}) == 1365


def test_any_four_of_the_15_in_any_order_are_accepted_and_covered() -> None:
    state = dealt(2)
    (option,) = RULES.legal_actions(state, 1)
    fifteen = live(state).players[1].hand
    for chosen in (fifteen[-4:], tuple(reversed(fifteen[3:7])), fifteen[::4]):
        assert RULES.covers(option, ChooseStacks(chosen))
        assert run(state, Act(1, ChooseStacks(chosen)))[0] == (StacksChosen(1, chosen),)
    assert not RULES.covers(option, ChooseStacks((fifteen[0],) * 4))


def _sorted(cards: tuple[str, ...]) -> tuple[str, ...]:
    return tuple(sorted(cards, key=lambda card: ("A23456789TJQK".index(card[0]), card[1])))
