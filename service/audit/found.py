"""What the walk finds: the first failure of each check in each hand, and the events it
examined."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from events.schema.common import GameEnded, HandDealt, HandEnded
from service.audit.report import CheckName, Failure


@dataclass(frozen=True, slots=True)
class Item:
    """A stored event, decoded, with its metadata."""

    version: int
    event: Any
    metadata: dict[str, Any]


@dataclass(slots=True)
class Walk:
    """What the walk found: first failures by (hand, check), events checked by hand."""

    failures: dict[tuple[int, CheckName], Failure] = field(default_factory=dict)
    checked: dict[int, int] = field(default_factory=dict)
    deals: dict[int, tuple[int, HandDealt]] = field(default_factory=dict)
    ended: dict[int, tuple[int, HandEnded]] = field(default_factory=dict)
    game_ended: tuple[int, GameEnded] | None = None
    variant: str | None = None
    stopped: Failure | None = None
    """The walk could not go on (a stored event that cannot be folded)."""

    def fail(self, hand: int, failure: Failure) -> None:
        self.failures.setdefault((hand, failure.check), failure)
