"""The grid games (Hang Ten, Tens, Golf, Basketball): the actions a seat may send and the
events a hand records.

Actions carry no seat: the seat arrives in `Act(seat, action)` from who is asking. Events
carry the seat and every card they concern, so an auditor can read a hand without refolding
it. A field that may hold a secret while the hand is live (a card drawn from the stock, the
cards a player peeked at, the layouts revealed at the end) is optional, so that redaction can
blank it for a viewer who may not know it.
"""

from __future__ import annotations

from typing import Literal

import msgspec

from events.schema.common import CardText, Col, Row, Seat

Source = Literal["stock", "discard", "centre", "pile"]

# ---- actions --------------------------------------------------------------------------------


class SetupFlip(msgspec.Struct, frozen=True, forbid_unknown_fields=True, tag="setup-flip"):
    """Setup: turn one of your face-down cards face up. Hang Ten: two, one in each row and
    not in the same column, before play. Tens: three, no two orthogonally adjacent, before
    play. Golf: two in the same column, at the start of your first turn, before drawing."""

    row: Row
    col: Col


class Peek(msgspec.Struct, frozen=True, forbid_unknown_fields=True, tag="peek"):
    """Basketball: look once at the five cards of your row 1 (nearest you) at any time
    before your first draw. They stay face down; only you learn them."""


class Draw(msgspec.Struct, frozen=True, forbid_unknown_fields=True, tag="draw"):
    """Take a card: `stock` (the top of the stock), `discard` (the top of the shared discard
    pile: Golf, Basketball), `centre` (Hang Ten's centre card) or `pile` with `from_seat`
    (the top of another player's own discard pile: Hang Ten, Tens)."""

    source: Source
    from_seat: Seat | None = None


class Replace(msgspec.Struct, frozen=True, forbid_unknown_fields=True, tag="replace"):
    """Put the drawn card face up at (row, col); the card that was there goes face up onto
    your discard pile (your own in Hang Ten and Tens, the shared one in Golf and
    Basketball). A face-down card is replaced unseen. Basketball: face-down cards only."""

    row: Row
    col: Col


class Discard(msgspec.Struct, frozen=True, forbid_unknown_fields=True, tag="discard"):
    """Put the drawn card face up onto the discard pile instead of keeping it. Hang Ten: any
    drawn card, onto your own pile, and no flip follows. Golf and Basketball: a card from the
    stock only, and a flip follows (Golf: with one face-down card left, go out or end the
    turn instead). Tens: never."""


class Flip(msgspec.Struct, frozen=True, forbid_unknown_fields=True, tag="flip"):
    """After discarding a stock card (Golf, Basketball): turn a face-down card face up."""

    row: Row
    col: Col


class GoOut(msgspec.Struct, frozen=True, forbid_unknown_fields=True, tag="go-out"):
    """Golf: with exactly one face-down card left after replacing or discarding, turn it up
    and go out; every other player then has one final turn."""


class EndTurn(msgspec.Struct, frozen=True, forbid_unknown_fields=True, tag="end-turn"):
    """Golf: with exactly one face-down card left after replacing or discarding, leave it
    down and end the turn."""


GridAction = SetupFlip | Peek | Draw | Replace | Discard | Flip | GoOut | EndTurn

# ---- events ---------------------------------------------------------------------------------


class SetupCardTurned(msgspec.Struct, frozen=True, tag="setup.card.turned"):
    """A player turned a layout card face up during setup."""

    seat: Seat
    row: Row
    col: Col
    card: CardText


class CardsPeeked(msgspec.Struct, frozen=True, tag="cards.peeked"):
    """A player looked at the cards of one row (Basketball: row 1). Only the owner may know
    `cards` while the hand is live; the cards stay face down."""

    seat: Seat
    row: Row
    cards: tuple[CardText, ...] | None = None


class CardDrawn(msgspec.Struct, frozen=True, tag="card.drawn"):
    """A player drew a card. From the stock, `card` is known to the drawer alone while the
    hand is live; from a pile or the centre it was public already."""

    seat: Seat
    source: Source
    from_seat: Seat | None = None
    card: CardText | None = None


class CardReplaced(msgspec.Struct, frozen=True, tag="card.replaced"):
    """A player placed the drawn card face up at (row, col); `replaced`, the card that was
    there, went face up onto a discard pile (the player's own, or the shared one)."""

    seat: Seat
    row: Row
    col: Col
    card: CardText
    replaced: CardText
    was_face_up: bool = False


class CardDiscarded(msgspec.Struct, frozen=True, tag="card.discarded"):
    """A player put the drawn card face up onto a discard pile without keeping it."""

    seat: Seat
    card: CardText


class CardTurned(msgspec.Struct, frozen=True, tag="card.turned"):
    """A player turned a face-down layout card face up (after a discard, or going out)."""

    seat: Seat
    row: Row
    col: Col
    card: CardText


class PlayerWentOut(msgspec.Struct, frozen=True, tag="player.went.out"):
    """A player ended a turn with every card face up: every other player has one more turn."""

    seat: Seat


class TurnEnded(msgspec.Struct, frozen=True, tag="turn.ended"):
    """A player's turn is over; `next_seat` plays next, or None when the hand ends here."""

    seat: Seat
    next_seat: Seat | None = None


class StockReshuffled(msgspec.Struct, frozen=True, tag="stock.reshuffled"):
    """The stock ran out: every discard pile but its top card was shuffled into a new stock of
    `cards` cards, continuing the hand's seeded stream (the order stays secret)."""

    cards: int


class LayoutsRevealed(msgspec.Struct, frozen=True, tag="layouts.revealed"):
    """The hand is over: every layout as it stands, per seat, `[row 0, row 1]`."""

    layouts: tuple[tuple[tuple[CardText | None, ...], ...], ...] | None = None


EVENTS: tuple[type, ...] = (
    SetupCardTurned,
    CardsPeeked,
    CardDrawn,
    CardReplaced,
    CardDiscarded,
    CardTurned,
    PlayerWentOut,
    TurnEnded,
    StockReshuffled,
    LayoutsRevealed,
)

GridEvent = (
    SetupCardTurned
    | CardsPeeked
    | CardDrawn
    | CardReplaced
    | CardDiscarded
    | CardTurned
    | PlayerWentOut
    | TurnEnded
    | StockReshuffled
    | LayoutsRevealed
)
