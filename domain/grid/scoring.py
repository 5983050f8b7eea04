"""Scoring a layout: one function per variant, each with a breakdown a player can check.

A layout is scored as it lies, row-major. `None` stands for a card not known (a bot's
estimate): it is worth `unknown` points and never pairs or groups.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence

import msgspec

from domain.cards import Card, is_card, rank_of
from domain.grid.layout import flattened
from domain.grid.rules import Scoring


class ColumnScore(msgspec.Struct, frozen=True):
    column: int
    cards: tuple[Card | None, Card | None]
    paired: bool
    """Two cards of the same rank (column games); a paired column scores 0 on its own."""
    points: int


class Combo(msgspec.Struct, frozen=True):
    """A bonus on top of the columns: a Hang Ten `block`, a Tens `run`, a Golf `group` of
    two paired columns, or a Basketball `group` of cards of one rank."""

    kind: str
    rank: str
    columns: tuple[int, ...]
    cards: int
    points: int


class LayoutScore(msgspec.Struct, frozen=True, tag_field="family", tag="grid"):
    """`total` is the sum of the column points and the combo points. Tagged by `family`, as
    the views are, so a client tells it from Tens-shedding's `RemainingScore`."""

    total: int
    columns: tuple[ColumnScore, ...]
    combos: tuple[Combo, ...] = ()


def _faces(ten: int, jack: int, queen: int, king: int, ace: int, seven: int = 7) -> dict[str, int]:
    values = {str(n): n for n in range(2, 10)}
    values.update({"7": seven, "T": ten, "J": jack, "Q": queen, "K": king, "A": ace, "JK": 0})
    return values


VALUES: dict[Scoring, dict[str, int]] = {
    "hang-ten": _faces(ten=10, jack=10, queen=10, king=10, ace=1, seven=0),
    "tens": _faces(ten=10, jack=10, queen=10, king=0, ace=1),
    "golf": {**_faces(ten=10, jack=10, queen=10, king=0, ace=1), "JK": -5},
    "basketball": _faces(ten=10, jack=10, queen=10, king=25, ace=15),
}
"""Card values by rank; a joker is worth 0 where the rules have none (house variants)."""


def _value(values: Mapping[str, int], card: Card | None, unknown: int) -> int:
    return unknown if card is None else values[rank_of(card)]


def _column_scores(
    cards: Sequence[Card | None], columns: int, values: Mapping[str, int], unknown: int
) -> tuple[ColumnScore, ...]:
    out = []
    for col in range(columns):
        top, bottom = cards[col], cards[columns + col]
        paired = top is not None and bottom is not None and rank_of(top) == rank_of(bottom)
        points = 0 if paired else _value(values, top, unknown) + _value(values, bottom, unknown)
        out.append(ColumnScore(col, (top, bottom), paired, points))
    return tuple(out)


def _pair_rank(column: ColumnScore) -> str | None:
    top = column.cards[0]
    return rank_of(top) if column.paired and top is not None else None


def _runs(scored: tuple[ColumnScore, ...]) -> list[tuple[str, list[int]]]:
    """Runs of adjacent columns that are pairs of one rank, left to right."""
    runs: list[tuple[str, list[int]]] = []
    for column in scored:
        rank = _pair_rank(column)
        if rank is None:
            continue
        last = runs[-1] if runs else None
        if last is not None and last[0] == rank and last[1][-1] == column.column - 1:
            last[1].append(column.column)
        else:
            runs.append((rank, [column.column]))
    return runs


def _hang_ten_blocks(scored: tuple[ColumnScore, ...]) -> tuple[Combo, ...]:
    """Two adjacent same-rank pair columns are a block (-10), taken left to right."""
    blocks = []
    for rank, run in _runs(scored):
        for first in range(0, len(run) - 1, 2):
            blocks.append(Combo("block", rank, (run[first], run[first + 1]), 4, -10))
    return tuple(blocks)


