"""Cards and decks, written as in the rules: rank + suit (`AS`, `TD`, `KC`) or `JK`."""

from __future__ import annotations

from collections.abc import Iterable

RANKS = "A23456789TJQK"
SUITS = "SHDC"
JOKER = "JK"

Card = str
"""A card is its text: two characters, rank then suit, or `JK` for a joker."""

_VALID: frozenset[str] = frozenset({r + s for r in RANKS for s in SUITS} | {JOKER})


def is_card(text: object) -> bool:
    return isinstance(text, str) and text in _VALID


def rank_of(card: Card) -> str:
    """The rank that pairs and groups compare: `A`..`K`, or `JK` for a joker."""
    return JOKER if card == JOKER else card[0]


def rank_order(rank: str) -> int:
    """A is low (0), K is high (12); the order of Tens-shedding."""
    return RANKS.index(rank)


def make_deck(decks: int, jokers: int = 0) -> tuple[Card, ...]:
    """The unshuffled order of `decks` standard decks followed by `jokers` jokers.

    Each deck is laid out suit by suit (S, H, D, C), each suit A..K; the jokers come last.
    This order is part of the documented shuffle (docs/SHUFFLE.md): changing it changes
    every deal.
    """
    one = [rank + suit for suit in SUITS for rank in RANKS]
    return tuple(one * decks) + (JOKER,) * jokers


def count_cards(cards: Iterable[Card | None]) -> dict[Card, int]:
    counts: dict[Card, int] = {}
    for card in cards:
        if card is not None:
            counts[card] = counts.get(card, 0) + 1
    return counts
