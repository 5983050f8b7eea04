"""Cards and decks, written as in the rules: rank + suit (`AS`, `TD`, `KC`) or `JK`."""

from __future__ import annotations

from collections.abc import Iterable

from domain.errors import RuleViolation

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
    return _ONE_DECK * decks + (JOKER,) * jokers


_ONE_DECK: tuple[Card, ...] = tuple(rank + suit for suit in SUITS for rank in RANKS)
"""One deck in its unshuffled order, made once: every deck dealt holds these very strings,
where a deck made per deal held 104 new ones (about 5 KB a live game, in the game's state
and in each projection's fold of it)."""


def count_cards(cards: Iterable[Card | None]) -> dict[Card, int]:
    counts: dict[Card, int] = {}
    for card in cards:
        if card is not None:
            counts[card] = counts.get(card, 0) + 1
    return counts


def not_in_decks(cards: Iterable[Card], decks: int, jokers: int = 0) -> Card | None:
    """The first card that `decks` decks and `jokers` jokers cannot hold: not a card, a joker
    where there are none, or one copy more than they contain. None when every card fits."""
    seen: dict[Card, int] = {}
    for card in cards:
        seen[card] = seen.get(card, 0) + 1
        copies = jokers if card == JOKER else decks if is_card(card) else 0
        if seen[card] > copies:
            return card
    return None


def check_in_decks(cards: Iterable[Card], decks: int, jokers: int, game: str) -> None:
    """RuleViolation `card_not_available` naming the first card `game`'s largest deck
    (`decks` decks and `jokers` jokers) cannot hold."""
    card = not_in_decks(cards, decks, jokers)
    if card is None:
        return
    if not is_card(card):
        why = f"{card!r} is not a card"
    elif card == JOKER and not jokers:
        why = f"{game} is played without jokers: {card} is not in its decks"
    elif card == JOKER:
        why = f"{game} is played with at most {jokers} jokers: one {card} too many"
    else:
        decks_text = f"{decks} deck{'s' if decks > 1 else ''}"
        why = f"{game} is played with at most {decks_text}: one {card} too many"
    raise RuleViolation("card_not_available", why)
