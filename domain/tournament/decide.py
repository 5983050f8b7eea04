"""The organiser's and the players' commands, decided against the tournament's state. Pure.

A command gives the events it causes or raises RuleViolation with a stable code; nothing
here reads a clock or draws randomness: the service passes tokens' hashes and the seed
chain in, and the round's randomness comes from the chain committed at creation.

Registration closes when round 1 starts: every player then has the same rounds to play
(byes aside), so totals compare (docs/TOURNAMENTS.md, "Organising a tournament").
"""

from __future__ import annotations

import hashlib
from typing import Any

import msgspec

from domain.errors import RuleViolation
from domain.tournament.seating import SEATINGS, seat_round
from domain.tournament.seeds import round_seat_seed
from domain.tournament.standings import round_mean
from domain.tournament.state import Tournament
from domain.variants import BOT_KINDS, decider_for
from events.schema.common import GameOptions
from events.schema.tournament import (
    PlayerRegistered,
    PlayerSeedSet,
    PlayerWithdrawn,
    RoundClosed,
    RoundStarted,
    TableResult,
    TableSeats,
    TournamentCreated,
    TournamentEnded,
)

MAX_ROUNDS = 50
SCORINGS = ("total", "matchpoints")
GAME_ID_TAG = b"fairway/tournament/table-game-id/v1"


class Create(msgspec.Struct, frozen=True):
    name: str
    variant: str
    options: GameOptions
    table_size: int
    rounds: int
    seating: str
    duplicate: bool
    organiser_hash: str
    seed_anchor: str
    seed_secret: str
    scoring: str = "total"
    auto_rounds: bool = False


class Register(msgspec.Struct, frozen=True):
    name: str
    token_hash: str
    """"" for a bot player: it has no token."""
    bot: str = ""
    """A bot player's level (domain.variants.BOT_KINDS); "" for a person."""


class Withdraw(msgspec.Struct, frozen=True):
    name: str


class SetSeed(msgspec.Struct, frozen=True):
    name: str
    seed: str


class StartRound(msgspec.Struct, frozen=True):
    tournament_id: str
    """Names the round's games: each table's game id derives from it (`table_game_id`)."""


class CloseRound(msgspec.Struct, frozen=True):
    results: tuple[TableResult, ...]
    """Every table of the open round, as its game ended."""


def table_game_id(tournament_id: str, round_number: int, table: int) -> str:
    """The id of a table's game: 16 hex digits of SHA-256 over the tournament, round and
    table, so that a retried or raced start finds the games it (or another) made."""
    message = b"\x00".join(
        [GAME_ID_TAG, tournament_id.encode(), str(round_number).encode(), str(table).encode()]
    )
    return hashlib.sha256(message).hexdigest()[:16]


def decide(state: Tournament, command: Any) -> tuple[Any, ...]:
    if isinstance(command, Create):
        return (_create(command),)
    if state.ended or (isinstance(command, StartRound) and state.next_round > state.config.rounds):
        raise RuleViolation("tournament_over", "the tournament has ended")
    if isinstance(command, Register):
        if state.rounds:
            raise RuleViolation("registration_closed", "registration closed when round 1 started")
        if command.bot and command.bot not in BOT_KINDS:
            levels = ", ".join(BOT_KINDS)
            raise RuleViolation(
                "unknown_bot_level", f"no bot plays at level {command.bot!r} (levels: {levels})"
            )
        if state.player(command.name) is not None:
            raise RuleViolation("name_taken", f"a player is already named {command.name!r}")
        return (PlayerRegistered(command.name, command.token_hash, command.bot),)
    if isinstance(command, Withdraw):
        _check_active(state, command.name)
        current = state.open_round
        return (PlayerWithdrawn(command.name, current.number if current else 0),)
    if isinstance(command, SetSeed):
        _check_active(state, command.name)
        return (PlayerSeedSet(command.name, command.seed),)
    if isinstance(command, StartRound):
        return (_start(state, command),)
    if isinstance(command, CloseRound):
        return _close(state, command)
    raise TypeError(f"not a tournament command: {type(command).__name__}")


def _create(command: Create) -> TournamentCreated:
    decider = decider_for(command.variant)  # invalid_config for an unknown variant
    decider.initial_state(command.table_size, command.options)  # invalid_config if not allowed
    if command.seating not in SEATINGS:
        raise RuleViolation("invalid_config", f"seating is one of {', '.join(SEATINGS)}")
    if not 1 <= command.rounds <= MAX_ROUNDS:
        raise RuleViolation("invalid_config", f"a tournament has 1..{MAX_ROUNDS} rounds")
    if command.scoring not in SCORINGS:
        raise RuleViolation("invalid_config", f"scoring is one of {', '.join(SCORINGS)}")
    if command.scoring == "matchpoints" and not command.duplicate:
        raise RuleViolation(
            "invalid_config",
            "scoring matchpoints compares the results of those who held the same cards: it "
            "needs duplicate deals (duplicate: true)",
        )
    return TournamentCreated(
        name=command.name,
        variant=command.variant,
        options=command.options,
        table_size=command.table_size,
        rounds=command.rounds,
        seating=command.seating,
        duplicate=command.duplicate,
        organiser_hash=command.organiser_hash,
        seed_anchor=command.seed_anchor,
        seed_secret=command.seed_secret,
        scoring=command.scoring,
        auto_rounds=command.auto_rounds,
    )


def _check_active(state: Tournament, name: str) -> None:
    player = state.player(name)
    if player is None:
        raise RuleViolation("unknown_player", f"no player is named {name!r}")
    if player.withdrawn:
        raise RuleViolation("player_withdrawn", f"{name!r} has withdrawn")


def _start(state: Tournament, command: StartRound) -> RoundStarted:
    current = state.open_round
    if current is not None:
        raise RuleViolation("round_in_play", f"round {current.number} is still in play")
    number = state.next_round
    seating = seat_round(state, state.chain().server_seed(number))
    tables = tuple(
        TableSeats(t, table_game_id(command.tournament_id, number, t), players)
        for t, players in enumerate(seating.tables, start=1)
    )
    if not state.config.duplicate:
        return RoundStarted(number, tables, seating.byes)
    seeds = tuple(
        (player.name, player.seed if player.seed is not None else player.name)
        for player in sorted(state.players, key=lambda p: p.name)
        if not player.withdrawn
    )
    return RoundStarted(number, tables, seating.byes, round_seat_seed(number, seeds), seeds)


def _close(state: Tournament, command: CloseRound) -> tuple[Any, ...]:
    current = state.open_round
    if current is None:
        raise RuleViolation("no_round_in_play", "no round is in play")
    expected = [(t.table, t.game_id, t.players) for t in current.started.tables]
    given = [(r.table, r.game_id, r.players) for r in command.results]
    if given != expected:
        raise ValueError("the results must be those of every table of the open round, in order")
    number = current.number
    totals = [total for result in command.results for total in result.totals]
    closed = RoundClosed(
        number,
        command.results,
        current.started.byes,
        round_mean(totals),
        state.chain().server_seed(number).hex(),
    )
    if number == state.config.rounds:
        return (closed, TournamentEnded(number))
    return (closed,)
