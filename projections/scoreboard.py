"""The scoreboard of each game: its seats, the score of every finished hand, the totals,
whose turn it is and where the game stands.

Two documents per game: `game:<game_id>` (seats and status), replaced at each of the game's
events (its `version` is the game's, so the API can use it as the ETag), and
`hands:<game_id>` (every finished hand), replaced at each `hand.ended` only: the list of
hands is not encoded again at every move. Whose turn it is comes from
the decider (`GameFolds`): the events alone do not say it for every variant. Nothing here
names a card: scores, totals, seats and the status are public from the moment they exist.

A batch is committed as one step, so of a game's several events in one batch only the last
one's `game:` document is ever stored: the events before it write it only when they change
the seats (the last one copies those), and the status (about a microsecond of the decider's
time) is computed for the last one alone.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import msgspec

from domain.decider import Status
from events.feed import Feed
from events.schema.common import HandEnded
from events.schema.lobby import GameCreated, SeatClaimed, SeatReleased
from events.store.base import RecordedEvent
from projections.base import Doc, Put, Write
from projections.folds import GAME_PREFIX, GameFolds


class HandLine(msgspec.Struct, frozen=True):
    hand: int
    reason: str
    scores: tuple[int, ...]
    totals: tuple[int, ...]
    """The running totals after this hand."""


class GameLine(msgspec.Struct, frozen=True):
    """The stored `game:<game_id>` document."""

    game_id: str
    variant: str
    version: int
    """The game's version (its last event) when the document was written."""
    seats: list[str | None]
    """Each seat's claimed name; null for a free seat."""
    status: Status | None
    """Phase, hand, whose turn (`to_act`), totals, winners; null before the game starts."""
    bots: list[str | None] = []
    """Each seat's bot level (null for a person's seat); absent from a document (empty
    here) until a bot takes a seat of the game."""


class Hands(msgspec.Struct, frozen=True):
    """The stored `hands:<game_id>` document (absent until the first hand ends)."""

    hands: list[HandLine]


def key(game: str) -> str:
    return f"game:{game}"


def hands_key(game: str) -> str:
    return f"hands:{game}"


_SEATS = frozenset((GameCreated, SeatClaimed, SeatReleased))
"""The events that set the seats: each writes the document even when not the batch's last
(tested by exact type: events are never subclassed)."""


class Scoreboard:
    name = "scoreboard"
    version = 1

    def __init__(self, folds: GameFolds | None = None) -> None:
        self.folds = folds or GameFolds(name="scoreboard")

    async def prepare(self, batch: Sequence[RecordedEvent], feed: Feed | None = None) -> None:
        await self.folds.prepare(batch, None if feed is None else feed.read_stream)

    def keys(self, event: RecordedEvent) -> Sequence[str]:
        stream = event.stream_id  # `game:<game_id>`: the game document's key too
        if not stream.startswith(GAME_PREFIX):
            return ()
        if type(event.data) is HandEnded:
            return (stream, hands_key(stream[len(GAME_PREFIX) :]))
        return (stream,)

    def apply(self, event: RecordedEvent, docs: Mapping[str, Doc | None]) -> Sequence[Write]:
        stream = event.stream_id  # `game:<game_id>`, which is `key(game_id)`
        if not stream.startswith(GAME_PREFIX):
            return ()
        data = event.data
        game = stream[len(GAME_PREFIX) :]
        if not self.folds.last_in_batch(event) and type(data) not in _SEATS:
            # A later event of this game in the batch writes the document: its version and
            # status are the ones that stay.
            return (_hand_ended(game, data, docs),) if type(data) is HandEnded else ()
        doc = docs.get(stream)
        if isinstance(data, GameCreated):
            new: Doc = {
                "game_id": game,
                "variant": data.variant,
                "seats": [None] * data.seats,
                "status": None,
            }
        elif doc is None:
            raise ValueError(f"{event.stream_id} v{event.version}: no scoreboard before it")
        else:
            new = dict(doc)
            if isinstance(data, (SeatClaimed, SeatReleased)):
                seats = list(doc["seats"])
                seats[data.seat] = data.name if isinstance(data, SeatClaimed) else None
                new["seats"] = seats
                bot = data.bot if isinstance(data, SeatClaimed) else ""
                if bot or "bots" in doc:
                    bots = list(doc.get("bots") or [None] * len(seats))
                    bots[data.seat] = bot or None
                    new["bots"] = bots
            new["status"] = _status(self.folds.status_after(event))
        new["version"] = event.version
        put = Put(stream, new)
        if isinstance(data, HandEnded):
            return (put, _hand_ended(game, data, docs))
        return (put,)


def _hand_ended(game: str, data: HandEnded, docs: Mapping[str, Doc | None]) -> Put:
    line = {
        "hand": data.hand,
        "reason": data.reason,
        "scores": list(data.scores),
        "totals": list(data.totals),
    }
    before = docs.get(hands_key(game))
    return Put(hands_key(game), {"hands": [*(before or {"hands": []})["hands"], line]})


def _status(status: Status | None) -> dict[str, Any] | None:
    if status is None:
        return None
    return {
        "phase": status.phase,
        "hand": status.hand,
        "to_act": list(status.to_act),
        "totals": list(status.totals),
        "winners": list(status.winners),
    }
