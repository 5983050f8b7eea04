"""The documented shuffle, deal and rebuilt stock (docs/SHUFFLE.md) are what the code does."""

import hashlib
from collections import Counter

import pytest

from domain.cards import JOKER, make_deck, rank_of
from domain.grid import TENS, GridState
from domain.shedding.deal import deal_round
from domain.shedding.rules import Rules
from domain.shuffle import Stream, commitment
from events.schema.common import Act, DealHand, GameOptions
from events.schema.grid import CardDrawn, Draw, Replace, SetupFlip, StockReshuffled

pytestmark = pytest.mark.unit

SEED = bytes(range(32))


def test_word_k_is_the_first_eight_bytes_of_sha256_of_seed_and_counter() -> None:
    digest = hashlib.sha256(SEED + (0).to_bytes(8, "big")).digest()
    word, rest = Stream(SEED).word()
    assert word == int.from_bytes(digest[:8], "big") == 0xA9D6E500293A88BD
    assert rest.position == 1


def test_the_documented_test_vector() -> None:
    deck, stream = Stream(SEED).shuffled(make_deck(1))
    assert deck[:10] == ("9C", "QS", "3H", "JH", "KS", "TH", "AS", "4H", "4C", "7D")
    assert stream.position == 51
    assert commitment(SEED) == "630dcd2966c4336691125448bbb25b4ff412a49c732db2c8abc1b8581bd710dd"


def test_a_shuffle_draws_the_words_of_below_in_order() -> None:
    # `shuffled` writes the words and the rejection out in one loop, for speed: the same
    # swaps, and the stream left where `below` would leave it, from any position.
    for position in (0, 1, 7, 1000):
        for size in (0, 1, 2, 13, 52, 108):
            items = list(range(size))
            out, stream = list(items), Stream(SEED, position)
            for i in range(size - 1, 0, -1):
                j, stream = stream.below(i + 1)
                out[i], out[j] = out[j], out[i]
            assert Stream(SEED, position).shuffled(items) == (tuple(out), stream)


def test_a_shuffle_is_a_permutation_of_the_deck() -> None:
    deck = make_deck(2, jokers=4)
    shuffled, _ = Stream(SEED).shuffled(deck)
    assert Counter(shuffled) == Counter(deck)
    assert shuffled != deck


def test_the_unshuffled_deck_is_suit_by_suit_ace_to_king_then_jokers() -> None:
    deck = make_deck(2, jokers=4)
    assert len(deck) == 108
    assert deck[:3] == ("AS", "2S", "3S")
    assert deck[12:14] == ("KS", "AH")
    assert deck[52] == "AS"
    assert deck[-4:] == (JOKER,) * 4
    assert rank_of(JOKER) == JOKER
    assert rank_of("TD") == "T"


def test_uniform_below_rejects_words_past_the_last_whole_multiple() -> None:
    # n = 3 * 2**62 leaves 2**62 rejected words at the top of the range; a stream of many
    # draws must still only give values below n.
    stream = Stream(SEED)
    n = 3 * 2**62
    for _ in range(200):
        value, stream = stream.below(n)
        assert 0 <= value < n


def test_uniform_below_is_roughly_uniform() -> None:
    stream = Stream(SEED)
    counts = Counter()
    for _ in range(6000):
        value, stream = stream.below(6)
        counts[value] += 1
    assert set(counts) == set(range(6))
    assert all(900 < c < 1100 for c in counts.values())


def test_below_refuses_an_empty_range() -> None:
    with pytest.raises(ValueError, match="positive"):
        Stream(SEED).below(0)


# ---- the documented deal and rebuilt stock (docs/SHUFFLE.md, "Test vectors") ----------------

HEX = SEED.hex()


def cards(text: str) -> tuple[str, ...]:
    return tuple(text.split())


def test_the_documented_tens_shedding_deal() -> None:
    deal = deal_round(SEED, 2, Rules(grab_min=16, grab_max=22), None)
    assert (deal.dealer, deal.first) == (1, 0)
    assert [p.grab for p in deal.players] == [19, 21]
    assert [(p.face_down, p.hand) for p in deal.players] == [
        (cards("QD TS 7D 9D"), cards("AS AH KC 9C 5H 3S 6S 8H 4C 7S TH 3H 2H 8C 4D")),
        (cards("6C QC AC KS"), cards("KH 9S JD TC 7C JC 3D 6H TD 3C 8D KD AD 5S 4H")),
    ]
    assert deal.undealt == cards("7H 6D 5C 8S 4S JH 5D 9H QS 2S 2C JS 2D QH")


def _run(state: GridState, command: object) -> tuple[GridState, tuple[object, ...]]:
    events = TENS.decide(state, command)
    for event in events:
        state = TENS.evolve(state, event)
    return state, events


def test_the_documented_rebuilt_stock() -> None:
    state, _ = _run(TENS.initial_state(2, GameOptions()), DealHand(HEX))
    assert (state.dealer, state.stream_position) == (1, 52)
    assert state.layouts == (
        cards("QD TS 7D 9D AS AH KC 9C 5H 3S"),
        cards("6S 8H 4C 7S TH 3H 2H 8C 4D 6C"),
    )
    assert state.stock[state.top :] == cards(
        "QC AC KS KH 9S JD TC 7C JC 3D 6H TD 3C 8D KD AD 5S 4H 7H 6D 5C 8S 4S JH 5D 9H QS 2S 2C"
        " JS 2D QH"
    )
    for seat in (0, 1):
        for row, col in ((0, 0), (0, 2), (0, 4)):
            state, _ = _run(state, Act(seat, SetupFlip(row, col)))
    for _ in range(32):
        state, _ = _run(state, Act(state.to_play, Draw("stock")))
        state, _ = _run(state, Act(state.to_play, Replace(0, 0)))
    assert state.stock_size == 0
    assert state.to_play == 0
    assert state.piles == (
        cards("QD QC KS 9S TC JC 6H 3C KD 5S 7H 5C 4S 5D QS 2C"),
        cards("6S AC KH JD 7C 3D TD 8D AD 4H 6D 8S JH 9H 2S JS"),
    )
    state, events = _run(state, Act(0, Draw("stock")))
    assert events == (StockReshuffled(30), CardDrawn(0, "stock", None, "AD"))
    assert state.stock == cards(
        "AD 8S JC JH TD 4S 6S AC QD 7H 5D 8D QS 5S 4H 5C KS KH 3C 6H KD 2S JD 9H 6D TC 7C 3D QC 9S"
    )
    assert state.stream_position == 81
    assert state.piles == (("2C",), ("JS",))


def test_every_deck_made_holds_the_same_card_strings() -> None:
    """A live game keeps its deck (in its state, and in each projection's fold of it): made
    once, its 52 strings are shared by every game, not made again for each deal."""
    one, two = make_deck(1), make_deck(2, jokers=2)
    assert two[:52] == two[52:104] == one
    assert all(a is b is c for a, b, c in zip(one, two[:52], two[52:104], strict=True))
