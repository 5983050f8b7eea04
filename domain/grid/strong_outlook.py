"""The strong grid bot's look-ahead: a layout is worth its expected score less what the
seat's next draw is expected to save (Golf and Basketball).

Where the turn's arithmetic stops, a layout is priced as it would be if the hand ended now
(`Knowledge.cost`), less `weight` times the saving its next draw would bring: for every rank
the unseen card may be, the best single replacement, weighed by the rank's odds (Golf: any
position, face-up cards too; Basketball: a face-down card). That counts what the plain cost
cannot see: a card left face up beside a face-down one may yet be paired, a high card may
yet be swapped out, a layout with many ways to improve is worth more than one with few. The
seat always gets one more draw unless its own turn ends the hand: an opponent going out
leaves it one final turn.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from domain.grid.strong_eval import Knowledge


def golf_bonus(count: int) -> int:
    """The group bonus of `count` paired columns of one rank: -10 for every two."""
    return -10 * (count // 2)


def golf_outlook(
    ranks: Sequence[str | None],
    columns: int,
    values: Mapping[str, int],
    odds: Mapping[str, float],
    unknown: float,
    weight: float,
) -> float:
    """The layout's cost (a face-down card worth `unknown`) less `weight` times the
    expected saving of the best use of one more card drawn from the unseen ones."""
    cost: list[float] = []
    paired: list[str | None] = []
    counts: dict[str, int] = {}
    for col in range(columns):
        top, bottom = ranks[col], ranks[columns + col]
        if top is not None and top == bottom:
            cost.append(0.0)
            paired.append(top)
            counts[top] = counts.get(top, 0) + 1
        else:
            cost.append(_worth(top, values, unknown) + _worth(bottom, values, unknown))
            paired.append(None)
    base = sum(cost) + sum(golf_bonus(n) for n in counts.values())
    if weight == 0.0:
        return base
    saving = 0.0
    for rank, chance in odds.items():
        value = values[rank]
        best = 0.0
        for col in range(columns):
            was = paired[col]
            for stays in (ranks[columns + col], ranks[col]):
                if stays == rank:
                    now, pair = 0.0, rank
                else:
                    now, pair = value + _worth(stays, values, unknown), None
                change = now - cost[col]
                if pair != was:
                    if was is not None:
                        n = counts[was]
                        change += golf_bonus(n - 1) - golf_bonus(n)
                    if pair is not None:
                        n = counts.get(pair, 0)
                        change += golf_bonus(n + 1) - golf_bonus(n)
                if -change > best:
                    best = -change
        saving += chance * best
    return base - weight * saving


def _worth(rank: str | None, values: Mapping[str, int], unknown: float) -> float:
    return unknown if rank is None else values[rank]


def basketball_outlook(
    know: Knowledge, ranks: Sequence[str | None], open_: Sequence[int], weight: float = 1.0
) -> float:
    """The layout's cost (its score negated, an unseen card weighed over every rank) less
    `weight` times the expected saving of one more card drawn from the unseen ones put on
    the best of the `open_` (face-down) positions."""
    base = know.cost(ranks, open_=open_)
    work = list(ranks)
    saving = 0.0
    rest = {at: [other for other in open_ if other != at] for at in open_}
    for rank, chance in know.odds.items():
        best = base
        for at in open_:
            was = work[at]
            work[at] = rank
            cost = know.cost(work, open_=rest[at])
            work[at] = was
            if cost < best:
                best = cost
        saving += chance * (base - best)
    return base - weight * saving
