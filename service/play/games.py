"""Commands over HTTP: load the game, decide, append with the expected version.

Correctness never depends on this process: the cache is only a head start, every append
names the version it was decided against, and a conflict reloads and decides again. Each
command is two small functions (who is asking, and what it causes); `_run` holds what they
share: the game's lock, the idempotent replay, If-Match, the retries.
"""

from __future__ import annotations

import hashlib
import random
import secrets
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

import msgspec

from domain import clock
from domain.decider import Decider
from domain.errors import RuleViolation
from domain.seed_chain import DEFAULT_HANDS, new_chain
from domain.variants import decider_for
from events.codec import GENESIS_HASH
from events.schema.common import Act, DealHand, GameOptions, GameStarted
from events.schema.lobby import (
    GameCreated,
    SeatClaimed,
    SeatReleased,
    SeatResigned,
    SeatSeedSet,
    SeedChainExtended,
    TurnPlayedFor,
)
from events.store import (
    ChainBroken,
    ConcurrencyError,
    EventIdConflict,
    EventStore,
    NewEvent,
    RecordedEvent,
)
from service.contract.problems import ApiError
from service.contract.receipts import Receipt, ReceiptKey, sign
from service.ops.logging import log
from service.ops.metrics import Metrics
from service.play.cache import GameCache, Slot
from service.play.lobby import derived_token, key_digest, new_token, token_hash
from service.play.record import (
    ACTION,
    IDEMPOTENCY_KEY,
    IDEMPOTENCY_SCOPE,
    PLAYED_FOR,
    REQUEST_HASH,
    GameRecord,
    KeyUse,
)
from service.play.turns import deadline

_IDS = uuid.UUID("6f1c3a52-6a55-4d0b-9d0e-0a7f3b2c9e11")
SEEDS_PER_DEAL = 16
"""How often a seat may set its seed between two deals (only the last counts): enough for
any player, and a bound on how far one seat can grow a game's history."""


def stream_id(game_id: str) -> str:
    return f"game:{game_id}"


@dataclass(frozen=True, slots=True)
class Key:
    """An `Idempotency-Key` as a command stores it: `value` is what the events' metadata
    keeps (a digest where the key also derives a secret token), `request_hash` the body's."""

    value: str
    request_hash: str


@dataclass(frozen=True, slots=True)
class Actor:
    """Who a command acts for: the idempotency scope of its keys, and its seat if any."""

    scope: str
    seat: int | None = None


@dataclass(frozen=True, slots=True)
class Decision:
    events: list[Any]
    metadata: dict[str, Any] = field(default_factory=dict)
    answer: dict[str, Any] = field(default_factory=dict)
    """What the caller gets back beside the events (a new seat's token), never stored."""


@dataclass(frozen=True, slots=True)
class Command:
    authorize: Callable[[GameRecord], Actor]
    """Raises when the caller may not issue the command; looks at the lobby, not the play."""
    decide: Callable[[GameRecord, Actor], Decision]
    """What the command causes, or an ApiError / RuleViolation."""


@dataclass(frozen=True, slots=True)
class Outcome:
    """What a command appended (or, replayed, had appended): the record after it, the
    versions it wrote, and who acted."""

    record: GameRecord
    first_version: int
    last_version: int
    actor: Actor
    replayed: bool = False
    answer: dict[str, Any] = field(default_factory=dict)


