"""A game's lobby and status as the game resources answer them: each seat's holder, why
the bot plays it and its turn clock, the summary as of a version, and the summary with its
receipt that an answer which stored events gives."""

from __future__ import annotations

from datetime import datetime
from typing import TypedDict

from events.schema.lobby import GameRematched
from service.contract import schemas as s
from service.live.spectators import status_at
from service.play.games import GameService
from service.play.record import GameRecord


def seat_states(
    record: GameRecord, deadlines: dict[int, datetime] | None = None
) -> list[s.SeatState]:
    """Each seat's holder, the level of the bot that holds it, whether the service's bot
    plays it for a player who resigned, and when its time to act runs out."""
    lobby, deadlines = record.lobby, deadlines or {}
    return [
        s.SeatState(
            seat,
            name,
            lobby.bot_at(seat),
            lobby.resigned_reason(seat),  # type: ignore[arg-type]
            iso(deadlines.get(seat)),
        )
        for seat, name in enumerate(lobby.names)
    ]


def iso(moment: datetime | None) -> str | None:
    return None if moment is None else moment.isoformat()


async def clock_of(games: GameService, record: GameRecord, version: int) -> dict[int, datetime]:
    """The turn deadlines shown with the game as of `version`: the live game's only (a
    delayed spectator sees none: the clock would tell them the table has moved on)."""
    return await games.turn_deadlines(record) if version == record.version else {}


def summary(
    record: GameRecord, version: int | None = None, deadlines: dict[int, datetime] | None = None
) -> s.GameSummary:
    """The game's lobby and status, as of `version` (default: now)."""
    lobby = record.lobby
    version = record.version if version is None else version
    status = status_at(record, version)
    return s.GameSummary(
        game_id=record.game_id,
        variant=lobby.variant,  # type: ignore[arg-type]
        title=lobby.title,
        seats=seat_states(record, deadlines),
        options=lobby.options,
        version=version,
        started=record.started,
        status=status,
        turn_deadline=iso(min(deadlines.values(), default=None) if deadlines else None),
        **links(record, version),
    )


class RematchLinks(TypedDict):
    rematch_of: str | None
    rematch: str | None


def links(record: GameRecord, version: int) -> RematchLinks:
    """The rematch links as of `version`: the game this one is the rematch of, and this
    one's rematch once `game.rematched` is within `version`."""
    rematch = None
    if record.rematch:  # appended after game.ended: a delayed reader may not be there yet
        shown = record.entries[:version]
        rematch = next((e.event.game_id for e in shown if isinstance(e.event, GameRematched)), None)
    return {"rematch_of": record.lobby.rematch_of or None, "rematch": rematch}


def signed_summary(games: GameService, record: GameRecord, version: int) -> s.GameSummary:
    """The summary an answer that stored events gives, with its receipt."""
    signed = summary(record, version)
    signed.receipt = games.receipt(record, version)
    return signed
