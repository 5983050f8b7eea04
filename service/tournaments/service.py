"""The tournaments' commands, as the HTTP controllers and the round keeper call them.

Each runs through the one command path (service/commands), as the games' do: every command
names the version it was decided against, a conflict reloads and decides again, and an
`Idempotency-Key` makes a retry return its first answer (its event ids and any secret token
derive from the key).

Starting a round creates the round's games before `round.started` is appended: each
table's game id derives from the tournament, round and table (domain/tournament/decide.py)
and its one append has derived event ids, so a retried or raced start makes every game
once, and the winner of the race alone appends `round.started`.
"""

from __future__ import annotations

import secrets
from collections.abc import Callable
from typing import Any

import msgspec

from domain.errors import RuleViolation
from domain.seed_chain import new_chain
from domain.tournament import decide as rules
from domain.tournament.state import Tournament
from events.schema.tournament import TableSeats
from events.store import EventStore
from service.commands.command import Actor, Command, Decision, NothingToDo, Outcome, anyone
from service.commands.handler import Conflict, Handler, key_reused
from service.commands.keys import Key, derived_token, key_digest
from service.contract.problems import ApiError
from service.ops.logging import log
from service.ops.metrics import Metrics
from service.play.deals import alike_but_chain
from service.play.games import GameService
from service.play.lobby import new_token, token_hash
from service.play.record import GameRecord
from service.tournaments.record import (
    PREFIX,
    Authorize,
    TournamentRecord,
    TournamentStreams,
    organiser,
    player,
)
from service.tournaments.tables import open_tables, table_result

Result = Outcome[TournamentRecord]


