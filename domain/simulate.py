"""Whole games played in-process by bots: the simulator, the benchmarks and the tests use it.

Pure: the hand seeds derive from a master seed, the bots' choices from a caller's Chooser.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import msgspec

from domain.bots.base import Bot, Chooser
from domain.decider import Decider
from domain.shuffle import derive_seed
from events.schema.common import Act, DealHand, GameEnded, GameOptions, GameStarted, HandEnded


class GameRecord(msgspec.Struct, frozen=True):
    events: tuple[Any, ...]
    hands: int
    actions_per_hand: tuple[int, ...]
    turns_per_hand: tuple[int, ...]
    totals: tuple[int, ...]
    winners: tuple[int, ...]


def play_game(
    decider: Decider,
    players: int,
    bots: Sequence[Bot],
    master_seed: bytes,
    rng: Chooser,
    options: GameOptions | None = None,
) -> GameRecord:
    """Play one game to its end; `bots[seat]` acts for each seat."""
    options = options or GameOptions()
    events: list[Any] = [GameStarted(decider.name, players, options)]
    state = decider.initial_state(players, options)
    actions: list[int] = []
    turns: list[int] = []
    last_seat: int | None = None
    while True:
        status = decider.status(state)
        if status.phase == "game_over":
            break
        if status.phase == "awaiting_deal":
            command: Any = DealHand(derive_seed(master_seed, status.hand).hex())
            actions.append(0)
            turns.append(0)
            last_seat = None
        else:
            seat = status.to_act[rng.randrange(len(status.to_act))]
            legal = decider.legal_actions(state, seat)
            choice = bots[seat].choose(decider.view(state, seat), legal, rng)
            action = decider.pick(choice, rng)
            command = Act(seat, action)
            actions[-1] += 1
            if seat != last_seat and status.phase == "playing":
                turns[-1] += 1
            last_seat = seat
        for event in decider.decide(state, command):
            state = decider.evolve(state, event)
            events.append(event)
    ended = next(e for e in reversed(events) if isinstance(e, GameEnded))
    return GameRecord(
        events=tuple(events),
        hands=sum(isinstance(e, HandEnded) for e in events),
        actions_per_hand=tuple(actions),
        turns_per_hand=tuple(turns),
        totals=ended.totals,
        winners=ended.winners,
    )
