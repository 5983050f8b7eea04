"""The documented shuffle (docs/SHUFFLE.md) is what the code does."""

import hashlib
from collections import Counter

import pytest

from domain.cards import JOKER, make_deck, rank_of
from domain.shuffle import Stream, commitment

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
