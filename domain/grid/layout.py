"""A layout: 2 rows of cards, kept row-major in a tuple, with the face-up positions as bits.

Position `(row, col)` is index `row * columns + col`; bit `1 << index` of a mask marks it.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import cache

from domain.cards import Card
from domain.grid.rules import GridRules

ROWS = 2


def index(columns: int, row: int, col: int) -> int:
    return row * columns + col


def on_grid(columns: int, row: int, col: int) -> bool:
    return 0 <= row < ROWS and 0 <= col < columns


def full_mask(columns: int) -> int:
    return (1 << (ROWS * columns)) - 1


def row_mask(columns: int, row: int) -> int:
    return ((1 << columns) - 1) << (row * columns)


@cache
def positions(mask: int) -> tuple[int, ...]:
    """The indices whose bits are set, in row-major order."""
    return tuple(i for i in range(mask.bit_length()) if mask >> i & 1)


def rows(cards: Sequence[Card | None], columns: int) -> tuple[tuple[Card | None, ...], ...]:
    """`[row 0, row 1]` from a row-major layout."""
    return (tuple(cards[:columns]), tuple(cards[columns:]))


def flattened(rows_of_cards: Sequence[Sequence[Card]]) -> tuple[tuple[Card, ...], int]:
    """A row-major layout and its number of columns, from `[row 0, row 1]`."""
    if len(rows_of_cards) != ROWS or len(rows_of_cards[0]) != len(rows_of_cards[1]):
        raise ValueError("a layout is two rows of equal length")
    return tuple(rows_of_cards[0]) + tuple(rows_of_cards[1]), len(rows_of_cards[0])


def may_turn_in_setup(rules: GridRules, turned: int, at: int) -> bool:
    """Whether the card at `at` may be a setup flip, given the setup flips `turned` so far."""
    columns = rules.columns
    row, col = divmod(at, columns)
    for other in positions(turned):
        other_row, other_col = divmod(other, columns)
        match rules.setup_rule:
            case "rows-apart":
                if other_row == row or other_col == col:
                    return False
            case "not-adjacent":
                if (other_row == row and abs(other_col - col) == 1) or (
                    other_col == col and other_row != row
                ):
                    return False
            case "same-column":
                if other_col != col:
                    return False
            case "any":
                pass
    return True
