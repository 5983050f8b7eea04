"""What a bot is: it chooses among the legal actions, seeing only its seat's view."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Protocol


class Chooser(Protocol):
    """A source of choices the caller seeds (e.g. random.Random); the domain owns none."""

    def randrange(self, stop: int, /) -> int: ...


class Bot(Protocol):
    kind: str

    def choose(self, view: Any, legal: Sequence[Any], rng: Chooser) -> Any:
        """One of `legal`, or a concrete action one of them covers; the caller turns an
        option into an action with `Decider.pick`. `view` is the seat's own view, never the
        full state."""


class RandomBot:
    """Uniform among the listed actions and options (`Decider.pick` then draws a concrete
    action from an option at random)."""

    kind = "random"

    def choose(self, view: Any, legal: Sequence[Any], rng: Chooser) -> Any:
        return legal[rng.randrange(len(legal))]
