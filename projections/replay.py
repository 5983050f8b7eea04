"""Finished hands, kept in the projection store so a replay never reads the event store.

At each `hand.ended` the hand's events are stored at `hand:<game_id>:<hand>`: from its
`hand.dealt` (the first hand from `game.started`) through that `hand.ended`, as `[version,
event]` pairs in the events' stored JSON shape, every event of the range: the lobby's too (a
seat's seed set mid-hand, a seed chain extended, a seat resigned, a turn played for a seat),
so that a replay has no gap in its versions. A seed chain's secret is blanked (`shown`): it
reveals the server seeds of hands still to come and is secret until the game is over (the
feed and the export show it then); everything else of a finished hand is public. The hand's
number goes into the index `hands:<game_id>`. The hand's document is written again at each
event that follows its end before the next deal: `game.ended` for the last hand (and, in a
history that has them, lobby events between a hand's end and the next deal, which the
service never appends: the deal comes in the same append as the end). Hands 1..h laid end
to end are the game's play from its start through hand h, which is what
`service.read.replay.replay_hand` folds to show hand h step by step: the replay is computed
where it is served, by the same decider path as every other replay (`events_of` reads the
documents back).

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

from events.feed import Feed
from events.schema import EVENT_TYPES
from events.schema.common import GameEnded, GameStarted, HandDealt, HandEnded
from events.schema.lobby import EVENTS as LOBBY_EVENTS
from events.schema.lobby import SeedChainExtended
from events.store.base import RecordedEvent
from projections.base import Doc, IndexAdd, Put, Write
from projections.folds import GameFolds, game_id

_EVENTS: Any = list[tuple[int, Union.__getitem__(EVENT_TYPES)]]  # type: ignore[misc]
"""A document's `events`: (version, event) pairs of any stored event type, tagged by `type`."""


_WRITES = frozenset((HandEnded, GameEnded, *LOBBY_EVENTS))
"""The events that may write a hand: its end, the game's end, and a lobby event after the
hand's end (tested by exact type: events are never subclassed, and `isinstance` against
struct types costs more)."""


def hand_key(game: str, hand: int) -> str:
    return f"hand:{game}:{hand}"


def hands_index(game: str) -> str:
    return f"hands:{game}"


class Replays:
    name = "replay"
    version = 2
    """2: a hand's lobby events are kept (version 1 left them out)."""

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
        kept, end = self.folds.kept(event)
        over = _hand_over(kept, end)
        if over is None:
            return ()  # a lobby event before the game or in a hand in play: not yet
        hand, first = over
        # The kept (version, event) pairs themselves, not their `to_builtins` copy: the store
        # encodes them to the same JSON in one pass (converting first was a fifth of this
        # projection's cost); a new pair only for an event `shown` blanks.
        events = [
            pair if type(pair[1]) is not SeedChainExtended else (pair[0], shown(pair[1]))
            for pair in kept[first : end + 1]
        ]
        return (
            Put(hand_key(game, hand), {"game_id": game, "hand": hand, "events": events}),
            IndexAdd(hands_index(game), str(hand), hand),
        )


def shown(event: Any) -> Any:
    """The event as a replay shows it: whole, but a seed chain's secret, which tells the
    server seeds of hands still to come, is blank (the hand is over, the game may not be)."""
    if type(event) is SeedChainExtended and event.secret:
        return msgspec.structs.replace(event, secret="")
    return event


def _hand_over(kept: Sequence[tuple[int, Any]], end: int) -> tuple[int, int] | None:
    """The last hand dealt in `kept[: end + 1]` and where in `kept` its document starts (its
    `hand.dealt`, or `game.started` for the first hand), when that hand is over by `end`;
    None when no hand is dealt or the last one is still in play. The kept events of a game
    follow one another from its first, or from a `hand.dealt` (projections/folds.py)."""
    ended = 0
    for at in range(end, -1, -1):
        event = kept[at][1]
        kind = type(event)
        if kind is HandEnded and not ended:
            ended = event.hand
        elif kind is HandDealt:
            if event.hand != ended:
                return None
            if event.hand > 1:
                return event.hand, at
            break
    else:
        return None  # nothing dealt yet
    started = next(at for at, (_, e) in enumerate(kept) if type(e) is GameStarted)
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
