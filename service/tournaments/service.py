"""Tournaments over HTTP: load the tournament's stream, decide, append at the expected version.

Like the games' command path (service/play/games.py): every command names the version it was
decided against, a conflict reloads and decides again, and an `Idempotency-Key` makes a
retry return its first answer (its event ids and any secret token derive from the key).
A tournament's stream is short (its players and rounds, never the play), so each command
reads it whole.

Starting a round creates the round's games before `round.started` is appended: each
table's game id derives from the tournament, round and table (domain/tournament/decide.py)
and its one append has derived event ids, so a retried or raced start makes every game
once, and the winner of the race alone appends `round.started`.
"""

from __future__ import annotations

import secrets
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import msgspec

from domain.errors import RuleViolation
from domain.seed_chain import new_chain
from domain.tournament import decide as rules
from domain.tournament.seeds import round_chain
from domain.tournament.state import Tournament, evolve
from domain.variants import decider_for
from events.codec import GENESIS_HASH
from events.schema.common import GameEnded
from events.schema.lobby import GameCreated
from events.schema.tournament import (
    RoundStarted,
    TableResult,
    TableSeats,
    TournamentCreated,
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
from service.ops.logging import log
from service.ops.metrics import Metrics
from service.play.games import GameService, Key
from service.play.lobby import derived_token, key_digest, new_token, token_hash
from service.play.record import IDEMPOTENCY_KEY, IDEMPOTENCY_SCOPE, REQUEST_HASH, GameRecord, KeyUse

PREFIX = "tournament:"
_IDS = uuid.UUID("0b6f6d7e-3c0a-4f55-9a63-5d1e2f7c4b90")


def stream_id(tournament_id: str) -> str:
    return f"{PREFIX}{tournament_id}"


@dataclass(slots=True)
class TournamentRecord:
    """A tournament's stream as read: the stored events and the state folded from them."""

    tournament_id: str
    state: Tournament = field(default_factory=Tournament)
    events: list[RecordedEvent] = field(default_factory=list)
    keys: dict[tuple[str, str], KeyUse] = field(default_factory=dict)

    @property
    def version(self) -> int:
        return len(self.events)

    def fold(self, item: RecordedEvent) -> None:
        self.state = evolve(self.state, item.data)
        self.events.append(item)
        key, scope = item.metadata.get(IDEMPOTENCY_KEY), item.metadata.get(IDEMPOTENCY_SCOPE)
        if isinstance(key, str) and isinstance(scope, str):
            used = self.keys.get((scope, key))
            first = used.first_version if used is not None else item.version
            request = str(item.metadata.get(REQUEST_HASH))
            self.keys[(scope, key)] = KeyUse(request, first, item.version)

    def is_organiser(self, token: str) -> bool:
        return secrets.compare_digest(self.state.config.organiser_hash, token_hash(token))

    def player_of(self, token: str) -> str | None:
        digest = token_hash(token)
        return next(
            (p.name for p in self.state.players if secrets.compare_digest(p.token_hash, digest)),
            None,
        )


@dataclass(frozen=True, slots=True)
class Outcome:
    record: TournamentRecord
    """The tournament after the command (for a replay: as it is now)."""
    first_version: int
    last_version: int
    replayed: bool = False


Authorize = Callable[[TournamentRecord], str]
"""Raises when the caller may not issue the command; else the scope of its keys."""


class TournamentService:
    def __init__(
        self,
        store: EventStore,
        games: GameService,
        metrics: Metrics,
        retries: int = 5,
        admin_key: str | None = None,
    ) -> None:
        self.store = store
        self.games = games
        self.metrics = metrics
        self.retries = retries
        self.admin_key = admin_key
        """FAIRWAY_ADMIN_KEY: when set, creating a tournament needs it."""

    # ---- loading ---------------------------------------------------------------------

    async def load(self, tournament_id: str) -> TournamentRecord:
        try:
            stored = await self.store.read_stream(stream_id(tournament_id), prev_hash=GENESIS_HASH)
        except ChainBroken as broken:
            log.error("chain_broken", tournament_id=tournament_id, version=broken.version)
            raise ApiError(
                500,
                "history_corrupt",
                f"the stored history of tournament {tournament_id} fails verification",
            ) from None
        if not stored or not isinstance(stored[0].data, TournamentCreated):
            raise ApiError(
                404, "tournament_not_found", f"no tournament has the id {tournament_id!r}"
            )
        record = TournamentRecord(tournament_id)
        for item in stored:
            record.fold(item)
        return record

    # ---- who asks --------------------------------------------------------------------

    @staticmethod
    def organiser(token: str) -> Authorize:
        def authorize(record: TournamentRecord) -> str:
            if record.is_organiser(token):
                return "organiser"
            if record.player_of(token) is not None:
                raise ApiError(403, "not_organiser", "only the organiser may do this")
            raise ApiError(401, "invalid_token", "the token is not valid for this tournament")

        return authorize

    @staticmethod
    def player(token: str, name: str, organiser_too: bool) -> Authorize:
        def authorize(record: TournamentRecord) -> str:
            if organiser_too and record.is_organiser(token):
                return "organiser"
            held = record.player_of(token)
            if held is None and not record.is_organiser(token):
                raise ApiError(401, "invalid_token", "the token is not valid for this tournament")
            if held != name:
                if organiser_too:
                    raise ApiError(403, "not_organiser", "only the organiser or the player may")
                raise ApiError(403, "not_this_player", f"the token is not {name!r}'s")
            return f"player:{name}"

        return authorize

    # ---- the one command path --------------------------------------------------------

    async def _run(
        self,
        tournament_id: str,
        authorize: Authorize,
        decide: Callable[[Tournament], tuple[Any, ...]],
        key: Key | None = None,
    ) -> Outcome:
        for _ in range(self.retries):
            record = await self.load(tournament_id)
            scope = authorize(record)
            if key is not None and (used := record.keys.get((scope, key.value))):
                if used.request_hash != key.request_hash:
                    raise ApiError(
                        422,
                        "idempotency_key_reused",
                        "this Idempotency-Key was used for another request",
                    )
                self.metrics.count("idempotent_replays")
                return Outcome(record, used.first_version, used.last_version, replayed=True)
            events = decide(record.state)
            try:
                first, last = await self._append(record, scope, events, key)
            except (ConcurrencyError, EventIdConflict):
                self.metrics.count("append_conflicts")
                continue
            self.metrics.count("commands")
            return Outcome(await self.load(tournament_id), first, last)
        raise ApiError(409, "conflict", "the tournament changed concurrently too often; retry")

    async def _append(
        self, record: TournamentRecord, scope: str, events: tuple[Any, ...], key: Key | None
    ) -> tuple[int, int]:
        metadata: dict[str, Any] = {}
        if key is None:
            ids = [uuid.uuid4() for _ in events]
        else:
            metadata = {
                IDEMPOTENCY_KEY: key.value,
                IDEMPOTENCY_SCOPE: scope,
                REQUEST_HASH: key.request_hash,
            }
            ids = [
                uuid.uuid5(_IDS, f"{record.tournament_id}|{scope}|{key.value}|{i}")
                for i in range(len(events))
            ]
        new = [
            NewEvent(event_id=i, event=e, metadata=metadata)
            for i, e in zip(ids, events, strict=True)
        ]
        result = await self.store.append(stream_id(record.tournament_id), record.version, new)
        return result.first_version, result.last_version

    # ---- the organiser's commands ----------------------------------------------------

    async def create(
        self, spec: rules.Create, admin: str | None, key: str | None = None
    ) -> tuple[TournamentRecord, str]:
        """Open a tournament; returns it and the organiser's token. `spec` carries
        everything but the organiser's hash and the seed chain, drawn here."""
        if self.admin_key is not None:
            if admin is None:
                raise ApiError(401, "token_required", "creating a tournament needs the admin key")
            if not secrets.compare_digest(admin.encode(), self.admin_key.encode()):
                raise ApiError(403, "not_admin", "that is not the admin key")
        if key is None:
            tournament_id, token, event_id = secrets.token_hex(8), new_token(), uuid.uuid4()
        else:
            tournament_id = derived_token("game-id", "tournament", key)[:16]
            token = derived_token("organiser-token", key)
            event_id = uuid.uuid5(_IDS, f"create|{key_digest(key)}")
        # The seed chain over the rounds, committed before any player registers.
        chain = new_chain(secrets.token_bytes(32), 1, spec.rounds)
        spec = msgspec.structs.replace(
            spec,
            organiser_hash=token_hash(token),
            seed_anchor=chain.anchor,
            seed_secret=chain.secret,
        )
        (created,) = rules.decide(Tournament(), spec)
        try:
            await self.store.append(
                stream_id(tournament_id), 0, [NewEvent(event_id=event_id, event=created)]
            )
        except (EventIdConflict, ConcurrencyError):
            if key is not None:
                record = await self.load(tournament_id)
                blank = dict.fromkeys(("seed_anchor", "seed_secret"), "")
                stored = record.state.config
                if msgspec.structs.replace(stored, **blank) == msgspec.structs.replace(
                    created, **blank
                ):
                    return record, token
            raise ApiError(
                422, "idempotency_key_reused", "this Idempotency-Key was used for another request"
            ) from None
        return await self.load(tournament_id), token

    async def register(
        self, tournament_id: str, token: str, name: str, key: str | None = None
    ) -> tuple[Outcome, str]:
        """Enter a player; returns the outcome and the player's token (derived from the
        key, with one, so that a retry whose answer was lost gets the same token)."""
        player_token = (
            new_token() if key is None else derived_token("player-token", tournament_id, key)
        )
        stored_key = None if key is None else Key(key_digest(key), name)
        command = rules.Register(name, token_hash(player_token))
        outcome = await self._run(
            tournament_id,
            self.organiser(token),
            lambda state: rules.decide(state, command),
            stored_key,
        )
        return outcome, player_token

    async def withdraw(
        self, tournament_id: str, token: str, name: str
    ) -> tuple[Outcome, list[str]]:
        """The player leaves: not seated again, and each of their games still in play
        gets `seat.resigned` (`withdrawn`) so the service plays their seat out. Returns the
        games resigned."""
        outcome = await self._run(
            tournament_id,
            self.player(token, name, organiser_too=True),
            lambda state: rules.decide(state, rules.Withdraw(name)),
        )
        return outcome, await self.resign_withdrawn(outcome.record.state, name)

    async def resign_withdrawn(self, state: Tournament, name: str) -> list[str]:
        """Resign `name`'s seats in the open round's games still in play (those over, or
        already resigned, are left as they are)."""
        resigned = []
        for game_id, seat in state.tables_of(name):
            record = await self.games.load(game_id)
            if record.finished or record.lobby.resigned_reason(seat) is not None:
                continue
            try:
                await self.games.resign(game_id, None, seat, "withdrawn")
            except (ApiError, RuleViolation) as refused:  # it ended meanwhile
                log.info("withdrawn_seat_not_resigned", game_id=game_id, error=str(refused))
                continue
            resigned.append(game_id)
        return resigned

    async def set_seed(
        self, tournament_id: str, token: str, name: str, seed: str, key: str | None = None
    ) -> Outcome:
        stored_key = None if key is None else Key(key, seed)
        return await self._run(
            tournament_id,
            self.player(token, name, organiser_too=False),
            lambda state: rules.decide(state, rules.SetSeed(name, seed)),
            stored_key,
        )

    async def start_round(self, tournament_id: str, token: str, key: str | None = None) -> Outcome:
        """Seat the next round, create its games (started, seated, dealt), then append
        `round.started`. A start that lost a race to another reloads and is refused
        (`round_in_play`), or with the same key replays the first answer."""
        stored_key = None if key is None else Key(key, "")
        authorize = self.organiser(token)
        for _ in range(self.retries):
            record = await self.load(tournament_id)
            scope = authorize(record)
            if stored_key is not None and (used := record.keys.get((scope, stored_key.value))):
                return Outcome(record, used.first_version, used.last_version, replayed=True)
            (decided,) = rules.decide(record.state, rules.StartRound(tournament_id))
            started = await self._open_tables(record, decided)
            try:
                first, last = await self._append(record, scope, (started,), stored_key)
            except (ConcurrencyError, EventIdConflict):
                self.metrics.count("append_conflicts")
                continue
            log.info("round_started", tournament_id=tournament_id, round=started.round)
            return Outcome(await self.load(tournament_id), first, last)
        raise ApiError(409, "conflict", "the tournament changed concurrently too often; retry")

    async def _open_tables(self, record: TournamentRecord, started: RoundStarted) -> RoundStarted:
        """Create every table's game; the round as the games stored say it (a game that an
        interrupted start made before keeps its seating)."""
        state, config = record.state, record.state.config
        hashes = {p.name: p.token_hash for p in state.players}
        peers = tuple(t.game_id for t in started.tables) if config.duplicate else ()
        hands = chain_hands(config, self.games.seed_chain_hands)
        shared = None
        if config.duplicate:  # every table deals from one chain, derived from x_r
            shared = round_chain(state.chain().server_seed(started.round), hands)
        tables = []
        for table in started.tables:
            own = shared or new_chain(secrets.token_bytes(32), 1, hands)
            created = GameCreated(
                config.variant,
                config.table_size,
                config.options,
                config.organiser_hash,
                f"{config.name}: round {started.round}, table {table.table}",
                seed_anchor=own.anchor,
                seed_hands=own.hands,
                seed_secret=own.secret,
                tournament=record.tournament_id,
                round=started.round,
                table=table.table,
                peers=peers,
            )
            seats = [(name, hashes[name]) for name in table.players]
            game = await self.games.open_table(table.game_id, created, seats, started.seat_seed)
            names = tuple(name or "" for name in game.lobby.names)
            tables.append(TableSeats(table.table, table.game_id, names))
        if all(t.players == d.players for t, d in zip(tables, started.tables, strict=True)):
            return started
        seated = {name for t in tables for name in t.players}
        log.warning("round_seating_adopted", tournament_id=record.tournament_id)
        byes = tuple(sorted(set(state.active()) - seated))
        return msgspec.structs.replace(started, tables=tuple(tables), byes=byes)

    # ---- closing a round -------------------------------------------------------------

    async def close_round(self, tournament_id: str) -> bool:
        """Close the open round if every one of its games has ended (and with the last
        round, end the tournament). Any instance may try: the expected version makes it
        happen once. True when this call closed it."""
        for _ in range(self.retries):
            record = await self.load(tournament_id)
            current = record.state.open_round
            if current is None:
                return False
            results = []
            for table in current.started.tables:
                game = await self.games.load(table.game_id)
                if not game.finished:
                    await self._resign_withdrawn_seats(record.state, table, game)
                    return False
                results.append(table_result(table, game))
            events = rules.decide(record.state, rules.CloseRound(tuple(results)))
            try:
                await self._append(record, "rounds", events, None)
            except (ConcurrencyError, EventIdConflict):
                continue
            log.info("round_closed", tournament_id=tournament_id, round=current.number)
            return True
        return False

    async def _resign_withdrawn_seats(
        self, state: Tournament, table: TableSeats, game: GameRecord
    ) -> None:
        """A withdrawal whose resignations were lost (the process stopped between) is
        completed here: a withdrawn player's seat in a game in play is resigned."""
        for seat, name in enumerate(table.players):
            player = state.player(name)
            withdrawn = player is not None and player.withdrawn
            if withdrawn and game.lobby.resigned_reason(seat) is None:
                await self.resign_withdrawn(state, name)

    async def tournament_ids(self) -> list[str]:
        """Every tournament whose stream exists (the round keeper checks them at startup)."""
        found, after = [], ""
        while page := await self.store.list_streams(PREFIX, after=after, limit=500):
            found += [info.stream_id.removeprefix(PREFIX) for info in page]
            after = page[-1].stream_id
        return found


def table_result(table: TableSeats, game: GameRecord) -> TableResult:
    ended = game.entries[game.ended_at - 1].event
    assert isinstance(ended, GameEnded)
    resigned = tuple(
        seat for seat in range(game.lobby.seats) if game.lobby.resigned_reason(seat) is not None
    )
    return TableResult(
        table.table,
        table.game_id,
        table.players,
        ended.totals,
        len(game.hand_ended_at),
        ended.winners,
        resigned,
    )


def chain_hands(config: TournamentCreated, default: int) -> int:
    """The hands a table's seed chain covers: the variant's fixed number, else `default`."""
    initial = decider_for(config.variant).initial_state(config.table_size, config.options)
    fixed = getattr(initial, "hands", None)
    return fixed if isinstance(fixed, int) and fixed > 0 else default
