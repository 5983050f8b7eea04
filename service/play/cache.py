"""The games this process keeps in memory, bounded by what they weigh.

A slot holds one game's record and the lock that orders this process's commands on it. Slots
exist only for games that exist (a slot is made after the stream was read), and a slot's
record and lock are evicted together, least recently used first, never while a command holds
the lock. The bound is a number of events, the unit a record's size grows by; finished games
are evicted before live ones once more than `finished` of them are kept, since a finished
game is read rarely and rebuilt from the store in one query.
"""

from __future__ import annotations

import asyncio
from collections import OrderedDict
from dataclasses import dataclass, field

from service.play.record import GameRecord


@dataclass(slots=True, eq=False)
class Slot:
    record: GameRecord
    lock: asyncio.Lock = field(default_factory=asyncio.Lock)
    weight: int = 0
    """The record's weight when the cache last accounted for it."""
    finished: bool = False


class GameCache:
    def __init__(self, max_events: int, max_finished: int) -> None:
        self.max_events = max_events
        self.max_finished = max_finished
        self._slots: OrderedDict[str, Slot] = OrderedDict()
        self.events = 0
        """The total weight of the records kept."""
        self.finished = 0

    def __len__(self) -> int:
        return len(self._slots)

    def get(self, game_id: str) -> Slot | None:
        slot = self._slots.get(game_id)
        if slot is not None:
            self._slots.move_to_end(game_id)
        return slot

    def admit(self, record: GameRecord) -> Slot:
        """Keep `record` (a game that exists); the slot already kept for it wins a race."""
        slot = self._slots.get(record.game_id)
        if slot is None:
            slot = self._slots[record.game_id] = Slot(record)
        self.account(slot)
        return slot

    def discard(self, game_id: str) -> None:
        slot = self._slots.pop(game_id, None)
        if slot is not None:
            self.events -= slot.weight
            self.finished -= int(slot.finished)

    def account(self, slot: Slot) -> None:
        """Take note of what the slot's record weighs now, then evict down to the bounds."""
        if self._slots.get(slot.record.game_id) is not slot:
            return  # evicted meanwhile; the caller finishes with it and it is gone
        weight, finished = slot.record.weight, slot.record.finished
        self.events += weight - slot.weight
        self.finished += int(finished) - int(slot.finished)
        slot.weight, slot.finished = weight, finished
        self._slots.move_to_end(slot.record.game_id)
        if self.events > self.max_events or self.finished > self.max_finished:
            self._evict()

    def _evict(self) -> None:
        """Finished games first while too many are kept, then the least recently used. Each
        pass stops as soon as the bound holds, so an admission past the bound costs the few
        slots it evicts, not a walk over every slot kept."""
        events, finished = self.events, self.finished
        victims: dict[str, None] = {}
        if finished > self.max_finished:
            for game_id, slot in self._slots.items():
                if finished <= self.max_finished:
                    break
                if slot.finished and not slot.lock.locked():
                    victims[game_id] = None
                    events, finished = events - slot.weight, finished - 1
        for game_id, slot in self._slots.items():
            if events <= self.max_events:
                break
            if game_id not in victims and not slot.lock.locked():  # a command is on it
                victims[game_id] = None
                events, finished = events - slot.weight, finished - int(slot.finished)
        for game_id in victims:
            self.discard(game_id)
