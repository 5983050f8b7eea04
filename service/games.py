"""Commands over HTTP, in one place: load the game, decide, append with the expected version.

Correctness never depends on this process: the cache is only a head start, every append
names the version it was decided against, and a conflict reloads and decides again.
"""

from __future__ import annotations

import asyncio
import secrets
import uuid
from collections import OrderedDict
from dataclasses import dataclass
from typing import Any

from domain.decider import Decider
from domain.errors import RuleViolation
from domain.variants import decider_for
from events.schema.common import Act, DealHand, GameOptions, GameStarted
from events.schema.lobby import GameCreated, SeatClaimed
from events.store import ConcurrencyError, EventIdConflict, EventStore, NewEvent
from service.lobby import new_token, token_hash
from service.metrics import Metrics
from service.problems import ApiError
from service.record import IDEMPOTENCY_KEY, REQUEST_HASH, GameRecord

_IDS = uuid.UUID("6f1c3a52-6a55-4d0b-9d0e-0a7f3b2c9e11")
_CACHE_SIZE = 5_000


@dataclass(frozen=True, slots=True)
class Outcome:
    """What an action appended: the record after it and the versions it wrote."""

    record: GameRecord
    first_version: int
    last_version: int
    seat: int


def stream_id(game_id: str) -> str:
    return f"game:{game_id}"


