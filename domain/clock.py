"""The turn clock, and the move the service makes for a seat that cannot or will not act.

Pure: the time is an argument (the domain never reads a clock) and so is the source of the
bot's choices, so every instance of the service that asks makes the same move. The move is
the greedy bot's, chosen on the seat's own view among the seat's legal actions: playing for
a seat never uses a card the seat could not see (docs/TOURNAMENTS.md, "Turn clocks and
resigning").
"""

from __future__ import annotations

from typing import Any, Protocol, Self

from domain.bots.base import Chooser
from domain.decider import Decider
from domain.errors import RuleViolation
from domain.variants import bot


class Elapsed(Protocol):
    """A span of time (a `timedelta`)."""

    def total_seconds(self) -> float: ...


class Instant(Protocol):
    """A moment (an aware `datetime`): the domain subtracts two, and never asks for one."""

    def __sub__(self, other: Self, /) -> Elapsed: ...


def due(turn_seconds: int | None, turn_began: Instant, now: Instant) -> bool:
    """Whether the seat's time is up at `now`, its turn having begun at `turn_began`
    (never, without a clock)."""
    return turn_seconds is not None and (now - turn_began).total_seconds() >= turn_seconds


def play_for(decider: Decider, state: Any, seat: int, rng: Chooser) -> Any:
    """The concrete action the greedy bot takes for `seat` now: chosen on the seat's view
    alone, among its legal actions, an option made concrete by `pick`. Refused with
    `not_your_turn` when the seat has nothing to do."""
    legal = decider.legal_actions(state, seat)
    if not legal:
        raise RuleViolation("not_your_turn", f"seat {seat} has nothing to do now")
    choice = bot("greedy", decider.name).choose(decider.view(state, seat), legal, rng)
    return decider.pick(choice, rng)
