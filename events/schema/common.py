"""Events and commands shared by every variant.

Stored event shapes only grow: a new field gets a default; a tag or a field's type never
changes; a breaking change is a new event type plus an upcaster (events/codec.py).
"""

from __future__ import annotations

from typing import Annotated

import msgspec

CardText = Annotated[
    str,
    msgspec.Meta(
        pattern=r"^(?:[A2-9TJQK][SHDC]|JK)(?![\s\S])", description="A card: rank + suit, or JK"
    ),
]
SeedHex = Annotated[
    str, msgspec.Meta(pattern=r"^[0-9a-f]{64}(?![\s\S])", description="32 bytes, hex")
]
Seat = Annotated[int, msgspec.Meta(ge=0, le=15)]
Row = Annotated[int, msgspec.Meta(ge=0, le=1)]
Col = Annotated[int, msgspec.Meta(ge=0, le=4)]


class GameOptions(msgspec.Struct, frozen=True, forbid_unknown_fields=True, omit_defaults=True):
    """House options; every field is optional and defaults to the variant's rule."""

    turn_limit: Annotated[int, msgspec.Meta(ge=1, le=10_000)] | None = None
    """Turns each player may take in a hand before it ends as it stands
    (Tens-shedding: plays in a round)."""
    hands: Annotated[int, msgspec.Meta(ge=1, le=100)] | None = None
    """Hands in a game, for variants with a fixed number (Hang Ten 10, Golf 9, Basketball 1)."""
    grab_min: Annotated[int, msgspec.Meta(ge=1, le=40)] | None = None
    grab_max: Annotated[int, msgspec.Meta(ge=1, le=40)] | None = None
    """Tens-shedding: the simulated grab is uniform in [grab_min, grab_max] (16..22)."""
    turn_seconds: Annotated[int, msgspec.Meta(ge=5, le=86_400)] | None = None
    """The turn clock: seconds a seat has to act once it is its turn (in setup, from the
    deal). When they run out, the service plays for the seat with the greedy bot on the
    seat's own view, recorded as `turn.played_for` (domain/clock.py). None: no clock."""


# ---- events -------------------------------------------------------------------------------


class GameStarted(msgspec.Struct, frozen=True, tag="game.started"):
    """The first event the domain folds: the variant, the number of players, the options."""

    variant: str
    players: int
    options: GameOptions = GameOptions()


class HandDealt(msgspec.Struct, frozen=True, tag="hand.dealt"):
    """A hand was dealt from `seed` by the documented shuffle.

    The seed is secret until the hand ends: every viewer sees it redacted (empty) while the
    hand is live, and sees `commitment` = SHA-256(seed) from the start.
    """

    hand: int
    dealer: int
    seed: str
    commitment: str
    shuffle: str = "sha256-fisher-yates-v1"
    server_seed: str = ""
    """`hmac-seat-seeds-v2`: the service's seed for the hand (hex), link `hand` of the seed
    chain committed when the game was created; secret, like `seed`, until the hand ends.
    `commitment` is then SHA-256(server_seed) and `seed` = HMAC(server_seed, the nonce and
    `seat_seeds`) (docs/SHUFFLE.md)."""
    seat_seeds: tuple[str, ...] = ()
    """`hmac-seat-seeds-v2`: each seat's seed for the hand, in seat order (public)."""
    nonce: int = 0
    """`hmac-seat-seeds-v2`: the hand number, mixed into the hand's seed."""


class HandEnded(msgspec.Struct, frozen=True, tag="hand.ended"):
    """The hand is over; the seed is revealed and the hand's scores are final."""

    hand: int
    reason: str
    seed: str
    scores: tuple[int, ...]
    totals: tuple[int, ...]
    server_seed: str = ""
    """`hmac-seat-seeds-v2`: the hand's server seed, revealed (empty for older hands)."""


class GameEnded(msgspec.Struct, frozen=True, tag="game.ended"):
    totals: tuple[int, ...]
    winners: tuple[int, ...]


# ---- commands -----------------------------------------------------------------------------


class DealHand(msgspec.Struct, frozen=True, tag="deal-hand"):
    """Deal the next hand. Its seeds come from outside the domain.

    With `server_seed` (the service's seed-chain link for the hand) and `seat_seeds` (one
    per seat), the domain derives the hand's seed itself (`hmac-seat-seeds-v2`); with `seed`
    alone the seed is used as it is (`sha256-fisher-yates-v1`: simulations, older games)."""

    seed: str = ""
    server_seed: str = ""
    seat_seeds: tuple[str, ...] = ()


class Act(msgspec.Struct, frozen=True):
    """A seat's action, as the domain receives it: the seat comes from who is asking,
    never from the request body. Not stored; the events it causes are."""

    seat: int
    action: object
