"""A command, as each stream kind writes one: who may ask (`authorize`), what it causes
(`decide`); and what running it gives back (`Outcome`).

Both are small functions of the stream's record. `authorize` raises when the caller may not
issue the command and otherwise names the actor; `decide` returns the events the command
causes, or raises the problem or rule violation that refuses it, or `NothingToDo`.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Generic

from service.commands.stream import R


class NothingToDo(Exception):
    """The command has nothing to do on the stream as it stands (a turn not due, a round
    whose games are still in play): nothing is appended, and it is no error."""


@dataclass(frozen=True, slots=True)
class Actor:
    """Who a command acts for: the idempotency scope of its keys (`seat:2`, `organiser`),
    and its seat if any."""

    scope: str
    seat: int | None = None


def anyone(scope: str) -> Callable[[Any], Actor]:
    """A command everyone may issue, its keys in `scope`."""
    return lambda record: Actor(scope)


@dataclass(frozen=True, slots=True)
class Decision:
    events: Sequence[Any]
    metadata: dict[str, Any] = field(default_factory=dict)
    """Stored with every event of the append."""
    answer: dict[str, Any] = field(default_factory=dict)
    """What the caller gets back beside the events (a new seat's token), never stored."""


@dataclass(frozen=True, slots=True)
class Command(Generic[R]):
    authorize: Callable[[R], Actor]
    decide: Callable[[R, Actor], Decision | Awaitable[Decision]]
    """Pure for most commands; a command that must first create other streams (a round's
    tables) or read them (its games, to close it) awaits."""


@dataclass(frozen=True, slots=True)
class Outcome(Generic[R]):
    """What a command appended (or, replayed, had appended): the record after it (for a
    replay: as it is now), the versions it wrote, and who acted."""

    record: R
    first_version: int
    last_version: int
    actor: Actor
    replayed: bool = False
    answer: dict[str, Any] = field(default_factory=dict)
