"""The decider contract every variant implements, and the status every caller may read.

One decider serves live play, replay, audit and bots: there is no second rebuild path.
"""

from __future__ import annotations

from typing import Any, Literal, Protocol

import msgspec

from domain.bots.base import Chooser
from events.schema.common import GameOptions

Phase = Literal["awaiting_deal", "setup", "playing", "game_over"]
"""Where a game stands: a deal is due, simultaneous setup, turns, or over."""

Viewer = int | None
"""A seat number, or None for a spectator (also a tournament organiser: public facts only)."""


class Status(msgspec.Struct, frozen=True):
    """What any caller may know about where a game stands; contains no card."""

    phase: Phase
    """`awaiting_deal` (a DealHand is due), `setup`, `playing`, `game_over`."""
    hand: int
    """The current or last hand, 1-based; 0 before the first deal."""
    to_act: tuple[int, ...]
    """Seats that may act now (several during simultaneous setup; empty when none)."""
    totals: tuple[int, ...]
    """Cumulative totals of completed hands."""
    winners: tuple[int, ...] = ()


class Decider(Protocol):
    """`name` is the variant id (`hang-ten`, `tens`, `golf`, `basketball`, `tens-shedding`)."""

    name: str
    min_players: int
    max_players: int

    def initial_state(self, players: int, options: GameOptions) -> Any:
        """Raises RuleViolation("invalid_config") for a player count or option not allowed."""

    def decide(self, state: Any, command: Any) -> tuple[Any, ...]:
        """The events a command causes, or RuleViolation. Never mutates `state`."""

    def evolve(self, state: Any, event: Any) -> Any:
        """Fold one event into a new state."""

    def status(self, state: Any) -> Status: ...

    def view(self, state: Any, viewer: Viewer) -> Any:
        """Everything `viewer` may know, and nothing else: the one road from state outward."""

    def redact(self, event: Any, viewer: Viewer, hand_over: bool) -> Any:
        """`event` as `viewer` may see it; `hand_over` says whether the hand the event belongs
        to has ended (then everything about it is public)."""

    def table(self, state: Any) -> Any:
        """Everything about `state`, every card included: what replay and audit show of a
        hand that is over. Never for a live hand: it goes round the gate of `view`."""

    def legal_actions(self, state: Any, seat: int) -> tuple[Any, ...]:
        """What `seat` may do now; empty when it is not theirs to act. Each item is a concrete
        action or an option standing for a family of them (Tens-shedding); `decide` accepts
        every action a listed item covers and refuses every other."""

    def covers(self, option: Any, action: Any) -> bool:
        """Whether the concrete `action` is one a listed item stands for."""

    def pick(self, option: Any, rng: Chooser) -> Any:
        """A concrete action the listed item covers, drawn with `rng` (itself if concrete)."""

    action_type: Any
    """The tagged union of this variant's actions (tag field `type`), for decoding requests."""
    options: tuple[str, ...]
    """The `GameOptions` fields this variant reads; the others are refused."""

    def score(self, cards: Any) -> Any:
        """Score a layout (grid) or remaining cards (shedding); has an int `total`."""
