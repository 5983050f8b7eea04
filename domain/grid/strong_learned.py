"""Basketball: a correction to the strong bot's price, learned offline from simulated games.

The price of a layout a turn leaves (`strong_eval.py`, `strong_outlook.py`) is arithmetic
with a few hand-tuned constants. What it misses was measured, not derived: the strong seat
played against three greedy seats (deals of a seed no benchmark uses), at each of its place
and flip decisions taking, one time in five, a random choice among the price's best three
(so that the games also cover the alternatives), and the layout each decision left was
recorded with the seat's final total. For each number of face-down cards left (the turns
left), the final total less the price's estimate was fitted by least squares on the
`features` below. The bot prices a layout at its price less the fitted correction.

Remake the table: `python benchmarks/basketball_learn.py --help` (the fit prints `WEIGHTS`).
The features are a function of what the seat sees: its own layout as far as it knows it, its
face-down positions, and the unseen cards' odds; the opponents' layouts are left out, as they
are the same whatever the seat chooses.
"""

from __future__ import annotations

from collections.abc import Sequence

from domain.grid.scoring import NEVER_GROUP
from domain.grid.strong_eval import Knowledge, _group_worth

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

BASKETBALL_LEARNED = 1.0
"""The share of the learned correction the bot counts (0: the price alone)."""
ROW = (0.714, -0.335, 1.398, -2.783, -14.09, -0.344, -4.679)
WEIGHTS: dict[int, tuple[float, ...]] = dict.fromkeys(range(1, 10), ROW)
"""Per face-down cards left after the decision (1-9): the points each feature adds to the
expected final total beyond the price. Missing: no correction (0 left: the price is exact)."""


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


def correction(left: int, feats: Sequence[float]) -> float:
    """Points the learned table adds to the price's expected final total."""
    weights = WEIGHTS.get(left)
    if weights is None:
        return 0.0
    return sum(w * f for w, f in zip(weights, feats, strict=True))
