"""Finished hands, kept ready to serve step by step without reading the event store again.

At each `hand.ended` the hand's replay is computed by the one replay function the service
serves (`service.replay.replay_hand`, handed in: this layer does not import the service) from
the game's events through that event, and stored at `hand:<game_id>:<hand>`; its number goes
into the index `hands:<game_id>`. The game's last hand is written again at `game.ended`, the
step that closes it. A hand in play is never written: the projection's only documents are
finished hands, and the events it replays from stay in the projector's memory (`GameFolds`),
never in a served key.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from events.schema.common import GameEnded, HandEnded
from events.store.base import RecordedEvent
from projections.base import Doc, IndexAdd, Put, Write
from projections.folds import GameFolds, game_id

ReplayHand = Callable[[str, Sequence[tuple[int, Any]], int], Doc]
"""`(game_id, events through the hand's end as (version, event), hand)` -> the replay as
a JSON document (the service's `replay_hand`, encoded)."""


def hand_key(game: str, hand: int) -> str:
    return f"hand:{game}:{hand}"


def hands_index(game: str) -> str:
    return f"hands:{game}"


class Replays:
    name = "replay"
    version = 1

    def __init__(self, folds: GameFolds, replay_hand: ReplayHand) -> None:
        self.folds = folds
        self.replay_hand = replay_hand

    async def prepare(self, batch: Sequence[RecordedEvent]) -> None:
        await self.folds.prepare(batch)

    def keys(self, event: RecordedEvent) -> Sequence[str]:
        return ()

    def apply(self, event: RecordedEvent, docs: Mapping[str, Doc | None]) -> Sequence[Write]:
        game = game_id(event)
        data = event.data
        if game is None or not isinstance(data, HandEnded | GameEnded):
            return ()
        history = self.folds.history(event)
        if isinstance(data, HandEnded):
            hand = data.hand
        else:
            hand = next(e.hand for _, e in reversed(history) if isinstance(e, HandEnded))
        return (
            Put(hand_key(game, hand), self.replay_hand(game, history, hand)),
            IndexAdd(hands_index(game), str(hand), hand),
        )
