"""Finished hands, kept in the projection store so a replay never reads the event store.

At each `hand.ended` the hand's events are stored at `hand:<game_id>:<hand>`: from its
`hand.dealt` (the first hand from `game.started`) through that `hand.ended`, as `[version,
event]` pairs in the events' stored JSON shape, the lobby's events left out (a seat's seed,
a seed chain extended mid-game: not on the table, and a chain's secret stays secret until
the game is over); the hand's number goes into the index `hands:<game_id>`. At `game.ended`
the last hand is written again with the event that closes it. Hands 1..h laid end to end are
the game's play from its start through hand h, which is what `service.read.replay.replay_hand`
folds to show hand h step by step: the replay is computed where it is served, by the same
decider path as every other replay (`events_of` reads the documents back).

Why the events and not the finished `HandReplay` itself: a replay holds the whole table
after every step (160 KB for an average hand, 500 KB for a long one), and building it at
each `hand.ended` capped a rebuild at about 3,600 events/s; the events take a twentieth of
the room (7.5 KB an average hand) and a small share of the rebuild (docs/BENCHMARKS.md,
"Read models").

Only finished hands are ever written: the events of a hand in play stay in the projector's
memory (`GameFolds`) until its `hand.ended`. Once a hand is over, everything about it is
public (its seed included), so nothing here may be hidden from anyone.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Union

import msgspec

from events.schema import EVENT_TYPES
from events.schema.common import GameEnded, GameStarted, HandDealt, HandEnded
from events.schema.lobby import EVENTS as LOBBY_EVENTS
from events.store.base import RecordedEvent
from projections.base import Doc, IndexAdd, Put, Write
from projections.feed import Feed
from projections.folds import GameFolds, game_id

_EVENTS: Any = list[tuple[int, Union.__getitem__(EVENT_TYPES)]]  # type: ignore[misc]
"""A document's `events`: (version, event) pairs of any stored event type, tagged by `type`."""


_LOBBY_TYPES = frozenset(LOBBY_EVENTS)
"""The lobby's event types, tested by exact type (events are never subclassed)."""
_WRITES = frozenset((HandEnded, GameEnded))
"""The events that write a hand (tested by exact type: events are never subclassed, and
`isinstance` against struct types costs more)."""


def hand_key(game: str, hand: int) -> str:
    return f"hand:{game}:{hand}"


def hands_index(game: str) -> str:
    return f"hands:{game}"


class Replays:
    name = "replay"
    version = 1

    def __init__(self, folds: GameFolds | None = None) -> None:
        self.folds = folds or GameFolds(play=False, keep=True, name="replay")

    async def prepare(self, batch: Sequence[RecordedEvent], feed: Feed | None = None) -> None:
        await self.folds.prepare(batch, None if feed is None else feed.read_stream)

    def keys(self, event: RecordedEvent) -> Sequence[str]:
        return ()

    def apply(self, event: RecordedEvent, docs: Mapping[str, Doc | None]) -> Sequence[Write]:
        if type(event.data) not in _WRITES:  # first: nearly every event stops here
            return ()
        game = game_id(event)
        if game is None:
            return ()
        history = self.folds.history(event)
        hand, first = _hand_start(history)
        # The events themselves, not their `to_builtins` copy: the store encodes them to the
        # same JSON in one pass (converting first was a fifth of this projection's cost).
        events = [
            pair for pair in history if pair[0] >= first and type(pair[1]) not in _LOBBY_TYPES
        ]
        return (
            Put(hand_key(game, hand), {"game_id": game, "hand": hand, "events": events}),
            IndexAdd(hands_index(game), str(hand), hand),
        )


def _hand_start(history: Sequence[tuple[int, Any]]) -> tuple[int, int]:
    """The last hand dealt in `history` and the version its document starts at: its
    `hand.dealt`, or `game.started` for the first hand."""
    for version, event in reversed(history):
        if isinstance(event, HandDealt):
            if event.hand > 1:
                return event.hand, version
            break
    started = next(v for v, e in history if isinstance(e, GameStarted))
    return 1, started


def events_of(docs: Sequence[Doc | None], hand: int) -> list[tuple[int, Any]] | None:
    """The game's play through hand `hand` from the documents of hands 1..`hand` (in
    order), decoded to events; None when one of them is missing (not over, or not
    projected yet)."""
    if len(docs) != hand or any(doc is None for doc in docs):
        return None
    events: list[tuple[int, Any]] = []
    for doc in docs:
        assert doc is not None
        events.extend(msgspec.convert(doc["events"], _EVENTS))
    return events
