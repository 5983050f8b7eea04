"""A bot seat's move: the command the bot runner runs for it.

It is decided on the game's record caught up with the store, from what the seat may know
only: the seat's own view and its legal actions go to the bot (`domain.variants.bot`), which
never sees the state, and `Decider.pick` makes its choice concrete, as in domain/simulate.py.
The choices derive from (game, version, seat), so every instance that decides the same turn
decides the same move; appended at the version decided on and never retried, of several
instances trying it one appends (a conflict means another played it). The move is the seat's
own turn: its metadata names the seat and the action as for any seat, and the bot's level.

The move's answer (never stored) carries how long the bot took to choose it, for the
runner's metrics. A strong bot's choice may take tens of milliseconds (Basketball's exact
endgame: about 3 ms median, 50 to 75 ms p99 a decision, docs/BENCHMARKS.md), so it is made in
a worker thread while the move holds its game's lock: the event loop goes on serving every
other request meanwhile, where an inline choice would stall them all for as long. The other
levels choose in well under a millisecond, less than the thread's hop costs, and choose
inline.
"""

from __future__ import annotations

import asyncio
import dataclasses
import hashlib
import random
import time
from collections.abc import Awaitable

from domain.variants import bot
from service.commands.command import Actor, Command, Decision, NothingToDo
from service.play.moves import played
from service.play.record import GameRecord

BOT = "bot"
"""On the events of a bot seat's move: the level of the bot that chose it."""
OFF_LOOP = frozenset({"strong"})
"""The levels whose choice is made in a worker thread, off the event loop."""
THINKING = "thinking"
"""In a bot move's answer (never stored): the seconds the bot took to choose it."""


def bot_move(game_id: str, seat: int, level: str, chain_hands: int) -> Command[GameRecord]:
    """The move of the bot of `level` holding `seat`, when the seat is to act. Nothing to do
    when the game is not in play, a bot of that level does not hold the seat, the seat has
    resigned (a withdrawn bot player's seat: the referee plays it out, as any resigned
    seat), or the seat has nothing to do now."""

    def decide(record: GameRecord, actor: Actor) -> Decision | Awaitable[Decision]:
        decider, state = record.decider, record.state
        if decider is None or record.finished or record.lobby.bot_at(seat) != level:
            raise NothingToDo
        if record.lobby.resigned_reason(seat) is not None:
            raise NothingToDo
        if seat not in decider.status(state).to_act:
            raise NothingToDo
        legal = decider.legal_actions(state, seat)
        if not legal:
            raise NothingToDo
        view = decider.view(state, seat)
        rng = random.Random(chance(game_id, record.version, seat))
        player = bot(level, decider.name)

        def choose() -> tuple[object, float]:
            started = time.perf_counter()
            return player.choose(view, legal, rng), time.perf_counter() - started

        def move(chosen: tuple[object, float]) -> Decision:
            choice, seconds = chosen
            action = decider.pick(choice, rng)
            decision = played(record, decider, state, seat, action, [], {BOT: level}, chain_hands)
            return dataclasses.replace(decision, answer={**decision.answer, THINKING: seconds})

        if level not in OFF_LOOP:
            return move(choose())

        async def off_loop() -> Decision:
            return move(await asyncio.to_thread(choose))

        return off_loop()

    return Command(lambda record: Actor(f"seat:{seat}", seat), decide)


def chance(game_id: str, version: int, seat: int) -> bytes:
    """The seed of the bot's choices for the seat's turn at `version`."""
    return hashlib.sha256(f"bot|{game_id}|{version}|{seat}".encode()).digest()
