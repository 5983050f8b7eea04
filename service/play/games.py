"""The games' commands, as the HTTP controllers, the tournaments and the referee call them.

Each method names a command (service/play/seating.py in the lobby, moves.py in play: who
may ask, what it causes) and runs it through the one command path (service/commands): the
game's record held from the cache, the idempotent replay, If-Match, the append at the
version decided on, the retries.
"""

from __future__ import annotations

import contextlib
import secrets
from collections.abc import Sequence
from datetime import datetime
from typing import Any

from domain.errors import RuleViolation
from domain.rules_versions import current
from domain.seed_chain import DEFAULT_HANDS
from domain.variants import decider_for
from events.schema.common import GameOptions
from events.schema.lobby import GameCreated, SeatClaimed
from events.store import EventStore
from service.commands.command import NothingToDo, Outcome
from service.commands.handler import Conflict, Handler, StaleVersion, key_reused
from service.commands.keys import Key, derived_token, key_digest
from service.commands.stream import load
from service.contract.problems import ApiError
from service.contract.receipts import Receipt, ReceiptKey, sign
from service.ops.logging import log
from service.ops.metrics import Metrics
from service.play import moves, rematch, seating
from service.play.cache import GameCache
from service.play.deals import alike_but_chain, first_chain
from service.play.loading import GameStreams, stream_id
from service.play.lobby import new_token, token_hash
from service.play.record import GameRecord
from service.play.turns import deadline


def bot_claims(seats: int, bots: Sequence[tuple[int, str, str | None]]) -> list[SeatClaimed]:
    """The seats of a new game's bots, refused as a claim would be: an unknown level (422
    `unknown_bot_level`), a seat out of range (422), a seat named twice (409 `seat_taken`)."""
    claims: list[SeatClaimed] = []
    for seat, level, name in bots:
        claim = seating.bot_claim(seat, level, name)
        if not 0 <= seat < seats:
            raise RuleViolation("invalid_seat", f"seats are 0..{seats - 1}")
        if any(other.seat == seat for other in claims):
            raise ApiError(409, "seat_taken", f"seat {seat} is given two bots")
        claims.append(claim)
    return claims


