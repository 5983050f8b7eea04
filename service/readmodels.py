"""What the service reads from the read models beside its own cache: the events of a
finished hand, kept by the replay projection (projections/replay.py)."""

from __future__ import annotations

from typing import Any

from projections.base import ProjectionReader, ProjectionsUnavailable
from projections.replay import Replays, events_of, hand_key


async def finished_hand(
    reader: ProjectionReader, game_id: str, hand: int
) -> list[tuple[int, Any]] | None:
    """The game's play through hand `hand` as (version, event), from the replay projection;
    None when it cannot say (the hand is in play, not projected yet, or Redis is down): the
    caller then folds the game's events itself. Two round trips: the hand's own document
    first, so a hand that is not there costs one small read."""
    name = Replays.name
    try:
        last = await reader.get(name, hand_key(game_id, hand))
        if last is None:
            return None
        earlier = await reader.get_many(name, [hand_key(game_id, h) for h in range(1, hand)])
    except ProjectionsUnavailable:
        return None
    return events_of([*earlier, last], hand)