def ruling(command: Any) -> Callable[[TournamentRecord, Actor], Decision]:
    """What one of the tournament's rules (domain/tournament/decide.py) causes, as a
    command's `decide`."""
    return lambda record, actor: Decision(rules.decide(record.state, command))


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
        self.streams = TournamentStreams(store)
        self.handler = Handler(store, metrics, retries)
        self.admin_key = admin_key
        """FAIRWAY_ADMIN_KEY: when set, creating a tournament needs it."""

    async def load(self, tournament_id: str) -> TournamentRecord:
        return await self.streams.read(tournament_id)

    async def _run(
        self, tournament_id: str, authorize: Authorize, ruled: Any, key: Key | None = None
    ) -> Result:
        command = Command(authorize, ruling(ruled))
        return await self.handler.run(self.streams, tournament_id, command, key)

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
            tournament_id, token = secrets.token_hex(8), new_token()
        else:
            tournament_id = derived_token("game-id", "tournament", key)[:16]
            token = derived_token("organiser-token", key)
        # The seed chain over the rounds, committed before any player registers.
        chain = new_chain(secrets.token_bytes(32), 1, spec.rounds)
        spec = msgspec.structs.replace(
            spec,
            organiser_hash=token_hash(token),
            seed_anchor=chain.anchor,
            seed_secret=chain.secret,
        )
        (created,) = rules.decide(Tournament(), spec)
        record, ours = await self.handler.create(self.streams, tournament_id, [created], key=key)
        if not ours and (key is None or not alike_but_chain(record.state.config, created)):
            raise key_reused()
        return record, token

    async def register(
        self, tournament_id: str, token: str, name: str, key: str | None = None, bot: str = ""
    ) -> tuple[Result, str | None]:
        """Enter a player; returns the outcome and the player's token (derived from the
        key, with one, so that a retry whose answer was lost gets the same token). A bot
        player (`bot`: its level) has no token: the service's bot runner plays its seats."""
        player_token = (
            new_token() if key is None else derived_token("player-token", tournament_id, key)
        )
        stored_key = (
            None if key is None else Key(key_digest(key), f"{name}|bot:{bot}" if bot else name)
        )
        command = rules.Register(name, "" if bot else token_hash(player_token), bot)
        outcome = await self._run(tournament_id, organiser(token), command, stored_key)
        return outcome, None if bot else player_token

    async def withdraw(self, tournament_id: str, token: str, name: str) -> tuple[Result, list[str]]:
        """The player leaves: not seated again, and each of their games still in play
        gets `seat.resigned` (`withdrawn`) so the service plays their seat out. Returns the
        games resigned."""
        authorize = player(token, name, organiser_too=True)
        outcome = await self._run(tournament_id, authorize, rules.Withdraw(name))
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
    ) -> Result:
        stored_key = None if key is None else Key(key, seed)
        authorize = player(token, name, organiser_too=False)
        return await self._run(tournament_id, authorize, rules.SetSeed(name, seed), stored_key)

    async def start_round(self, tournament_id: str, token: str, key: str | None = None) -> Result:
        """Seat the next round, create its games (started, seated, dealt), then append
        `round.started`. A start that lost a race to another reloads and is refused
        (`round_in_play`), or with the same key replays the first answer."""
        return await self._start(tournament_id, organiser(token), key)

    async def advance(self, tournament_id: str) -> bool:
        """Start the next round of a tournament whose rounds start by themselves
        (`auto_rounds`), once round 1 has been started and the last round has closed. Any
        instance may try, as for a start by the organiser: one start appends
        `round.started`. True when this call started it."""
        state = (await self.load(tournament_id)).state
        if not state.config.auto_rounds or state.ended or not state.rounds:
            return False
        if state.open_round is not None:
            return False
        try:
            await self._start(tournament_id, anyone("rounds"), None)
        except (RuleViolation, Conflict) as refused:  # started by another, or too few players
            log.info("round_not_started", tournament_id=tournament_id, error=str(refused))
            return False
        return True

    async def _start(self, tournament_id: str, authorize: Authorize, key: str | None) -> Result:
        async def decide(record: TournamentRecord, actor: Actor) -> Decision:
            (decided,) = rules.decide(record.state, rules.StartRound(tournament_id))
            return Decision([await open_tables(self.games, record, decided)])

        stored_key = None if key is None else Key(key, "")
        command = Command(authorize, decide)
        outcome = await self.handler.run(self.streams, tournament_id, command, stored_key)
        if not outcome.replayed:
            started = outcome.record.events[outcome.first_version - 1].data
            log.info("round_started", tournament_id=tournament_id, round=started.round)
        return outcome

    # ---- closing a round -------------------------------------------------------------

    async def close_round(self, tournament_id: str) -> bool:
        """Close the open round if every one of its games has ended (and with the last
        round, end the tournament). Any instance may try: the expected version makes it
        happen once. True when this call closed it."""

        async def decide(record: TournamentRecord, actor: Actor) -> Decision:
            current = record.state.open_round
            if current is None:
                raise NothingToDo
            results = []
            for table in current.started.tables:
                game = await self.games.load(table.game_id)
                if not game.finished:
                    await self._resign_withdrawn_seats(record.state, table, game)
                    raise NothingToDo
                results.append(table_result(table, game))
            return Decision(rules.decide(record.state, rules.CloseRound(tuple(results))))

        try:
            outcome = await self.handler.run(
                self.streams, tournament_id, Command(anyone("rounds"), decide)
            )
        except (NothingToDo, Conflict):
            return False
        closed = outcome.record.events[outcome.first_version - 1].data
        log.info("round_closed", tournament_id=tournament_id, round=closed.round)
        return True

    async def _resign_withdrawn_seats(
        self, state: Tournament, table: TableSeats, game: GameRecord
    ) -> None:
        """A withdrawal whose resignations were lost (the process stopped between) is
        completed here: a withdrawn player's seat in a game in play is resigned."""
        for seat, name in enumerate(table.players):
            entered = state.player(name)
            withdrawn = entered is not None and entered.withdrawn
            if withdrawn and game.lobby.resigned_reason(seat) is None:
                await self.resign_withdrawn(state, name)

    async def tournament_ids(self) -> list[str]:
        """Every tournament whose stream exists (the round keeper checks them at startup)."""
        found, after = [], ""
        while page := await self.store.list_streams(PREFIX, after=after, limit=500):
            found += [info.stream_id.removeprefix(PREFIX) for info in page]
            after = page[-1].stream_id
        return found
