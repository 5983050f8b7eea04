"""Replays served from the replay read model (projections/replay.py): the events of each
finished hand are in the projection store, so a replay is folded without reading the event
store, and the last few folded are kept, since a finished hand's replay changes no more.

A replay kept is found again by its hand's document as read (a digest of it), not by the
hand's number alone: after the store the projections follow was replaced or restored (they
rebuild by themselves, projections/projector.py), the same game and hand may have been
played otherwise, and the replay kept must not outlive the document it was folded from."""

from __future__ import annotations

import asyncio
import hashlib
from collections import OrderedDict

import msgspec

from projections.base import Doc, ProjectionReader, ProjectionsUnavailable
from projections.replay import Replays, events_of, hand_key
from service.contract.schemas import HandReplay
from service.read.replay import ReplayRefused, replay_hand


class ProjectedReplays:
    def __init__(self, kept: int = 32) -> None:
        """`kept`: replays kept folded (about 160 KB each on average, 500 KB at most)."""
        self.kept = kept
        self._replays: OrderedDict[tuple[str, int, bytes], HandReplay] = OrderedDict()

    async def replay(self, reader: ProjectionReader, game_id: str, hand: int) -> HandReplay | None:
        """Hand `hand` replayed from the read model; None when it cannot say (the hand is
        in play, not projected yet, or Redis is down): the caller then folds the game's own
        events. The hand's document is read first: a hand that is not there costs one small
        read, and one that is, folded before, costs nothing more (the document's digest is
        part of the key: the last hand's document gains the game's end)."""
        name = Replays.name
        try:
            last = await reader.get(name, hand_key(game_id, hand))
            if last is None:
                return None
            key = (game_id, hand, _digest(last))
            if (kept := self._replays.get(key)) is not None:
                self._replays.move_to_end(key)
                return kept
            earlier = await reader.get_many(name, [hand_key(game_id, h) for h in range(1, hand)])
        except ProjectionsUnavailable:
            return None
        events = events_of([*earlier, last], hand)
        if events is None:
            return None
        try:
            body = await asyncio.to_thread(replay_hand, game_id, events, hand)
        except ReplayRefused:
            return None  # never for a document the projection wrote; the caller decides
        self._replays[key] = body
        while len(self._replays) > self.kept:
            self._replays.popitem(last=False)
        return body


def _digest(doc: Doc) -> bytes:
    return hashlib.blake2b(msgspec.json.encode(doc), digest_size=16).digest()


REPLAYS = ProjectedReplays()
