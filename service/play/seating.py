"""Commands in the lobby: claim a seat, seat a bot, release a seat, start the game; and a
tournament's table, opened seated and started in one write."""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from typing import Any

from domain.errors import RuleViolation
from domain.variants import BOT_KINDS, decider_for
from events.schema.common import GameStarted
from events.schema.lobby import GameCreated, SeatClaimed, SeatReleased, SeatSeedSet
from service.commands.command import Actor, Command, Decision, anyone
from service.commands.keys import derived_token
from service.contract.problems import ApiError
from service.play.deals import deal
from service.play.lobby import new_token, token_hash
from service.play.record import GameRecord


def claim(
    game_id: str, seat: int | None, name: str, key: str | None, chain_hands: int
) -> Command[GameRecord]:
    """Take `seat` (None: the first free one) as `name`. The answer holds the seat's token,
    derived from the key when there is one. The claim that fills a game with bot seats
    starts it (`ready`)."""

    def decide(record: GameRecord, actor: Actor) -> Decision:
        lobby = record.lobby
        _check_lobby_open(record)
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
        token = new_token() if key is None else seat_token(game_id, key)
        event = SeatClaimed(chosen, name, token_hash(token))
        events = [event, *ready(record, event, chain_hands)]
        return Decision(events, {"seat": chosen}, {"token": token})

    return Command(anyone("claim"), decide)


def seat_bot(
    creator_token: str, seat: int, level: str, name: str, chain_hands: int
) -> Command[GameRecord]:
    """The creator seats a bot of `level` in the free `seat` before the start. Its claim has
    no token hash: no client ever acts for it (the bot runner does, service/bots). Filling
    the last free seat starts the game (`ready`)."""

    def authorize(record: GameRecord) -> Actor:
        if not record.lobby.is_creator(creator_token):
            raise ApiError(403, "not_creator", "only the game's creator may seat a bot")
        return Actor("bot")

    def decide(record: GameRecord, actor: Actor) -> Decision:
        claim = bot_claim(seat, level, name)
        _check_lobby_open(record)
        if not 0 <= seat < record.lobby.seats:
            raise RuleViolation("invalid_seat", f"seats are 0..{record.lobby.seats - 1}")
        if seat not in record.lobby.free_seats():
            raise ApiError(409, "seat_taken", f"seat {seat} has been claimed")
        return Decision([claim, *ready(record, claim, chain_hands)], {"bot": level})

    return Command(authorize, decide)


def ready(record: GameRecord, claim: SeatClaimed, chain_hands: int) -> list[Any]:
    """What follows `claim` in its write: when it fills the last free seat of a game with
    bot seats, the start and the first deal (the bots are ready; a game of people only is
    started by its creator). Nothing otherwise."""
    lobby = record.lobby.claimed(claim)
    if lobby.free_seats() or not lobby.bot_seats():
        return []
    decider = decider_for(lobby.variant)
    state = decider.initial_state(lobby.seats, lobby.options)
    seated = dataclasses.replace(record, lobby=lobby)  # the deal's seat seeds name the claim
    started = GameStarted(lobby.variant, lobby.seats, lobby.options)
    return [started, *deal(seated, decider, state, chain_hands)]


def bot_claim(seat: int, level: str, name: str | None) -> SeatClaimed:
    """A bot's seat: refused with 422 `unknown_bot_level` for a level no bot plays."""
    if level not in BOT_KINDS:
        raise ApiError(
            422,
            "unknown_bot_level",
            f"no bot plays at level {level!r} (levels: {', '.join(BOT_KINDS)})",
        )
    return SeatClaimed(seat, name or default_bot_name(level, seat), "", bot=level)


def default_bot_name(level: str, seat: int) -> str:
    return f"{level} bot {seat}"


def seat_token(game_id: str, key: str) -> str:
    return derived_token("seat-token", game_id, key)


def release(token: str, seat: int) -> Command[GameRecord]:
    """Free a claimed seat before the game starts: the creator may free any seat, a seat's
    holder their own. The seat's token stops holding it."""

    def authorize(record: GameRecord) -> Actor:
        if record.lobby.is_creator(token) or record.lobby.seat_of(token) == seat:
            return Actor("release")
        raise ApiError(403, "not_creator", "only the creator or the seat's holder may free it")

    def decide(record: GameRecord, actor: Actor) -> Decision:
        _check_lobby_open(record)
        if not 0 <= seat < record.lobby.seats:
            raise RuleViolation("invalid_seat", f"seats are 0..{record.lobby.seats - 1}")
        if seat in record.lobby.free_seats():
            raise ApiError(409, "seat_free", f"seat {seat} is not claimed")
        return Decision([SeatReleased(seat)], {"seat": seat})

    return Command(authorize, decide)


def start(creator_token: str, chain_hands: int) -> Command[GameRecord]:
    """The creator starts the game once every seat is claimed: the first hand is dealt."""

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
        return Decision([started, *deal(record, decider, state, chain_hands)])

    return Command(authorize, decide)


def table(
    game_id: str,
    created: GameCreated,
    seats: Sequence[tuple[str, str] | tuple[str, str, str]],
    seat_seed: str,
    chain_hands: int,
) -> list[Any]:
    """A tournament's table, started and seated: `game.created`, each seat claimed for its
    player (`seats`: name and the hash of the player's token, so one player token acts in
    all their games; a bot player's seat adds its level, with an empty hash), with a
    duplicate round each seat's seed (`seat_seed`), `game.started` and the first deal."""
    claims = [SeatClaimed(seat, *player) for seat, player in enumerate(seats)]
    seeds = [SeatSeedSet(seat, seat_seed) for seat in range(len(seats))] if seat_seed else []
    return seated(game_id, created, [*claims, *seeds], chain_hands)


def seated(game_id: str, created: GameCreated, lobby: Sequence[Any], chain_hands: int) -> list[Any]:
    """A game opened, seated and started in one write: `game.created`, the `lobby` events
    that fill every seat, `game.started` and the first deal (a tournament's table, a
    rematch)."""
    events: list[Any] = [created, *lobby]
    events.append(GameStarted(created.variant, created.seats, created.options))
    folded = GameRecord.begin(game_id, created)
    for version, event in enumerate(events[1:], start=2):
        folded.apply(version, event, {})
    assert folded.decider is not None
    return events + deal(folded, folded.decider, folded.state, chain_hands)


def _check_lobby_open(record: GameRecord) -> None:
    if record.started:
        raise ApiError(409, "game_already_started", "seats close when the game starts")
