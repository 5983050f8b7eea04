"""The grid games (Hang Ten, Tens, Golf, Basketball): one engine, four rules records."""

from domain.grid.game import BASKETBALL, GOLF, HANG_TEN, TENS, GridGame
from domain.grid.greedy import GreedyGridBot
from domain.grid.rules import (
    BASKETBALL_RULES,
    GOLF_RULES,
    HANG_TEN_RULES,
    TENS_RULES,
    DeckSize,
    GridRules,
)
from domain.grid.scoring import LayoutScore
from domain.grid.state import GridState
from domain.grid.view import GridTable, GridView

__all__ = [
    "BASKETBALL",
    "BASKETBALL_RULES",
    "GOLF",
    "GOLF_RULES",
    "HANG_TEN",
    "HANG_TEN_RULES",
    "TENS",
    "TENS_RULES",
    "DeckSize",
    "GreedyGridBot",
    "GridGame",
    "GridRules",
    "GridState",
    "GridTable",
    "GridView",
    "LayoutScore",
]
