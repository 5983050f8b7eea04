"""Games as the command path holds them: read from the store into the cache, caught up with
what other instances appended, and folded as this process appends.

Every read continues the hash chain this process has verified so far: a broken chain is
never served or extended (the game leaves the cache, the operator hears of it, the client
gets a problem).
"""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Sequence
from dataclasses import dataclass

from events.codec import GENESIS_HASH
from events.schema.lobby import GameCreated
from events.store import AppendResult, ChainBroken, EventStore, NewEvent, RecordedEvent
from service.contract.problems import ApiError
from service.ops.logging import log
from service.ops.metrics import Metrics
from service.play.cache import GameCache, Slot
from service.play.record import GameRecord


def stream_id(game_id: str) -> str:
    return f"game:{game_id}"


class GameStreams:
    """The games' kind of stream (service/commands/stream.py): cached records, a lock each."""

    noun = "game"
    ids = uuid.UUID("6f1c3a52-6a55-4d0b-9d0e-0a7f3b2c9e11")

    def __init__(self, store: EventStore, metrics: Metrics, cache: GameCache) -> None:
        self.store = store
        self.metrics = metrics
        self.cache = cache

    def stream_id(self, name: str) -> str:
        return stream_id(name)

    async def hold(self, game_id: str) -> HeldGame:
        slot = self.cache.get(game_id)
        if slot is not None:
            return HeldGame(self, slot, fresh=False)
        return HeldGame(self, await self._admit(game_id), fresh=True)

    async def begun(
        self, game_id: str, new: Sequence[NewEvent], result: AppendResult
    ) -> GameRecord:
        created = new[0].event
        assert isinstance(created, GameCreated)
        record = GameRecord.begin(game_id, created, _links(result, len(new))[0])
        slot = self.cache.admit(record)
        if slot.record is record:
            self.fold(slot, new, result)
        else:  # another request admitted it meanwhile
            await self.catch_up(slot)
        return slot.record

    async def _admit(self, game_id: str) -> Slot:
        """Read a game not in the cache; only a game that exists gets a slot."""
        stored = await self._read(game_id, 1, GENESIS_HASH)
        if not stored or not isinstance(stored[0].data, GameCreated):
            raise ApiError(404, "game_not_found", f"no game has the id {game_id!r}")
        record = GameRecord.begin(game_id, stored[0].data, stored[0].hash)
        for item in stored[1:]:
            _fold_stored(record, item)
        slot = self.cache.admit(record)
        if slot.record is not record:  # another request admitted it meanwhile
            await self.catch_up(slot)
        return slot

    async def catch_up(self, slot: Slot) -> None:
        record = slot.record
        for item in await self._read(record.game_id, record.version + 1, record.head_hash):
            _fold_stored(record, item)
        self.cache.account(slot)

    def fold(self, slot: Slot, new: Sequence[NewEvent], result: AppendResult) -> None:
        """Fold an append as this process decided it (the store reported where it went)."""
        record, first = slot.record, result.first_version
        links = _links(result, len(new))
        for offset, (event, link) in enumerate(zip(new, links, strict=True)):
            record.apply(first + offset, event.event, event.metadata, link, first)
        self.cache.account(slot)

    async def _read(self, game_id: str, from_version: int, prev_hash: bytes) -> list[RecordedEvent]:
        """The game's events from `from_version` on, checked to continue the hash chain this
        process has verified so far."""
        try:
            return await self.store.read_stream(
                stream_id(game_id), from_version, prev_hash=prev_hash
            )
        except ChainBroken as broken:
            self.cache.discard(game_id)
            self.metrics.count("chain_broken")
            log.error("chain_broken", game_id=game_id, version=broken.version, error=str(broken))
            raise ApiError(
                500,
                "history_corrupt",
                f"the stored history of game {game_id} fails verification at version "
                f"{broken.version}; it is not served until an operator has looked at it",
            ) from None


@dataclass(slots=True)
class HeldGame:
    """A game's cached slot as one command holds it."""

    streams: GameStreams
    slot: Slot
    fresh: bool

    @property
    def record(self) -> GameRecord:
        return self.slot.record

    @property
    def lock(self) -> asyncio.Lock:
        return self.slot.lock

    async def refresh(self) -> None:
        await self.streams.catch_up(self.slot)

    async def appended(self, new: Sequence[NewEvent], result: AppendResult, read: bool) -> None:
        if read:
            await self.streams.catch_up(self.slot)
        else:
            self.streams.fold(self.slot, new, result)


def _links(result: AppendResult, count: int) -> Sequence[bytes]:
    """The chain links of an append's events (empty where the store did not report them)."""
    return result.hashes or (b"",) * count


def _append_of(item: RecordedEvent) -> object:
    """What the stored events of one append share (GameRecord.apply)."""
    return (item.recorded_at, item.metadata)


def _fold_stored(record: GameRecord, item: RecordedEvent) -> None:
    record.apply(
        item.version, item.data, item.metadata, item.hash, _append_of(item), item.recorded_at
    )
