"""A round's tables: their games opened (started, seated, dealt) before the round is
recorded as started, and read back as results when the round closes."""

from __future__ import annotations

import secrets

import msgspec

from domain.rules_versions import current
from domain.seed_chain import new_chain
from domain.tournament.seeds import round_chain
from domain.variants import decider_for
from events.schema.common import GameEnded
from events.schema.lobby import GameCreated
from events.schema.tournament import RoundStarted, TableResult, TableSeats
from service.ops.logging import log
from service.play.deals import chain_length
from service.play.games import GameService
from service.play.record import GameRecord
from service.tournaments.record import TournamentRecord


async def open_tables(
    games: GameService, record: TournamentRecord, started: RoundStarted
) -> RoundStarted:
    """Create every table's game; the round as the games stored say it (a game that an
    interrupted start made before keeps its seating). Each table's game id derives from
    the tournament, round and table (domain/tournament/decide.py), so a retried or raced
    start makes every game once."""
    state, config = record.state, record.state.config
    entered = {p.name: (p.name, p.token_hash, p.bot) for p in state.players}
    peers = tuple(t.game_id for t in started.tables) if config.duplicate else ()
    initial = decider_for(config.variant).initial_state(config.table_size, config.options)
    hands = chain_length(initial, games.seed_chain_hands)
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
            rules_version=current(config.variant),
        )
        seats = [entered[name] for name in table.players]  # a bot player's seat: a bot seat
        game = await games.open_table(table.game_id, created, seats, started.seat_seed)
        names = tuple(name or "" for name in game.lobby.names)
        tables.append(TableSeats(table.table, table.game_id, names))
    if all(t.players == d.players for t, d in zip(tables, started.tables, strict=True)):
        return started
    seated = {name for t in tables for name in t.players}
    log.warning("round_seating_adopted", tournament_id=record.tournament_id)
    byes = tuple(sorted(set(state.active()) - seated))
    return msgspec.structs.replace(started, tables=tuple(tables), byes=byes)


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