class GameService:
    def __init__(
        self,
        store: EventStore,
        metrics: Metrics,
        retries: int = 5,
        cache_events: int = 400_000,
        cache_finished: int = 200,
        receipt_key: ReceiptKey | None = None,
        seed_chain_hands: int = DEFAULT_HANDS,
        retired_keys: tuple[str, ...] = (),
    ) -> None:
        self.store = store
        self.metrics = metrics
        self.retries = retries
        self.cache = GameCache(cache_events, cache_finished)
        self.receipt_key = receipt_key or ReceiptKey.generate()
        self.retired_keys = retired_keys
        """Public keys (base64url) of earlier receipt keys, served for old receipts."""
        self.seed_chain_hands = seed_chain_hands
        """L for a game without a fixed number of hands (and for each extension)."""

    def receipt(self, record: GameRecord, version: int) -> Receipt:
        """The service's signed word on the game's chain hash at `version` (deterministic:
        a replayed answer carries the same receipt)."""
        return sign(self.receipt_key, record.game_id, version, record.entries[version - 1].hash)

    # ---- loading ---------------------------------------------------------------------

    async def load(self, game_id: str) -> GameRecord:
        """The game's record, caught up with events other instances wrote."""
        slot = self.cache.get(game_id)
        if slot is None:
            slot = await self._admit(game_id)
        else:
            await self._catch_up(slot)
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
            await self._catch_up(slot)
        return slot

    async def _catch_up(self, slot: Slot) -> None:
        record = slot.record
        for item in await self._read(record.game_id, record.version + 1, record.head_hash):
            _fold_stored(record, item)
        self.cache.account(slot)

    async def _read(self, game_id: str, from_version: int, prev_hash: bytes) -> list[RecordedEvent]:
        """The game's events from `from_version` on, checked to continue the hash chain this
        process has verified so far. A broken chain is never served or extended: the game
        leaves the cache, the operator hears of it, the client gets a problem."""
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

    async def _slot(self, game_id: str) -> Slot:
        return self.cache.get(game_id) or await self._admit(game_id)

    # ---- the one command path --------------------------------------------------------

    async def _run(
        self, game_id: str, command: Command, key: Key | None = None, if_match: int | None = None
    ) -> Outcome:
        """Decide and append `command`. The first attempt trusts the cached record; a refusal
        or a conflict on it is never final: the record catches up with the store and the
        command is decided again, so a stale instance never refuses what the game allows."""
        slot = await self._slot(game_id)
        async with slot.lock:
            fresh = key is not None  # a retried request must see its first answer
            for _ in range(self.retries):
                if fresh:
                    await self._catch_up(slot)
                record = slot.record
                try:
                    actor = command.authorize(record)
                    if key is not None and (used := record.keys.get((actor.scope, key.value))):
                        return self._replay(record, actor, key, used)
                    _check_if_match(record, if_match)
                    decision = command.decide(record, actor)
                except (ApiError, RuleViolation):
                    if fresh:
                        raise
                    fresh = True
                    continue
                try:
                    first, last = await self._append(slot, actor, decision, key)
                except (ConcurrencyError, EventIdConflict):
                    self.metrics.count("append_conflicts")
                    fresh = True
                    continue
                self.metrics.count("commands")
                return Outcome(record, first, last, actor, answer=decision.answer)
        raise ApiError(409, "conflict", "the game changed concurrently too often; retry")

    def _replay(self, record: GameRecord, actor: Actor, key: Key, used: KeyUse) -> Outcome:
        if used.request_hash != key.request_hash:
            raise ApiError(
                422, "idempotency_key_reused", "this Idempotency-Key was used for another request"
            )
        self.metrics.count("idempotent_replays")
        return Outcome(record, used.first_version, used.last_version, actor, replayed=True)

    async def _append(
        self,
        slot: Slot,
        actor: Actor,
        decision: Decision,
        key: Key | None,
        id_base: str | None = None,
    ) -> tuple[int, int]:
        """Append at the record's version and fold the events in. With a key the event ids
        are derived from it, and what the store holds is folded instead of what was decided
        here: a retry that another instance stored first returns that instance's events.
        Without a key, `id_base` (if any) derives the ids instead of chance."""
        record, events = slot.record, decision.events
        metadata = dict(decision.metadata)
        if key is None and id_base is not None:
            ids = [uuid.uuid5(_IDS, f"{id_base}|{i}") for i in range(len(events))]
        elif key is None:
            ids = [uuid.uuid4() for _ in events]
        else:
            metadata |= {
                IDEMPOTENCY_KEY: key.value,
                IDEMPOTENCY_SCOPE: actor.scope,
                REQUEST_HASH: key.request_hash,
            }
            ids = [
                uuid.uuid5(_IDS, f"{record.game_id}|{actor.scope}|{key.value}|{i}")
                for i in range(len(events))
            ]
        new = [
            NewEvent(event_id=i, event=e, metadata=metadata)
            for i, e in zip(ids, events, strict=True)
        ]
        result = await self.store.append(stream_id(record.game_id), record.version, new)
        if key is not None:
            await self._catch_up(slot)
        else:
            hashes = result.hashes or (b"",) * len(events)
            for offset, (event, link) in enumerate(zip(events, hashes, strict=True)):
                record.apply(
                    result.first_version + offset, event, metadata, link, result.first_version
                )
            self.cache.account(slot)
        return result.first_version, result.last_version

    # ---- the lobby -------------------------------------------------------------------

    async def create(
        self, variant: str, seats: int, options: GameOptions, title: str, key: str | None = None
    ) -> tuple[GameRecord, str]:
        """Open a game; returns its record and the creator's token. With a key, the game id,
        the event id and the token derive from it, so a retry returns the same game."""
        initial = decider_for(variant).initial_state(seats, options)  # invalid_config if bad
        if key is None:
            game_id, creator_token, event_id = secrets.token_hex(8), new_token(), uuid.uuid4()
        else:
            game_id = derived_token("game-id", key)[:16]
            creator_token = derived_token("creator-token", key)
            event_id = uuid.uuid5(_IDS, f"create|{key_digest(key)}")
        # The seed chain of every hand, committed before any seat exists. A retried create
        # draws another secret: the stored event is then told from this one by it alone.
        fixed = getattr(initial, "hands", None)
        chain = new_chain(secrets.token_bytes(32), 1, fixed or self.seed_chain_hands)
        created = GameCreated(
            variant,
            seats,
            options,
            token_hash(creator_token),
            title,
            seed_anchor=chain.anchor,
            seed_hands=chain.hands,
            seed_secret=chain.secret,
        )
        try:
            result = await self.store.append(
                stream_id(game_id), 0, [NewEvent(event_id=event_id, event=created, metadata={})]
            )
        except (EventIdConflict, ConcurrencyError):
            if key is not None and (record := await self._created_as(game_id, created)):
                return record, creator_token
            raise ApiError(
                422, "idempotency_key_reused", "this Idempotency-Key was used for another game"
            ) from None
        record = GameRecord.begin(game_id, created, result.head_hash)
        return self.cache.admit(record).record, creator_token

    async def open_table(
        self,
        game_id: str,
        created: GameCreated,
        seats: Sequence[tuple[str, str]],
        seat_seed: str = "",
    ) -> GameRecord:
        """Create a tournament's table started and seated, in one append: `game.created`,
        each seat claimed for its player (`seats`: name and the hash of the player's token,
        so one player token acts in all their games), with a duplicate round each seat's
        seed (`seat_seed`), `game.started` and the first deal. The event ids derive from the
        game id, which derives from the tournament, round and table: a retried or raced
        start finds the game made first and returns it (its seed chain may be another's
        draw) instead of making a second."""
        events: list[Any] = [created]
        events += [SeatClaimed(seat, name, digest) for seat, (name, digest) in enumerate(seats)]
        if seat_seed:
            events += [SeatSeedSet(seat, seat_seed) for seat in range(len(seats))]
        events.append(GameStarted(created.variant, created.seats, created.options))
        folded = GameRecord.begin(game_id, created)
        for version, event in enumerate(events[1:], start=2):
            folded.apply(version, event, {})
        assert folded.decider is not None
        events += _deal(folded, folded.decider, folded.state, self.seed_chain_hands)
        new = [
            NewEvent(event_id=uuid.uuid5(_IDS, f"{game_id}|open-table|{i}"), event=event)
            for i, event in enumerate(events)
        ]
        try:
            await self.store.append(stream_id(game_id), 0, new)
        except (ConcurrencyError, EventIdConflict):
            self.metrics.count("append_conflicts")  # made before: the stored game counts
        record = await self.load(game_id)
        first = record.entries[0].event
        place = (created.tournament, created.round, created.table)
        if (first.tournament, first.round, first.table) != place or not record.started:
            raise ApiError(
                500, "internal_error", f"game {game_id} is not table {place} as it should be"
            )
        return record

    async def _created_as(self, game_id: str, created: GameCreated) -> GameRecord | None:
        """The game a retried create made first, if it was created with the same request
        (everything but the seed chain, which each attempt draws afresh)."""
        record = await self.load(game_id)
        stored = record.entries[0].event
        chain = ("seed_anchor", "seed_secret")
        if msgspec.structs.replace(stored, **dict.fromkeys(chain, "")) != msgspec.structs.replace(
            created, **dict.fromkeys(chain, "")
        ):
            return None
        return record

    async def claim(
        self, game_id: str, seat: int | None, name: str, key: str | None = None
    ) -> tuple[Outcome, int, str]:
        """Take a seat; returns the outcome, the seat and its token. With a key the token
        derives from it, so a retried claim whose answer was lost gets the same seat back."""
        stored_key = None if key is None else Key(key_digest(key), f"{seat}|{name}")

        def decide(record: GameRecord, actor: Actor) -> Decision:
            lobby = record.lobby
            if record.started:
                raise ApiError(409, "game_already_started", "seats close when the game starts")
            free = lobby.free_seats()
            chosen = seat
            if chosen is None:
                if not free:
                    raise ApiError(409, "no_free_seat", "every seat has been claimed")
                chosen = free[0]
            elif not 0 <= chosen < lobby.seats:
                raise RuleViolation("invalid_seat", f"seats are 0..{lobby.seats - 1}")
            elif chosen not in free:
                raise ApiError(409, "seat_taken", f"seat {chosen} has been claimed")
            token = new_token() if key is None else derived_token("seat-token", game_id, key)
            event = SeatClaimed(chosen, name, token_hash(token))
            return Decision([event], {"seat": chosen}, {"token": token})

        outcome = await self._run(game_id, Command(_anyone("claim"), decide), stored_key)
        claimed = outcome.record.entries[outcome.first_version - 1].event
        if key is not None and outcome.replayed:
            return outcome, claimed.seat, derived_token("seat-token", game_id, key)
        return outcome, claimed.seat, outcome.answer["token"]

    async def release(self, game_id: str, token: str, seat: int) -> Outcome:
        """Free a claimed seat before the game starts: the creator may free any seat, a
        seat's holder their own. The seat's token stops holding it."""

        def authorize(record: GameRecord) -> Actor:
            if record.lobby.is_creator(token) or record.lobby.seat_of(token) == seat:
                return Actor("release")
            raise ApiError(403, "not_creator", "only the creator or the seat's holder may free it")

        def decide(record: GameRecord, actor: Actor) -> Decision:
            if record.started:
                raise ApiError(409, "game_already_started", "seats close when the game starts")
            if not 0 <= seat < record.lobby.seats:
                raise RuleViolation("invalid_seat", f"seats are 0..{record.lobby.seats - 1}")
            if seat in record.lobby.free_seats():
                raise ApiError(409, "seat_free", f"seat {seat} is not claimed")
            return Decision([SeatReleased(seat)], {"seat": seat})

        return await self._run(game_id, Command(authorize, decide))

    async def start(self, game_id: str, creator_token: str, key: str | None = None) -> Outcome:
        def authorize(record: GameRecord) -> Actor:
            if not record.lobby.is_creator(creator_token):
                raise ApiError(403, "not_creator", "only the game's creator may start it")
            return Actor("start")

        def decide(record: GameRecord, actor: Actor) -> Decision:
            lobby = record.lobby
            if record.started:
                raise ApiError(409, "game_already_started", "the game has already started")
            if lobby.free_seats():
                raise ApiError(409, "seats_unclaimed", f"unclaimed seats: {lobby.free_seats()}")
            decider = decider_for(lobby.variant)
            state = decider.initial_state(lobby.seats, lobby.options)
            started = GameStarted(lobby.variant, lobby.seats, lobby.options)
            return Decision([started, *_deal(record, decider, state, self.seed_chain_hands)])

        stored_key = None if key is None else Key(key, "")
        return await self._run(game_id, Command(authorize, decide), stored_key)

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
        """Decide `action` for the token's seat and append its events (and the next deal
        when they end a hand)."""

        def authorize(record: GameRecord) -> Actor:
            seat = self.seat_for(record, token)
            return Actor(f"seat:{seat}", seat)

        def decide(record: GameRecord, actor: Actor) -> Decision:
            assert actor.seat is not None
            _check_not_resigned(record, actor.seat)
            decider, state = _playing(record)
            _check_action_type(decider, action)
            events = list(decider.decide(state, Act(actor.seat, action)))
            for event in events:
                state = decider.evolve(state, event)
            metadata = {"seat": actor.seat, ACTION: msgspec.to_builtins(action)}
            return Decision(events + _deal(record, decider, state, self.seed_chain_hands), metadata)

        key = None if idempotency_key is None else Key(idempotency_key, request_hash)
        return await self._run(game_id, Command(authorize, decide), key, if_match)

    async def set_seed(
        self, game_id: str, token: str, seat: int, seed: str, key: str | None = None
    ) -> Outcome:
        """Record the seat's seed for the hands dealt from now on (in the lobby or in play):
        the seat's holder alone may set it."""

        def authorize(record: GameRecord) -> Actor:
            held = self.seat_for(record, token)
            if held != seat:
                raise ApiError(403, "not_your_seat", f"the token holds seat {held}, not {seat}")
            return Actor(f"seed:{seat}", seat)

        def decide(record: GameRecord, actor: Actor) -> Decision:
            status = record.status()
            if status is not None and status.phase == "game_over":
                raise RuleViolation("game_over", "the game is over: no hand is dealt again")
            if record.lobby.peers:
                raise ApiError(
                    409,
                    "duplicate_deals",
                    "every table of this duplicate round deals the same cards: the seat "
                    "seeds come from the tournament's players (PUT /tournaments/{id}/"
                    "players/{name}/seed)",
                )
            if record.seeds_since_deal.get(seat, 0) >= SEEDS_PER_DEAL:
                raise ApiError(
                    409,
                    "too_many_seeds",
                    f"seat {seat} has set its seed {SEEDS_PER_DEAL} times since the last deal; "
                    "the last one counts, set it again after the next deal",
                )
            return Decision([SeatSeedSet(seat, seed)], {"seat": seat})

        stored_key = None if key is None else Key(key, seed)
        return await self._run(game_id, Command(authorize, decide), stored_key)

    async def resign(
        self, game_id: str, token: str | None, seat: int, reason: str = "resigned"
    ) -> Outcome:
        """The seat leaves the game in play; the bot plays it out from now on. With a token,
        its holder resigns it (`resigned`); without, the service acts for a tournament whose
        player withdrew (`withdrawn`): callers outside the service never reach that path."""

        def authorize(record: GameRecord) -> Actor:
            if token is not None:
                held = self.seat_for(record, token)
                if held != seat:
                    raise ApiError(403, "not_your_seat", f"the token holds seat {held}, not {seat}")
            return Actor(f"resign:{seat}", seat)

        def decide(record: GameRecord, actor: Actor) -> Decision:
            if not 0 <= seat < record.lobby.seats:
                raise RuleViolation("invalid_seat", f"seats are 0..{record.lobby.seats - 1}")
            _playing(record)
            status = record.status()
            if status is not None and status.phase == "game_over":
                raise RuleViolation("game_over", "the game is over")
            _check_not_resigned(record, seat)
            return Decision([SeatResigned(seat, reason)], {"resigned": seat})

        return await self._run(game_id, Command(authorize, decide))

    async def play_for(
        self,
        game_id: str,
        seat: int,
        reason: str,
        expected_version: int,
        turn_began: datetime,
        now: datetime,
    ) -> Outcome | None:
        """Play the seat's turn for it with the greedy bot (domain/clock.py), recorded as
        `turn.played_for`, if the game still stands at `expected_version` and the seat is
        due: its clock ran out at `now` (`timeout`, the turn having begun at `turn_began`),
        or it has resigned or withdrawn (`reason` as recorded; played at once). None when
        nothing was played.

        Never retried: if the game moved, the seat acted or another instance played first
        (the expected version decides, so a timeout is played once). The event ids and the
        bot's choices derive from (game, version, seat), so every instance that tries the
        same turn would store the same events."""
        slot = await self._slot(game_id)
        async with slot.lock:
            await self._catch_up(slot)
            record = slot.record
            if record.version != expected_version:
                return None
            decision = _played_for(record, seat, reason, turn_began, now, self.seed_chain_hands)
            if decision is None:
                return None
            actor = Actor(f"seat:{seat}", seat)
            base = f"played-for|{game_id}|{expected_version}|{seat}"
            try:
                first, last = await self._append(slot, actor, decision, None, base)
            except (ConcurrencyError, EventIdConflict):
                return None
        self.metrics.count_by("turns_played_for", "reason", reason)
        log.info("turn_played_for", game_id=game_id, seat=seat, reason=reason, version=first)
        return Outcome(record, first, last, actor)

    async def turn_deadlines(self, record: GameRecord) -> dict[int, datetime]:
        """When each seat to act now runs out of time, in a game with a turn clock: from
        the recorded time of the event that began its turn (service/play/turns.py), read from
        the store once when this process appended it. None for a seat the bot plays (it is
        played at once), nor once the game is over."""
        turns, seconds = record.turns, record.lobby.options.turn_seconds
        if turns is None or seconds is None or record.finished:
            return {}
        out: dict[int, datetime] = {}
        for seat, version in list(turns.since.items()):
            if record.lobby.resigned_reason(seat) is not None:
                continue
            began = record.turn_times.get(version)
            if began is None:
                rows = await self.store.read_stored(stream_id(record.game_id), version, 1)
                if not rows:
                    continue
                began = record.turn_times[version] = rows[0].recorded_at
            out[seat] = deadline(seconds, began)
        return out

    @staticmethod
    def seat_for(record: GameRecord, token: str) -> int:
        seat = record.lobby.seat_of(token)
        if seat is None:
            raise ApiError(401, "invalid_token", "the token does not hold a seat in this game")
        return seat


