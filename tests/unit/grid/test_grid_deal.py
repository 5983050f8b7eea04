"""The deal, common to every grid game: seeded shuffle, dealer, layouts, the card turned up."""

from __future__ import annotations

import pytest
from grid_helpers import SEED, SEED_2, dealt, fold, rejects, started
from msgspec.structs import replace

from domain.cards import count_cards, make_deck
from domain.grid import BASKETBALL, GOLF, HANG_TEN, TENS, GridGame
from domain.shuffle import Stream, commitment
from events.schema.common import DealHand, HandDealt

pytestmark = pytest.mark.unit

GAMES = [HANG_TEN, TENS, GOLF, BASKETBALL]


def deck_after_dealer(game: GridGame, players: int, hand_seed: str) -> tuple[str, ...]:
    _, stream = Stream(bytes.fromhex(hand_seed)).below(players)
    size = game.rules.deck_for(players)
    deck, _ = stream.shuffled(make_deck(size.decks, size.jokers))
    return deck


@pytest.mark.parametrize("game", GAMES, ids=lambda g: g.name)
def test_the_first_dealer_is_drawn_from_the_first_hands_seed(game: GridGame) -> None:
    state = started(game, 4)
    (event,) = game.decide(state, DealHand(SEED))
    assert event == HandDealt(1, Stream(bytes.fromhex(SEED)).below(4)[0], SEED, event.commitment)


@pytest.mark.parametrize("game", GAMES, ids=lambda g: g.name)
def test_the_hand_publishes_a_sha256_commitment_to_its_seed(game: GridGame) -> None:
    (event,) = game.decide(started(game, 4), DealHand(SEED))
    assert event.commitment == commitment(bytes.fromhex(SEED))


@pytest.mark.parametrize("game", GAMES, ids=lambda g: g.name)
def test_layouts_are_dealt_face_down_row_major_whole_from_left_of_the_dealer(
    game: GridGame,
) -> None:
    state = dealt(game, 4)
    deck = deck_after_dealer(game, 4, SEED)
    size = 2 * game.rules.columns
    for k in range(4):
        seat = (state.dealer + 1 + k) % 4
        assert state.layouts[seat] == deck[k * size : (k + 1) * size]
    assert state.face_up == (0, 0, 0, 0)


def test_hang_ten_turns_the_next_stock_card_up_as_the_centre_card() -> None:
    state = dealt(HANG_TEN, 4)
    deck = deck_after_dealer(HANG_TEN, 4, SEED)
    assert state.centre == deck[40]
    assert state.piles == ((), (), (), ())
    assert state.stock[state.top :] == deck[41:]


@pytest.mark.parametrize("game", [GOLF, BASKETBALL], ids=lambda g: g.name)
def test_the_next_stock_card_starts_the_shared_discard_pile(game: GridGame) -> None:
    state = dealt(game, 3)
    deck = deck_after_dealer(game, 3, SEED)
    per = 3 * 2 * game.rules.columns
    assert state.piles == ((deck[per],),)
    assert state.centre is None
    assert state.stock[state.top :] == deck[per + 1 :]


def test_tens_turns_nothing_up_every_player_has_an_empty_pile() -> None:
    state = dealt(TENS, 3)
    assert state.piles == ((), (), ())
    assert state.centre is None
    assert state.stock_size == 52 - 30


@pytest.mark.parametrize("game", GAMES, ids=lambda g: g.name)
def test_the_first_player_sits_left_of_the_dealer(game: GridGame) -> None:
    state = dealt(game, 4)
    assert state.to_play == (state.dealer + 1) % 4


@pytest.mark.parametrize(
    ("game", "players", "cards", "jokers"),
    [
        (HANG_TEN, 4, 208, 0),
        (HANG_TEN, 6, 208, 0),
        (TENS, 2, 52, 0),
        (TENS, 3, 52, 0),
        (TENS, 4, 104, 0),
        (TENS, 6, 104, 0),
        (TENS, 7, 156, 0),
        (TENS, 9, 156, 0),
        (GOLF, 2, 108, 4),
        (GOLF, 5, 108, 4),
        (GOLF, 6, 162, 6),
        (GOLF, 8, 162, 6),
        (BASKETBALL, 2, 52, 0),
        (BASKETBALL, 4, 52, 0),
        (BASKETBALL, 5, 104, 0),
        (BASKETBALL, 8, 104, 0),
    ],
)
def test_decks_by_player_count(game: GridGame, players: int, cards: int, jokers: int) -> None:
    state = dealt(game, players)
    assert len(state.stock) == cards
    assert count_cards(state.stock).get("JK", 0) == jokers


@pytest.mark.parametrize(
    ("game", "columns"), [(HANG_TEN, 5), (TENS, 5), (GOLF, 4), (BASKETBALL, 5)]
)
def test_each_layout_is_two_rows_of_the_variants_columns(game: GridGame, columns: int) -> None:
    state = dealt(game, 4)
    assert {len(layout) for layout in state.layouts} == {2 * columns}


def test_the_deal_moves_one_seat_left_each_hand() -> None:
    first = dealt(GOLF, 3)
    hand_over = replace(first, phase="awaiting_deal")
    (event,) = GOLF.decide(hand_over, DealHand(SEED_2))
    assert (event.hand, event.dealer) == (2, (first.dealer + 1) % 3)
    second = fold(GOLF, hand_over, (event,))
    assert second.to_play == (first.dealer + 2) % 3


def test_later_hands_shuffle_from_their_own_seed_without_a_dealer_draw() -> None:
    hand_over = replace(dealt(TENS, 2), phase="awaiting_deal")
    second = fold(TENS, hand_over, TENS.decide(hand_over, DealHand(SEED_2)))
    deck, _ = Stream(bytes.fromhex(SEED_2)).shuffled(make_deck(1))
    assert second.stock == deck


@pytest.mark.parametrize("game", GAMES, ids=lambda g: g.name)
def test_a_deal_is_refused_while_a_hand_is_in_play(game: GridGame) -> None:
    rejects(game, dealt(game, 4), DealHand(SEED_2), "wrong_phase")


def test_a_deal_needs_a_32_byte_lowercase_hex_seed() -> None:
    state = started(GOLF, 2)
    rejects(GOLF, state, DealHand("ab"), "invalid_config")
    rejects(GOLF, state, DealHand("AB" * 32), "invalid_config")
