"""Events of a game's lobby: before `game.started`, seats are claimed by clients."""

from __future__ import annotations

import msgspec

from events.schema.common import GameOptions


class GameCreated(msgspec.Struct, frozen=True, tag="game.created"):
    """A game was opened. `creator_hash` is SHA-256 of the creator's secret token."""

    variant: str
    seats: int
    options: GameOptions
    creator_hash: str
    title: str = ""
    seed_anchor: str = ""
    """x_0 of the game's seed chain (hex): hand k's server seed x_k satisfies
    SHA-256(x_k) = x_(k-1). Committed here, before any seat exists (docs/SHUFFLE.md)."""
    seed_hands: int = 0
    """L, the number of hands the chain covers (hands 1..L); 0 for games created before."""
    seed_secret: str = ""
    """x_L (hex), from which every server seed of the chain follows: secret until the game
    is over (`GameRecord.redact` blanks it for every viewer before)."""
    tournament: str = ""
    """The tournament whose table this game is (its id), empty for a casual game."""
    round: int = 0
    """The tournament round (1-based), 0 for a casual game."""
    table: int = 0
    """The table in the round (1-based), 0 for a casual game."""
    peers: tuple[str, ...] = ()
    """Duplicate deals: the ids of every game of the round (this one included, in table
    order) dealt from the same seed chain and seat seeds, hence the same cards. Empty when
    the game's deals are its own."""
    rematch_of: str = ""
    """The finished game this one is the rematch of (its id), empty otherwise: the same
    variant, options and seats, each holder with its old token (`game.rematched` on the old
    game names this one)."""
    rules_version: str = ""
    """The rules engine the game is dealt and scored by (`golf/1`: domain/rules_versions.py),
    so that a verifier judges it by those rules or refuses by name; "" for games created
    before the field, judged as version 1."""


class SeatClaimed(msgspec.Struct, frozen=True, tag="seat.claimed"):
    """A client took a seat. `token_hash` is SHA-256 of the seat's secret token.

    A bot seat names its level in `bot` (`random`, `greedy`, `strong`: domain.variants
    BOT_KINDS) and has `token_hash` "": no token hashes to "", so no client can ever act
    for it; the service's bot runner plays it from the seat's own view."""

    seat: int
    name: str
    token_hash: str
    bot: str = ""


class SeatReleased(msgspec.Struct, frozen=True, tag="seat.released"):
    """A claimed seat was given up before the game started (by the creator, or by the
    seat's holder); its token no longer holds it and the seat is free to claim again."""

    seat: int


class SeatSeedSet(msgspec.Struct, frozen=True, tag="seat.seed_set"):
    """A seat chose its seed for the hands dealt from now on (public). It counts for a
    hand if set after the seed chain covering that hand was committed."""

    seat: int
    seed: str


class SeedChainExtended(msgspec.Struct, frozen=True, tag="seed_chain.extended"):
    """The game outlasted its seed chain: a new chain covers hands `first_hand` ..
    `first_hand + hands - 1`; `secret` is secret until the game is over, like
    `GameCreated.seed_secret`. Seat seeds set before this event do not count for its hands."""

    first_hand: int
    hands: int
    anchor: str
    secret: str = ""


class SeatResigned(msgspec.Struct, frozen=True, tag="seat.resigned"):
    """A seat left a game in play: its holder resigned (`resigned`), or its player withdrew
    from the tournament the game belongs to (`withdrawn`). From then on the service plays
    the seat's turns with the greedy bot, so the table finishes; the seat's token still
    reads its view but acts no more. What the seat scores: docs/TOURNAMENTS.md."""

    seat: int
    reason: str


class TurnPlayedFor(msgspec.Struct, frozen=True, tag="turn.played_for"):
    """The service played a seat's turn for it with the greedy bot on the seat's own view:
    its turn clock ran out (`timeout`) or the seat has resigned (`resigned`, `withdrawn`).
    The events of the action follow it in the same append, whose metadata records the
    action as for any seat's action; the domain folds nothing for this event."""

    seat: int
    reason: str


class GameRematched(msgspec.Struct, frozen=True, tag="game.rematched"):
    """Appended to a finished game: `game_id` is its rematch (whose `game.created` names
    this game in `rematch_of`), so each of the two games links to the other. One rematch
    per game; the domain folds nothing for it."""

    game_id: str


EVENTS: tuple[type, ...] = (
    GameCreated,
    SeatClaimed,
    SeatReleased,
    SeatSeedSet,
    SeedChainExtended,
    SeatResigned,
    TurnPlayedFor,
    GameRematched,
)
