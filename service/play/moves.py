"""Commands in play: a seat acts, sets its seed, resigns; the service plays a seat's turn.

Each is who may ask (`authorize`) and what it causes (`decide`), as service/commands runs
them. A move played for a seat (its clock ran out, it resigned or withdrew) is the model of
any move the service decides for a seat: decided from the game as it stands, appended at
the version it was decided on, so that of several instances trying it one appends.
"""

from __future__ import annotations

import hashlib
import random
from datetime import datetime
from typing import Any

import msgspec

from domain import clock
from domain.decider import Decider
from domain.errors import RuleViolation
from events.schema.common import Act
from events.schema.lobby import SeatResigned, SeatSeedSet, TurnPlayedFor
from service.commands.command import Actor, Command, Decision, NothingToDo
from service.contract.problems import ApiError
from service.play.deals import deal
from service.play.record import ACTION, PLAYED_FOR, GameRecord

SEEDS_PER_DEAL = 16
"""How often a seat may set its seed between two deals (only the last counts): enough for
any player, and a bound on how far one seat can grow a game's history."""


def seat_for(record: GameRecord, token: str) -> int:
    seat = record.lobby.seat_of(token)
    if seat is None:
        raise ApiError(401, "invalid_token", "the token does not hold a seat in this game")
    return seat


def act(token: str, action: Any, chain_hands: int) -> Command[GameRecord]:
    """The token's seat plays `action`; the next deal follows when it ends a hand."""

    def authorize(record: GameRecord) -> Actor:
        seat = seat_for(record, token)
        return Actor(f"seat:{seat}", seat)

    def decide(record: GameRecord, actor: Actor) -> Decision:
        assert actor.seat is not None
        _check_not_resigned(record, actor.seat)
        decider, state = _playing(record)
        _check_action_type(decider, action)
        return played(record, decider, state, actor.seat, action, [], {}, chain_hands)

    return Command(authorize, decide)


def set_seed(token: str, seat: int, seed: str) -> Command[GameRecord]:
    """The seat's seed for the hands dealt from now on (in the lobby or in play): the seat's
    holder alone may set it."""

    def authorize(record: GameRecord) -> Actor:
        _check_holds(record, token, seat)
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

    return Command(authorize, decide)


def resign(token: str | None, seat: int, reason: str) -> Command[GameRecord]:
    """The seat leaves the game in play; the bot plays it out from now on. With a token,
    its holder resigns it; without, the service acts (for a tournament's player who
    withdrew): callers outside the service never reach that path."""

    def authorize(record: GameRecord) -> Actor:
        if token is not None:
            _check_holds(record, token, seat)
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

    return Command(authorize, decide)


def play_for(
    seat: int, reason: str, turn_began: datetime, now: datetime, chain_hands: int
) -> Command[GameRecord]:
    """The greedy bot's move for `seat` (domain/clock.py), recorded as `turn.played_for`,
    when it is due: its clock ran out at `now` (`timeout`, the turn having begun at
    `turn_began`), or it has resigned or withdrawn (`reason` as recorded). Nothing to do
    when the game is not in play, the seat has nothing to do, its clock has not run out, or
    `reason` is not why the bot plays it. The bot's choices derive from (game, version,
    seat): every instance that tries the same turn decides the same move."""

    def decide(record: GameRecord, actor: Actor) -> Decision:
        decider, state = record.decider, record.state
        if decider is None or record.finished or seat not in decider.status(state).to_act:
            raise NothingToDo
        resigned = record.lobby.resigned_reason(seat)
        if reason == "timeout":
            turn_seconds = record.lobby.options.turn_seconds
            if resigned is not None or not clock.due(turn_seconds, turn_began, now):
                raise NothingToDo
        elif resigned is None or resigned != reason:
            raise NothingToDo
        chance = hashlib.sha256(f"{record.game_id}|{record.version}|{seat}".encode()).digest()
        action = clock.play_for(decider, state, seat, random.Random(chance))
        opening, metadata = [TurnPlayedFor(seat, reason)], {PLAYED_FOR: reason}
        return played(record, decider, state, seat, action, opening, metadata, chain_hands)

    return Command(lambda record: Actor(f"seat:{seat}", seat), decide)


def played(
    record: GameRecord,
    decider: Decider,
    state: Any,
    seat: int,
    action: Any,
    opening: list[Any],
    metadata: dict[str, Any],
    chain_hands: int,
) -> Decision:
    """What the seat's `action` causes, after `opening`, with the next deal when it ends a
    hand; the metadata names the seat and the action as sent (an auditor decides it again)."""
    events = [*opening, *decider.decide(state, Act(seat, action))]
    for event in events[len(opening) :]:
        state = decider.evolve(state, event)
    stored = {"seat": seat, ACTION: msgspec.to_builtins(action), **metadata}
    return Decision(events + deal(record, decider, state, chain_hands), stored)


def _check_holds(record: GameRecord, token: str, seat: int) -> None:
    held = seat_for(record, token)
    if held != seat:
        raise ApiError(403, "not_your_seat", f"the token holds seat {held}, not {seat}")


def _check_not_resigned(record: GameRecord, seat: int) -> None:
    reason = record.lobby.resigned_reason(seat)
    if reason is not None:
        raise ApiError(
            409, "seat_resigned", f"seat {seat} has {reason}: the service plays it out now"
        )


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
