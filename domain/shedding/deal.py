"""The deal of a round, derived from its seed alone (docs/SHUFFLE.md for the stream).

The draws on the round's stream, in order: the first round's dealer (`below(players)`),
the shuffle of `decks_for(players)` decks, then each seat's grab size in seat order 0..n-1.
Every player then gets 19 cards from the top of the deck (index 0), one player at a time
starting left of the dealer: the first 4 are the face-down stack bottoms, the other 15 the
cards to choose the face-up stack cards from. The rest of the deck stays out, unseen.
"""

from __future__ import annotations

import msgspec

from domain.cards import Card, make_deck
from domain.shedding.rules import CARDS_EACH, STACKS, Rules, decks_for, first_player
from domain.shedding.state import Player
from domain.shuffle import Stream


class Deal(msgspec.Struct, frozen=True):
    dealer: int
    first: int
    players: tuple[Player, ...]
    undealt: tuple[Card, ...]


def first_dealer(seed: bytes, players: int) -> int:
    """The first round's dealer: the first draw on its stream."""
    return Stream(seed).below(players)[0]


def deal_round(seed: bytes, players: int, rules: Rules, dealer: int | None) -> Deal:
    """`dealer` is None for the first round: it is then drawn from the seed."""
    stream = Stream(seed)
    if dealer is None:
        dealer, stream = stream.below(players)
    deck, stream = stream.shuffled(make_deck(decks_for(players)))
    grabs: list[int] = []
    for _ in range(players):
        extra, stream = stream.below(rules.grab_max - rules.grab_min + 1)
        grabs.append(rules.grab_min + extra)
    dealt: dict[int, tuple[Card, ...]] = {}
    for order in range(players):
        seat = (dealer + 1 + order) % players
        dealt[seat] = deck[order * CARDS_EACH : (order + 1) * CARDS_EACH]
    seats = tuple(
        Player(
            grab=grabs[seat],
            hand=dealt[seat][STACKS:],
            face_up=(None,) * STACKS,
            face_down=dealt[seat][:STACKS],
        )
        for seat in range(players)
    )
    return Deal(
        dealer=dealer,
        first=first_player(grabs),
        players=seats,
        undealt=deck[players * CARDS_EACH :],
    )