def _tens_runs(scored: tuple[ColumnScore, ...]) -> tuple[Combo, ...]:
    """A run of k >= 2 adjacent same-rank pair columns scores -10 x k."""
    return tuple(
        Combo("run", rank, tuple(run), 2 * len(run), -10 * len(run))
        for rank, run in _runs(scored)
        if len(run) >= 2
    )


def _golf_groups(scored: tuple[ColumnScore, ...]) -> tuple[Combo, ...]:
    """Same-rank pair columns, adjacent or not, taken two at a time: -10 per group."""
    by_rank: dict[str, list[int]] = {}
    for column in scored:
        rank = _pair_rank(column)
        if rank is not None:
            by_rank.setdefault(rank, []).append(column.column)
    groups = []
    for rank, cols in by_rank.items():
        for first in range(0, len(cols) - 1, 2):
            groups.append(Combo("group", rank, (cols[first], cols[first + 1]), 4, -10))
    return tuple(groups)


def _score_columns(
    combos: Callable[[tuple[ColumnScore, ...]], tuple[Combo, ...]], scoring: Scoring
) -> Callable[[Sequence[Card | None], int, int], LayoutScore]:
    values = VALUES[scoring]

    def score(cards: Sequence[Card | None], columns: int, unknown: int = 0) -> LayoutScore:
        scored = _column_scores(cards, columns, values, unknown)
        bonus = combos(scored)
        total = sum(c.points for c in scored) + sum(b.points for b in bonus)
        return LayoutScore(total, scored, bonus)

    return score


BASKETBALL_GROUP = {2: 25, 3: 40, 4: 50}
NEVER_GROUP = frozenset({"A", "K"})


def score_basketball(cards: Sequence[Card | None], columns: int, unknown: int = 0) -> LayoutScore:
    """Cards of one rank anywhere form a group (2: 25, 3: 40, 4: 50) instead of their values;
    aces and kings never group; a group holds at most four cards, further ones score singly."""
    values = VALUES["basketball"]
    at: dict[str, list[int]] = {}
    for i, card in enumerate(cards):
        if card is not None and rank_of(card) not in NEVER_GROUP:
            at.setdefault(rank_of(card), []).append(i)
    grouped: set[int] = set()
    groups = []
    for rank, where in at.items():
        if len(where) >= 2:
            members = where[:4]
            grouped.update(members)
            cols = tuple(sorted({i % columns for i in members}))
            groups.append(Combo("group", rank, cols, len(members), BASKETBALL_GROUP[len(members)]))
    scored = []
    for col in range(columns):
        top, bottom = cards[col], cards[columns + col]
        points = sum(
            _value(values, cards[i], unknown) for i in (col, columns + col) if i not in grouped
        )
        scored.append(ColumnScore(col, (top, bottom), False, points))
    total = sum(c.points for c in scored) + sum(g.points for g in groups)
    return LayoutScore(total, tuple(scored), tuple(groups))


SCORERS: dict[Scoring, Callable[[Sequence[Card | None], int, int], LayoutScore]] = {
    "hang-ten": _score_columns(_hang_ten_blocks, "hang-ten"),
    "tens": _score_columns(_tens_runs, "tens"),
    "golf": _score_columns(_golf_groups, "golf"),
    "basketball": score_basketball,
}


def score_layout(
    scoring: Scoring, cards: Sequence[Card | None], columns: int, unknown: int = 0
) -> LayoutScore:
    """Score a row-major layout by the named variant's scoring."""
    return SCORERS[scoring](cards, columns, unknown)


def score_rows(scoring: Scoring, rows_of_cards: Sequence[Sequence[Card]]) -> LayoutScore:
    """Score `[row 0, row 1]` card texts."""
    cards, columns = flattened(rows_of_cards)
    wrong = [card for card in cards if not is_card(card)]
    if wrong:
        raise ValueError(f"not cards: {wrong}")
    return score_layout(scoring, cards, columns)
