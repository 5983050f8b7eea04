"""Tens-shedding, the deal: decks, 19 cards each, stacks, the grab, the first player."""

from __future__ import annotations

from collections import Counter

import pytest
from msgspec.structs import replace
from shedding_given import RULES, SEED, dealt, live, run, seed, stacks_chosen

from domain.cards import make_deck
from domain.shedding.rules import decks_for, first_player
from domain.shuffle import Stream, commitment
from events.schema.common import DealHand, GameOptions, HandDealt

pytestmark = pytest.mark.unit


@pytest.mark.parametrize(
    ("players", "decks"),
    [(2, 1), (3, 2), (4, 2), (5, 2), (6, 3), (7, 3), (8, 3), (9, 4), (10, 4)],
)
def test_decks_are_enough_for_19_cards_each(players: int, decks: int) -> None:
    assert decks_for(players) == decks
    round_ = live(dealt(players))
    every_card = [*round_.undealt]
    for player in round_.players:
        every_card += [*player.hand, *(c for c in player.face_down if c is not None)]
    assert Counter(every_card) == Counter(make_deck(decks))


def test_each_player_gets_4_face_down_stack_cards_and_15_to_choose_from() -> None:
    for player in live(dealt(5)).players:
        assert len(player.face_down) == 4
        assert len(player.hand) == 15
        assert player.face_up == (None, None, None, None)


def test_the_undealt_cards_stay_out_of_play() -> None:
    round_ = live(dealt(3))
    assert len(round_.undealt) == 2 * 52 - 3 * 19


def test_the_deal_follows_the_seeds_stream_in_the_documented_order() -> None:
    players = 4
    stream = Stream(bytes.fromhex(SEED))
    dealer, stream = stream.below(players)
    deck, stream = stream.shuffled(make_deck(2))
    grabs = []
    for _ in range(players):
        extra, stream = stream.below(7)
        grabs.append(16 + extra)

    round_ = live(dealt(players))

    assert round_.dealer == dealer
    assert [p.grab for p in round_.players] == grabs
    for order in range(players):
        player = round_.players[(dealer + 1 + order) % players]
        cards = deck[19 * order : 19 * (order + 1)]
        assert player.face_down == cards[:4]
        assert player.hand == cards[4:]
    assert round_.undealt == deck[19 * players :]


def test_the_hand_dealt_event_commits_to_the_seed() -> None:
    state = RULES.initial_state(3, GameOptions())
    (event,) = RULES.decide(state, DealHand(SEED))
    assert isinstance(event, HandDealt)
    assert event.hand == 1
    assert event.seed == SEED
    assert event.commitment == commitment(bytes.fromhex(SEED))
    assert event.dealer == Stream(bytes.fromhex(SEED)).below(3)[0]


def test_grab_sizes_are_between_16_and_22_by_default() -> None:
    grabs = {p.grab for i in range(30) for p in live(dealt(10, seed(i))).players}
    assert grabs == set(range(16, 23))


def test_grab_sizes_follow_the_configured_range() -> None:
    grabs = {
        p.grab for i in range(10) for p in live(dealt(6, seed(i), grab_min=18, grab_max=20)).players
    }
    assert grabs == {18, 19, 20}


def test_a_grab_of_exactly_19_earns_minus_10() -> None:
    view = RULES.view(dealt(4, grab_min=18, grab_max=20), None)
    assert {(p.grab, p.bonus) for p in view.players} <= {(18, 0), (19, -10), (20, 0)}
    assert any(p.bonus == -10 for p in view.players)


def test_the_grab_closest_to_19_plays_first() -> None:
    assert first_player([16, 22, 20, 21]) == 2
    assert first_player([17, 19, 19]) == 1


def test_a_tie_for_closest_grab_goes_to_the_lowest_seat() -> None:
    assert first_player([22, 18, 20]) == 1
    assert first_player([20, 18]) == 0


def test_play_starts_with_the_first_player_once_stacks_are_chosen() -> None:
    state = stacks_chosen(dealt(6))
    grabs = [p.grab for p in live(state).players]
    assert RULES.status(state).phase == "playing"
    assert RULES.status(state).to_act == (first_player(grabs),)


def test_the_deal_moves_one_seat_left_each_round() -> None:
    state = dealt(3)
    first_dealer = live(state).dealer
    finished = replace(state, phase="awaiting_deal")  # as after the round's end
    (event,) = RULES.decide(finished, DealHand(seed(1)))
    assert isinstance(event, HandDealt)
    assert (event.hand, event.dealer) == (2, (first_dealer + 1) % 3)
    later = run(finished, DealHand(seed(1)))[1]
    round_ = live(later)
    # A later round draws no dealer: the shuffle is the stream's first draw.
    deck, _ = Stream(bytes.fromhex(seed(1))).shuffled(make_deck(2))
    assert round_.players[(round_.dealer + 1) % 3].face_down == deck[:4]
