"""Small builders for event store tests: stream ids, events, new events."""

from __future__ import annotations

import uuid
from typing import Any

from events.schema.common import GameEnded, GameStarted, HandDealt
from events.store import NewEvent


def stream(category: str = "game") -> str:
    return f"{category}:{uuid.uuid4().hex}"


def started(players: int = 4, variant: str = "golf") -> GameStarted:
    return GameStarted(variant=variant, players=players)


def dealt(hand: int = 1) -> HandDealt:
    return HandDealt(hand=hand, dealer=0, seed="ab" * 32, commitment="cd" * 32)


def ended(*totals: int) -> GameEnded:
    return GameEnded(totals=totals or (3, 1), winners=(1,))


def new(
    event: object | None = None, event_id: uuid.UUID | None = None, **metadata: Any
) -> NewEvent:
    return NewEvent(event_id or uuid.uuid4(), event if event is not None else started(), metadata)


def a_game(hands: int = 2) -> list[NewEvent]:
    """GameStarted, then one HandDealt per hand, then GameEnded."""
    return [
        new(started(), seat=0),
        *(new(dealt(h), request="r-" + str(h)) for h in range(1, hands + 1)),
        new(ended()),
    ]