class GameService:
    def __init__(self, store: EventStore, metrics: Metrics, retries: int = 5) -> None:
        self.store = store
        self.metrics = metrics
        self.retries = retries
        self.cache: OrderedDict[str, GameRecord] = OrderedDict()
        self.locks: dict[str, asyncio.Lock] = {}

    # ---- loading ---------------------------------------------------------------------

    async def load(self, game_id: str, fresh: bool = True) -> GameRecord:
        """The game's record; `fresh` catches up with events other instances wrote."""
        record = self.cache.get(game_id)
        if record is None:
            stored = await self.store.read_stream(stream_id(game_id))
            if not stored or not isinstance(stored[0].data, GameCreated):
                raise ApiError(404, "game_not_found", f"no game has the id {game_id!r}")
            record = GameRecord.begin(game_id, stored[0].data)
            for item in stored[1:]:
                record.apply(item.version, item.data, item.metadata)
        elif fresh:
            for item in await self.store.read_stream(stream_id(game_id), record.version + 1):
                record.apply(item.version, item.data, item.metadata)
        self.cache[game_id] = record
        self.cache.move_to_end(game_id)
        if len(self.cache) > _CACHE_SIZE:
            evicted, _ = self.cache.popitem(last=False)
            self.locks.pop(evicted, None)
        return record

    async def _append(
        self,
        record: GameRecord,
        events: list[Any],
        metadata: dict[str, Any],
        ids: list[uuid.UUID],
        reread: bool = False,
    ) -> tuple[int, int]:
        """Append at the record's version and fold the events into the record.

        `reread`: fold what the store holds instead of what was decided here, because an
        idempotent retry returns the events stored the first time (a fresh deal's seed, say,
        differs from the one just drawn).
        """
        new = [
            NewEvent(event_id=i, event=e, metadata=metadata)
            for i, e in zip(ids, events, strict=True)
        ]
        result = await self.store.append(stream_id(record.game_id), record.version, new)
        if reread:
            await self.load(record.game_id)
        else:
            for offset, event in enumerate(events):
                record.apply(result.first_version + offset, event, metadata)
        return result.first_version, result.last_version

    # ---- the lobby -------------------------------------------------------------------

    async def create(
        self, variant: str, seats: int, options: GameOptions, title: str
    ) -> tuple[GameRecord, str]:
        decider = decider_for(variant)
        decider.initial_state(seats, options)  # raises invalid_config for a bad count/option
        creator_token = new_token()
        game_id = secrets.token_hex(8)
        created = GameCreated(variant, seats, options, token_hash(creator_token), title)
        await self.store.append(
            stream_id(game_id), 0, [NewEvent(event_id=uuid.uuid4(), event=created, metadata={})]
        )
        record = GameRecord.begin(game_id, created)
        self.cache[game_id] = record
        return record, creator_token

    async def claim(self, game_id: str, seat: int | None, name: str) -> tuple[GameRecord, int, str]:
        async with self._lock(game_id):
            for _ in range(self.retries):
                record = await self.load(game_id)
                if record.started:
                    raise ApiError(409, "game_already_started", "seats close when the game starts")
                free = record.lobby.free_seats()
                if seat is None:
                    if not free:
                        raise ApiError(409, "no_free_seat", "every seat has been claimed")
                    seat = free[0]
                elif not 0 <= seat < record.lobby.seats:
                    raise RuleViolation("invalid_seat", f"seats are 0..{record.lobby.seats - 1}")
                elif seat not in free:
                    raise ApiError(409, "seat_taken", f"seat {seat} has been claimed")
                token = new_token()
                event = SeatClaimed(seat, name, token_hash(token))
                try:
                    await self._append(record, [event], {"seat": seat}, [uuid.uuid4()])
                except ConcurrencyError:
                    continue
                return record, seat, token
        raise ApiError(409, "conflict", "the lobby changed concurrently too often; retry")

    async def start(self, game_id: str, creator_token: str) -> GameRecord:
        async with self._lock(game_id):
            for _ in range(self.retries):
                record = await self.load(game_id)
                if not record.lobby.is_creator(creator_token):
                    raise ApiError(403, "not_creator", "only the game's creator may start it")
                if record.started:
                    raise ApiError(409, "game_already_started", "the game has already started")
                if record.lobby.free_seats():
                    raise ApiError(
                        409, "seats_unclaimed", f"unclaimed seats: {record.lobby.free_seats()}"
                    )
                lobby = record.lobby
                started = GameStarted(lobby.variant, lobby.seats, lobby.options)
                decider = decider_for(lobby.variant)
                state = decider.initial_state(lobby.seats, lobby.options)
                events = [started, *self._deal(decider, state)]
                try:
                    await self._append(record, events, {}, [uuid.uuid4() for _ in events])
                except ConcurrencyError:
                    continue
                return record
        raise ApiError(409, "conflict", "the game changed concurrently too often; retry")

    # ---- play ------------------------------------------------------------------------

    async def act(
        self,
        game_id: str,
        token: str,
        action: Any,
        *,
        idempotency_key: str | None = None,
        request_hash: str = "",
        if_match: int | None = None,
    ) -> Outcome:
        """Decide `action` for the token's seat and append its events.

        The first attempt trusts this process's cached record; a refusal or a conflict on a
        cached record is never final: the record catches up with the store and the action is
        decided again, so a stale instance never rejects what the current game allows.
        """
        async with self._lock(game_id):
            fresh = idempotency_key is not None
            for _ in range(self.retries):
                record = await self.load(game_id, fresh=fresh)
                try:
                    prepared = self._prepare(
                        record, token, action, idempotency_key, request_hash, if_match
                    )
                except (ApiError, RuleViolation):
                    if fresh:
                        raise
                    fresh = True
                    continue
                if isinstance(prepared, Outcome):
                    self.metrics.count("idempotent_replays")
                    return prepared
                seat, events, metadata, ids = prepared
                try:
                    first, last = await self._append(
                        record, events, metadata, ids, reread=idempotency_key is not None
                    )
                except (ConcurrencyError, EventIdConflict):
                    self.metrics.count("append_conflicts")
                    fresh = True
                    continue
                self.metrics.count("actions")
                return Outcome(record, first, last, seat)
        raise ApiError(409, "conflict", "the game changed concurrently too often; retry")

    def _prepare(
        self,
        record: GameRecord,
        token: str,
        action: Any,
        idempotency_key: str | None,
        request_hash: str,
        if_match: int | None,
    ) -> Outcome | tuple[int, list[Any], dict[str, Any], list[uuid.UUID]]:
        """The events to append, or the earlier outcome of a retried request."""
        seat = self.seat_for(record, token)
        if idempotency_key is not None:
            used = record.keys.get((seat, idempotency_key))
            if used is not None:
                if used.request_hash != request_hash:
                    raise ApiError(
                        422,
                        "idempotency_key_reused",
                        "this Idempotency-Key was used for another request",
                    )
                return Outcome(record, used.first_version, used.last_version, seat)
        if if_match is not None and if_match != record.version:
            raise ApiError(
                409,
                "stale_version",
                f"If-Match {if_match} but the game is at version {record.version}",
            )
        decider, state = self._playing(record)
        self._check_action_type(decider, action)
        events = self._decide(decider, state, Act(seat, action))
        metadata: dict[str, Any] = {"seat": seat}
        if idempotency_key is None:
            return seat, events, metadata, [uuid.uuid4() for _ in events]
        metadata |= {IDEMPOTENCY_KEY: idempotency_key, REQUEST_HASH: request_hash}
        ids = [
            uuid.uuid5(_IDS, f"{record.game_id}|{seat}|{idempotency_key}|{i}")
            for i in range(len(events))
        ]
        return seat, events, metadata, ids

    def _decide(self, decider: Decider, state: Any, command: Act) -> list[Any]:
        """The action's events, followed by the next deal when they end a hand."""
        events = list(decider.decide(state, command))
        for event in events:
            state = decider.evolve(state, event)
        return events + self._deal(decider, state)

    @staticmethod
    def _deal(decider: Decider, state: Any) -> list[Any]:
        if decider.status(state).phase != "awaiting_deal":
            return []
        return list(decider.decide(state, DealHand(secrets.token_bytes(32).hex())))

    @staticmethod
    def seat_for(record: GameRecord, token: str) -> int:
        seat = record.lobby.seat_of(token)
        if seat is None:
            raise ApiError(401, "invalid_token", "the token does not hold a seat in this game")
        return seat

    @staticmethod
    def _playing(record: GameRecord) -> tuple[Decider, Any]:
        if record.decider is None:
            raise RuleViolation("game_not_started", "the game has not started yet")
        return record.decider, record.state

    @staticmethod
    def _check_action_type(decider: Decider, action: Any) -> None:
        allowed = getattr(decider.action_type, "__args__", (decider.action_type,))
        if not isinstance(action, allowed):
            raise RuleViolation(
                "unknown_action",
                f"{decider.name} has no action {type(action).__name__!r}",
            )

    def _lock(self, game_id: str) -> asyncio.Lock:
        lock = self.locks.get(game_id)
        if lock is None:
            lock = self.locks[game_id] = asyncio.Lock()
        return lock
