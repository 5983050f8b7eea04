"""Whose turn it is, and since which event: where a seat's turn clock starts.

A seat's clock starts with the event that made it one of the seats to act: the end of the
previous seat's turn, or in a simultaneous setup the deal. It keeps running while the seat
takes the several actions of one turn (a draw, then a discard), and starts again for every
seat when the hand or the phase changes. The game's record (for the views) and the referee
(for the timeouts) fold the same events through this one rule, so they agree on every
deadline; the time of the event is the store's `recorded_at`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime, timedelta

from domain.decider import Status


@dataclass(slots=True)
class TurnStarts:
    stage: tuple[int, str] = (0, "")
    """The hand and phase the starts belong to."""
    since: dict[int, int] = field(default_factory=dict)
    """Per seat to act now, the version of the event that made it their turn."""

    def advance(self, status: Status, version: int) -> None:
        """Fold the status just after the event at `version`."""
        stage = (status.hand, status.phase)
        if stage != self.stage:
            self.stage, self.since = stage, {}
        acting = status.to_act if status.phase in ("setup", "playing") else ()
        self.since = {seat: self.since.get(seat, version) for seat in acting}


def deadline(turn_seconds: int, began: datetime) -> datetime:
    """When a turn that began at `began` runs out."""
    return began + timedelta(seconds=turn_seconds)