# ---- what the commands share ------------------------------------------------------------


def _append_of(item: RecordedEvent) -> object:
    """What the stored events of one append share (GameRecord.apply)."""
    return (item.recorded_at, item.metadata)


def _fold_stored(record: GameRecord, item: RecordedEvent) -> None:
    record.apply(
        item.version, item.data, item.metadata, item.hash, _append_of(item), item.recorded_at
    )


def _anyone(scope: str) -> Callable[[GameRecord], Actor]:
    return lambda record: Actor(scope)


def _check_not_resigned(record: GameRecord, seat: int) -> None:
    reason = record.lobby.resigned_reason(seat)
    if reason is not None:
        raise ApiError(
            409, "seat_resigned", f"seat {seat} has {reason}: the service plays it out now"
        )


def _played_for(
    record: GameRecord,
    seat: int,
    reason: str,
    turn_began: datetime,
    now: datetime,
    chain_hands: int,
) -> Decision | None:
    """What playing for `seat` appends, or None when it is not due: the game is not in
    play, the seat has nothing to do, its clock has not run out, or `reason` is not why
    the bot plays it."""
    decider, state = record.decider, record.state
    if decider is None or record.finished or seat not in decider.status(state).to_act:
        return None
    resigned = record.lobby.resigned_reason(seat)
    if reason == "timeout":
        turn_seconds = record.lobby.options.turn_seconds
        if resigned is not None or not clock.due(turn_seconds, turn_began, now):
            return None
    elif resigned is None or resigned != reason:
        return None
    seed = hashlib.sha256(f"{record.game_id}|{record.version}|{seat}".encode()).digest()
    action = clock.play_for(decider, state, seat, random.Random(seed))
    events: list[Any] = [TurnPlayedFor(seat, reason)]
    for event in decider.decide(state, Act(seat, action)):
        state = decider.evolve(state, event)
        events.append(event)
    metadata = {"seat": seat, ACTION: msgspec.to_builtins(action), PLAYED_FOR: reason}
    return Decision(events + _deal(record, decider, state, chain_hands), metadata)


