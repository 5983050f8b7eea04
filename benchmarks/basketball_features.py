"""The features of a Basketball layout that `basketball_learn.py` and `basketball_probe.py`
fitted a correction to the strong bot's price on (issue 18, branch `bball7`; tried, not kept:
docs/BENCHMARKS.md). Benchmark only: the bot that priced layouts with the fitted table, the
table itself and its unit test were `domain/grid/strong_learned.py` on commits `defa997`
(fitted to final totals) and `4b271b1` (fitted to paired playouts); the bot on main does not
use them.

They are a function of what the seat sees: its own layout as far as it knows it, its
face-down positions, and the unseen cards' odds; the opponents' layouts are left out, as they
are the same whatever the seat chooses.
"""

from __future__ import annotations

from collections.abc import Sequence

from domain.grid.scoring import NEVER_GROUP
from domain.grid.strong_eval import Knowledge, _group_worth
from domain.grid.strong_outlook import basketball_outlook

FEATURES = (
    "unseen",
    "option gain",
    "saving",
    "pair chance",
    "grow chance",
    "peeked low",
    "unseen pairs",
)
"""- unseen: face-down cards the seat has not seen (a card just turned up by this choice is
  not face down any more, though its rank is still unknown);
- option gain: over its peeked face-down cards, the mean gain of one draw over each;
- saving: what its next draw is expected to save (the look-ahead's, at share 1);
- pair chance: over its known singles that may group, the chance that an unknown card is of
  that rank, times the unknown cards;
- grow chance: the same over its known pairs and threes (a group grown by one);
- peeked low: its peeked face-down cards adding at most 6 points (the cards to swap out);
- unseen pairs: the expected number of pairs among its unknown cards themselves."""


def features(
    know: Knowledge, ranks: Sequence[str | None], open_: Sequence[int], saving: float
) -> tuple[float, ...]:
    """The features of a layout `ranks` (None: unseen) with face-down positions `open_`;
    `saving` the look-ahead's one-draw saving at share 1."""
    values, odds = know.values, know.odds
    counts: dict[str, int] = {}
    unknown = 0
    for rank in ranks:
        if rank is None:
            unknown += 1
        else:
            counts[rank] = counts.get(rank, 0) + 1
    unseen = 0
    gain = 0.0
    low = 0
    for at in open_:
        rank = ranks[at]
        if rank is None:
            unseen += 1
            continue
        n, value = counts[rank], values[rank]
        adds = _group_worth(rank, n, value) - _group_worth(rank, n - 1, value)
        gain += sum(p * max(0, values[r] - adds) for r, p in odds.items())
        low += adds <= 6
    pair = grow = 0.0
    for rank, n in counts.items():
        if rank in NEVER_GROUP:
            continue
        if n == 1:
            pair += odds.get(rank, 0.0)
        elif n < 4:
            grow += odds.get(rank, 0.0)
    pairs = unknown * (unknown - 1) / 2 * know.pair_odds
    return (float(unseen), gain, saving, pair * unknown, grow * unknown, float(low), pairs)


def parts(
    know: Knowledge, ranks: Sequence[str | None], open_: Sequence[int]
) -> tuple[float, float]:
    """The layout's cost (the price before the look-ahead) and its next draw's saving."""
    base = know.cost(ranks, open_=open_)
    return base, base - basketball_outlook(know, ranks, open_, 1.0)
