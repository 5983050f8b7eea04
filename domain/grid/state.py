"""The state of a grid game: immutable, cheap to copy, built only by `evolve`.

Per-seat facts are tuples indexed by seat; a layout is a row-major tuple of cards with its
face-up (and peeked) positions as bit masks; the stock is the shuffled deck with the index
of its top card, so drawing copies nothing.
"""

from __future__ import annotations

from typing import TypeVar

import msgspec

from domain.cards import Card
from domain.decider import Phase

T = TypeVar("T")


Step = str
"""Where the turn of `to_play` stands: `setup` (Golf's first-turn flips), `draw`, `place`
(a card is in hand), `flip` (a flip must follow the discard), `finish` (Golf: go out or end
the turn), `over` (between the last card event of a turn and its `turn.ended`), or ``."""


class HandResult(msgspec.Struct, frozen=True):
    """How the last hand ended; public."""

    hand: int
    reason: str
    seed: str
    scores: tuple[int, ...]
    totals: tuple[int, ...]


class GridState(msgspec.Struct, frozen=True):
    players: int
    turn_limit: int
    hands: int | None
    """The game's length in hands, when it has one."""
    phase: Phase = "awaiting_deal"
    hand: int = 0
    dealer: int = -1
    seed: str = ""
    """Secret while the hand is live."""
    commitment: str = ""
    server_seed: str = ""
    """The hand's server seed (`hmac-seat-seeds-v2`); secret while the hand is live."""
    stream_position: int = 0
    """Where the hand's seeded stream stands after the deal (and any reshuffle)."""
    stock: tuple[Card, ...] = ()
    top: int = 0
    """The index in `stock` of its top card; `len(stock)` when it is empty."""
    layouts: tuple[tuple[Card, ...], ...] = ()
    face_up: tuple[int, ...] = ()
    peeked: tuple[int, ...] = ()
    """Positions each owner has looked at (Basketball)."""
    piles: tuple[tuple[Card, ...], ...] = ()
    """Each player's own discard pile, or one shared pile; the last card is the top."""
    centre: Card | None = None
    setup_left: tuple[int, ...] = ()
    to_play: int = -1
    step: Step = ""
    drawn: Card | None = None
    drawn_from: str | None = None
    turns: tuple[int, ...] = ()
    """Turns each player has finished this hand."""
    went_out: int | None = None
    totals: tuple[int, ...] = ()
    last_hand: HandResult | None = None
    winners: tuple[int, ...] = ()

    @property
    def stock_size(self) -> int:
        return len(self.stock) - self.top

    @property
    def hand_is_over(self) -> bool:
        return self.hand > 0 and self.phase in ("awaiting_deal", "game_over")


def put(items: tuple[T, ...], at: int, item: T) -> tuple[T, ...]:
    """`items` with `item` at `at`."""
    return (*items[:at], item, *items[at + 1 :])
