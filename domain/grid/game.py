"""One decider for every grid game; a variant is a `GridGame` built from its rules record."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from domain.bots.base import Chooser
from domain.cards import check_in_decks
from domain.decider import Status, Viewer
from domain.errors import RuleViolation
from domain.grid import decide as deciding
from domain.grid import evolve as evolving
from domain.grid import legal as acting
from domain.grid import view as viewing
from domain.grid.rules import (
    BASKETBALL_RULES,
    GOLF_RULES,
    HANG_TEN_RULES,
    TENS_RULES,
    GridRules,
    check,
)
from domain.grid.scoring import LayoutScore, score_rows
from domain.grid.state import GridState
from events.schema.common import GameOptions
from events.schema.grid import GridAction


class GridGame:
    """The `Decider` of a grid game whose differences are all in `rules`."""

    action_type: Any = GridAction
    options: tuple[str, ...] = ("turn_limit", "hands", "turn_seconds")

    def __init__(self, rules: GridRules) -> None:
        self.rules = check(rules)
        self.name = rules.name
        self.min_players = rules.min_players
        self.max_players = rules.max_players

    def __repr__(self) -> str:
        return f"GridGame({self.name!r})"

    def initial_state(self, players: int, options: GameOptions) -> GridState:
        rules = self.rules
        if not rules.min_players <= players <= rules.max_players:
            raise RuleViolation(
                "invalid_config",
                f"{rules.title} is for {rules.min_players}-{rules.max_players} players",
            )
        if options.grab_min is not None or options.grab_max is not None:
            raise RuleViolation("invalid_config", "grab sizes belong to Tens-shedding")
        return GridState(
            players=players,
            turn_limit=options.turn_limit or rules.turn_limit,
            hands=options.hands or rules.hands,
            totals=(0,) * players,
        )

    def decide(self, state: GridState, command: Any) -> tuple[Any, ...]:
        return deciding.decide(self.rules, state, command)

    def evolve(self, state: GridState, event: Any) -> GridState:
        return evolving.evolve(self.rules, state, event)

    def status(self, state: GridState) -> Status:
        return acting.status(self.rules, state)

    def view(self, state: GridState, viewer: Viewer) -> viewing.GridView:
        return viewing.view(self.rules, state, viewer)

    def redact(self, event: Any, viewer: Viewer, hand_over: bool) -> Any:
        return viewing.redact(event, viewer, hand_over)

    def table(self, state: GridState) -> viewing.GridTable:
        return viewing.table(self.rules, state)

    def legal_actions(self, state: GridState, seat: int) -> tuple[Any, ...]:
        """Concrete actions only: a grid seat never has more than a dozen or so."""
        return acting.legal_actions(self.rules, state, seat)

    def covers(self, option: Any, action: Any) -> bool:
        return bool(option == action)

    def pick(self, option: Any, rng: Chooser) -> Any:
        return option

    def score(self, cards: Sequence[Sequence[str]]) -> LayoutScore:
        """Score `[row 0, row 1]` by this variant's scoring. Refused: a layout of the wrong
        shape, or a card the variant's largest deck cannot hold (a joker where there are none,
        more copies of a card than its decks contain)."""
        columns = self.rules.columns
        if len(cards) != 2 or any(len(row) != columns for row in cards):
            raise RuleViolation(
                "illegal_position",
                f"{self.rules.title}: a layout is 2 rows of {columns} cards",
            )
        decks = max(size.decks for size in self.rules.decks)
        jokers = max(size.jokers for size in self.rules.decks)
        check_in_decks((card for row in cards for card in row), decks, jokers, self.rules.title)
        return score_rows(self.rules.scoring, cards)


HANG_TEN = GridGame(HANG_TEN_RULES)
TENS = GridGame(TENS_RULES)
GOLF = GridGame(GOLF_RULES)
BASKETBALL = GridGame(BASKETBALL_RULES)
