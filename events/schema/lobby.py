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


class SeatClaimed(msgspec.Struct, frozen=True, tag="seat.claimed"):
    """A client took a seat. `token_hash` is SHA-256 of the seat's secret token."""

    seat: int
    name: str
    token_hash: str


class SeatReleased(msgspec.Struct, frozen=True, tag="seat.released"):
    """A claimed seat was given up before the game started (by the creator, or by the
    seat's holder); its token no longer holds it and the seat is free to claim again."""

    seat: int


EVENTS: tuple[type, ...] = (GameCreated, SeatClaimed, SeatReleased)