def _check_if_match(record: GameRecord, if_match: int | None) -> None:
    if if_match is not None and if_match != record.version:
        raise ApiError(
            409, "stale_version", f"If-Match {if_match} but the game is at version {record.version}"
        )


def _deal(record: GameRecord, decider: Decider, state: Any, chain_hands: int) -> list[Any]:
    """The next hand's deal when one is due, from its link of the seed chain and the seats'
    seeds. A game created before seed chains keeps the v1 deal (a fresh secret seed).

    The deal of a chain's last hand, in a game that may go on (no fixed number of hands),
    commits the next chain in the same write: seats' seeds set after it count for its
    hands, those set before do not (docs/SHUFFLE.md, "A game that outlasts its chain")."""
    status = decider.status(state)
    if status.phase != "awaiting_deal":
        return []
    if not record.chains:
        return list(decider.decide(state, DealHand(secrets.token_bytes(32).hex())))
    hand = status.hand + 1
    chain = record.chain_for(hand)
    if chain is None:  # only if an extension was lost: never dealt outside a chain
        raise ApiError(500, "internal_error", f"no seed chain covers hand {hand}")
    command = DealHand(
        server_seed=chain.server_seed(hand).hex(), seat_seeds=record.lobby.deal_seeds()
    )
    events = list(decider.decide(state, command))
    if hand == chain.last_hand and getattr(state, "hands", None) is None:
        following = new_chain(secrets.token_bytes(32), hand + 1, chain_hands)
        events.append(
            SeedChainExtended(
                following.first_hand, following.hands, following.anchor, following.secret
            )
        )
    return events


def _playing(record: GameRecord) -> tuple[Decider, Any]:
    if record.decider is None:
        raise RuleViolation("game_not_started", "the game has not started yet")
    return record.decider, record.state


def _check_action_type(decider: Decider, action: Any) -> None:
    allowed = getattr(decider.action_type, "__args__", (decider.action_type,))
    if not isinstance(action, allowed):
        raise RuleViolation(
            "unknown_action", f"{decider.name} has no action {type(action).__name__!r}"
        )
