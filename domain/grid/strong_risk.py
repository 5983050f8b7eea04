"""Basketball: playing for the win rather than for points, from what the seat can see.

Only the best total wins, so a seat behind the leader should take chances and a seat ahead
should avoid them. The bot's plan prices a choice by its expected points; this module says
how much a point of variance is worth on top. On a normal model of the final margin over
the best other seat (mean `gap`, variance `spread`), the chance to win is
`Phi(gap / sqrt(spread))`, and one more point of variance is worth `-gap / (2 spread)`
points of mean: positive behind, negative ahead, near zero when the race is close or long.
Everything it uses is public or the seat's own: face-up cards, face-down counts, `Knowledge`.
"""

from __future__ import annotations

import os
from collections.abc import Sequence

from domain.grid.strong_eval import Knowledge, Ranks, ranks_of
from domain.grid.view import GridView

RISK_SCALE = float(os.environ.get("FAIRWAY_RISK", "1.0"))
RISK_CAP = float(os.environ.get("FAIRWAY_RISK_CAP", "0.05"))
RISK_HIGH = float(os.environ.get("FAIRWAY_RISK_HIGH", str(RISK_CAP)))
RISK_WHERE = os.environ.get("FAIRWAY_RISK_WHERE", "draw,layout")


def card_variance(know: Knowledge) -> float:
    """The variance of one unseen card's value (grouping left out)."""
    values = know.values
    square = sum(p * values[r] ** 2 for r, p in know.odds.items())
    return max(square - know.mean**2, 1.0)


def risk_weight(know: Knowledge, view: GridView, seat: int, mine: Ranks, hidden: int) -> float:
    """Points of mean one point of variance is worth to the seat now (see the docstring)."""
    own = -know.cost(mine)
    best, leader_hidden = None, 0
    for other in range(view.players):
        if other == seat:
            continue
        ranks = ranks_of(view, other)
        total = -know.cost(ranks)
        if best is None or total > best:
            best, leader_hidden = total, ranks.count(None)
    if best is None:
        return 0.0
    spread = (hidden + leader_hidden) * card_variance(know) + 1.0
    weight = RISK_SCALE * -(own - best) / (2 * spread)
    return max(-RISK_CAP, min(RISK_HIGH, weight))


def variance(values: Sequence[float], odds: Sequence[float]) -> float:
    mean = sum(p * v for p, v in zip(odds, values, strict=True))
    return sum(p * (v - mean) ** 2 for p, v in zip(odds, values, strict=True))