def _same_game(record: GameRecord, created: GameCreated, claims: list[SeatClaimed]) -> bool:
    """Whether a game made by an earlier attempt with the same key is the one asked for."""
    stored = [entry.event for entry in record.entries[1 : 1 + len(claims)]]
    return alike_but_chain(record.entries[0].event, created) and stored == claims


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
    ) -> None:
        self.store = store
        self.metrics = metrics
        self.cache = GameCache(cache_events, cache_finished)
        self.streams = GameStreams(store, metrics, self.cache)
        self.handler = Handler(store, metrics, retries)
        self.receipt_key = receipt_key or ReceiptKey.generate()
        self.seed_chain_hands = seed_chain_hands
        """L for a game without a fixed number of hands (and for each extension)."""

    seat_for = staticmethod(moves.seat_for)

    async def load(self, game_id: str) -> GameRecord:
        """The game's record, caught up with events other instances wrote."""
        return await load(self.streams, game_id)

    def receipt(self, record: GameRecord, version: int) -> Receipt:
        """The service's signed word on the game's chain hash at `version` (deterministic:
        a replayed answer carries the same receipt)."""
        return sign(self.receipt_key, record.game_id, version, record.link(version))

    # ---- the lobby -------------------------------------------------------------------

    async def opened(
        self,
        variant: str,
        seats: int,
        options: GameOptions,
        title: str,
        key: str | None = None,
        bots: Sequence[tuple[int, str, str | None]] = (),
    ) -> tuple[GameRecord, str, int]:
        """Open a game, with `bots` (seat, level, name or None) seated in the same write;
        returns its record, the creator's token and the version the opening write reached
        (a game whose every seat is a bot's is started in it). With a key, the game id, the
        event ids and the token derive from it, so a retry returns the same game."""
        initial = decider_for(variant).initial_state(seats, options)  # invalid_config if bad
        claims = bot_claims(seats, bots)
        if key is None:
            game_id, creator_token = secrets.token_hex(8), new_token()
        else:
            game_id = derived_token("game-id", key)[:16]
            creator_token = derived_token("creator-token", key)
        chain = first_chain(initial, self.seed_chain_hands)
        created = GameCreated(
            variant,
            seats,
            options,
            token_hash(creator_token),
            title,
            seed_anchor=chain.anchor,
            seed_hands=chain.hands,
            seed_secret=chain.secret,
            rules_version=current(variant),
        )
        events = [created, *claims]
        if len(claims) == seats:  # bots in every seat: ready to play (seating.ready)
            events = seating.seated(game_id, created, claims, self.seed_chain_hands)
        record, ours = await self.handler.create(self.streams, game_id, events, key=key)
        if not ours and (key is None or not _same_game(record, created, claims)):
            raise key_reused("game")
        return record, creator_token, len(events)

    async def create(
        self,
        variant: str,
        seats: int,
        options: GameOptions,
        title: str,
        key: str | None = None,
        bots: Sequence[tuple[int, str, str | None]] = (),
    ) -> tuple[GameRecord, str]:
        """`opened` without the version: the game's record and the creator's token."""
        record, token, _ = await self.opened(variant, seats, options, title, key, bots)
        return record, token

    async def open_table(
        self,
        game_id: str,
        created: GameCreated,
        seats: Sequence[tuple[str, str] | tuple[str, str, str]],
        seat_seed: str = "",
    ) -> GameRecord:
        """Create a tournament's table started and seated, in one append (seating.table).
        The event ids derive from the game id, which derives from the tournament, round and
        table: a retried or raced start finds the game made first and returns it (its seed
        chain may be another's draw) instead of making a second."""
        events = seating.table(game_id, created, seats, seat_seed, self.seed_chain_hands)
        base = f"{game_id}|open-table"
        record, _ = await self.handler.create(self.streams, game_id, events, id_base=base)
        first = record.entries[0].event
        place = (created.tournament, created.round, created.table)
        if (first.tournament, first.round, first.table) != place or not record.started:
            raise ApiError(
                500, "internal_error", f"game {game_id} is not table {place} as it should be"
            )
        return record

    async def claim(
        self, game_id: str, seat: int | None, name: str, key: str | None = None
    ) -> tuple[Outcome[GameRecord], int, str]:
        """Take a seat; returns the outcome, the seat and its token. With a key the token
        derives from it, so a retried claim whose answer was lost gets the same seat back."""
        stored_key = None if key is None else Key(key_digest(key), f"{seat}|{name}")
        command = seating.claim(game_id, seat, name, key, self.seed_chain_hands)
        outcome = await self.handler.run(self.streams, game_id, command, stored_key)
        claimed = outcome.record.entries[outcome.first_version - 1].event
        token = outcome.answer["token"] if key is None else seating.seat_token(game_id, key)
        return outcome, claimed.seat, token

    async def seat_bot(
        self, game_id: str, creator_token: str, seat: int, level: str, name: str | None
    ) -> Outcome[GameRecord]:
        """The creator seats a bot of `level` before the start (seating.seat_bot)."""
        command = seating.seat_bot(creator_token, seat, level, name or "", self.seed_chain_hands)
        return await self.handler.run(self.streams, game_id, command)

    async def rematch(self, game_id: str, token: str) -> GameRecord:
        """The finished game's rematch (service/play/rematch.py), made now or found made:
        the new game's record. Asked by a seat's holder with its token."""
        old = await self.load(game_id)
        rematch.check_may_rematch(old, token)
        new_id = old.rematch or rematch.rematch_id(game_id)
        if not old.rematch:
            events = rematch.opening(old, self.seed_chain_hands)
            base = f"{new_id}|rematch"
            record, _ = await self.handler.create(self.streams, new_id, events, id_base=base)
            if record.lobby.rematch_of != game_id:
                raise ApiError(500, "internal_error", f"game {new_id} is not {game_id}'s rematch")
            with contextlib.suppress(NothingToDo):  # another request linked it first
                await self.handler.run(self.streams, game_id, rematch.link(token, new_id))
            return record
        return await self.load(new_id)

    async def release(
        self, game_id: str, token: str, seat: int, key: str | None = None
    ) -> Outcome[GameRecord]:
        stored_key = None if key is None else Key(key, f"release:{seat}")
        return await self.handler.run(
            self.streams, game_id, seating.release(token, seat), stored_key
        )

    async def start(
        self, game_id: str, creator_token: str, key: str | None = None
    ) -> Outcome[GameRecord]:
        command = seating.start(creator_token, self.seed_chain_hands)
        stored_key = None if key is None else Key(key, "")
        return await self.handler.run(self.streams, game_id, command, stored_key)

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
    ) -> Outcome[GameRecord]:
        command = moves.act(token, action, self.seed_chain_hands)
        key = None if idempotency_key is None else Key(idempotency_key, request_hash)
        return await self.handler.run(self.streams, game_id, command, key, expected=if_match)

    async def set_seed(
        self, game_id: str, token: str, seat: int, seed: str, key: str | None = None
    ) -> Outcome[GameRecord]:
        stored_key = None if key is None else Key(key, seed)
        command = moves.set_seed(token, seat, seed)
        return await self.handler.run(self.streams, game_id, command, stored_key)

    async def resign(
        self,
        game_id: str,
        token: str | None,
        seat: int,
        reason: str = "resigned",
        key: str | None = None,
    ) -> Outcome[GameRecord]:
        stored_key = None if key is None else Key(key, f"resign:{seat}")
        command = moves.resign(token, seat, reason)
        return await self.handler.run(self.streams, game_id, command, stored_key)

    async def play_for(
        self,
        game_id: str,
        seat: int,
        reason: str,
        expected_version: int,
        turn_began: datetime,
        now: datetime,
    ) -> Outcome[GameRecord] | None:
        """Play the seat's turn for it (moves.play_for) if the game still stands at
        `expected_version` and the seat is due. None when nothing was played: the game
        moved, the seat acted or another instance played first (the expected version
        decides, so a timeout is played once; never retried). The event ids derive from
        (game, version, seat), so every instance that tries the same turn would store the
        same events."""
        command = moves.play_for(seat, reason, turn_began, now, self.seed_chain_hands)
        base = f"played-for|{game_id}|{expected_version}|{seat}"
        try:
            outcome = await self.handler.run(
                self.streams, game_id, command, expected=expected_version, id_base=base, once=True
            )
        except (NothingToDo, StaleVersion, Conflict):
            return None
        self.metrics.count_by("turns_played_for", "reason", reason)
        version = outcome.first_version
        log.info("turn_played_for", game_id=game_id, seat=seat, reason=reason, version=version)
        return outcome

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
