"""The five variants by name, and the one fold every reader of a game uses."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from domain.bots.base import Bot, RandomBot
from domain.decider import Decider
from domain.errors import RuleViolation
from domain.grid import BASKETBALL, GOLF, HANG_TEN, TENS, GreedyGridBot
from domain.grid.strong import StrongGridBot
from domain.shedding import TENS_SHEDDING, GreedySheddingBot
from domain.shedding.strong import StrongSheddingBot
from events.schema.common import GameStarted

DECIDERS: dict[str, Decider] = {
    d.name: d for d in (HANG_TEN, TENS, GOLF, BASKETBALL, TENS_SHEDDING)
}
BOT_KINDS = ("random", "greedy", "strong")


def decider_for(variant: str) -> Decider:
    try:
        return DECIDERS[variant]
    except KeyError:
        known = ", ".join(DECIDERS)
        raise RuleViolation(
            "invalid_config", f"unknown variant {variant!r} (known: {known})"
        ) from None


def high_wins(variant: str) -> bool:
    """Whether the highest total wins `variant` (Basketball); the Golf family's lowest wins."""
    decider = decider_for(variant)
    rules = getattr(decider, "rules", None)
    return bool(getattr(rules, "high_wins", False))


def bot(kind: str, variant: str) -> Bot:
    if kind == "random":
        return RandomBot()
    if kind == "greedy":
        return GreedySheddingBot() if variant == "tens-shedding" else GreedyGridBot()
    if kind == "strong":
        return StrongSheddingBot() if variant == "tens-shedding" else StrongGridBot()
    raise ValueError(f"unknown bot kind {kind!r} (known: {', '.join(BOT_KINDS)})")


def start(started: GameStarted) -> tuple[Decider, Any]:
    decider = decider_for(started.variant)
    return decider, decider.initial_state(started.players, started.options)


def fold(events: Iterable[Any]) -> tuple[Decider, Any]:
    """The state after a game's events; the first must be `GameStarted`."""
    stream = iter(events)
    first = next(stream, None)
    if not isinstance(first, GameStarted):
        raise ValueError("a game's events begin with game.started")
    decider, state = start(first)
    for event in stream:
        state = decider.evolve(state, event)
    return decider, state
