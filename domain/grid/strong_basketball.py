"""The strong bot's Basketball turn, priced by the exact continuation (basketball_dp.py).

Every choice of the turn (the stock or the pile's card, where to put a card, which card to
turn up) is worth the expected final score of the seat's own layout under its best play
over the turns it has left, as `Continuation` solves it from the seat's view: its face-up
cards, its peeked cards still face down, how many unseen cards it holds and the unseen
cards' odds (`Knowledge`). Positions never matter in Basketball, ranks do: a choice is
priced by the open slot it touches (a peeked rank, or an unseen card).

The continuation's size grows with the turns left and with the ranks whose groups it
follows. With at most `FOLLOW_ALL` turns left it follows every rank (exact but for the
odds not depleting and the pile's later cards); with more, the ranks the seat holds (and
the card in hand), at most `TRACK` of them. The strong bot uses it from
`strong.BASKETBALL_DP` turns left (5): following only the held ranks undervalues every
fresh card alike, which cost points with 6 turns or more (docs/BENCHMARKS.md).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from domain.cards import rank_of
from domain.grid.basketball_dp import Continuation, State
from domain.grid.layout import index
from domain.grid.scoring import NEVER_GROUP, VALUES
from domain.grid.strong_eval import Knowledge, ranks_of
from domain.grid.view import GridView
from events.schema.grid import Discard, Draw, Flip, Replace

TRACK = {10: 2, 9: 2, 8: 3, 7: 3, 6: 4}
"""By the turns the seat has left: how many ranks' groups the continuation follows at most
(absent: all of them)."""
FOLLOW_ALL = 4.0
"""With at most this many turns left the continuation follows every grouping rank the stock
may give, fresh ones too (two later cards of a rank the seat does not hold yet may pair)."""
FOLLOW_HAND = 1.0
"""Follow the rank of the card in hand (or the pile's top) too (0: only if the seat holds
that rank already; else it counts its single value, as every other fresh card does)."""
VALUE = VALUES["basketball"]


class BasketballPlan:
    """One decision: the seat's layout as open slots, and the continuation that prices it."""

    def __init__(self, view: GridView, extra: str | None = None) -> None:
        """`extra`: a card the seat may take (the pile's top), whose rank is followed too."""
        self.view = view
        seat = view.viewer or 0
        columns = view.rules.columns
        ranks = ranks_of(view, seat)
        peeked_at = {index(columns, row, col) for row, col in view.peeked}
        self.slot_at: dict[int, str | None] = {
            at: (rank if at in peeked_at else None)
            for at, rank in enumerate(ranks)
            if rank is None or at in peeked_at
        }
        """Each face-down position: its peeked rank, or None (unseen)."""
        face_up = [r for at, r in enumerate(ranks) if r is not None and at not in self.slot_at]
        peeked = sorted(r for r in self.slot_at.values() if r is not None)
        unseen = sum(1 for r in self.slot_at.values() if r is None)
        held = [*face_up, *peeked]
        if FOLLOW_HAND:
            held.extend(rank_of(card) for card in (view.drawn, extra) if card is not None)
        know = Knowledge(view)
        turns = len(self.slot_at)
        if turns <= FOLLOW_ALL:
            held.extend(know.odds)
        self.dp = Continuation(know.odds, face_up, peeked, follow(held, turns))
        self.state: State = (tuple(peeked), unseen, self.dp.counts(face_up))

    def stock(self) -> float:
        """The stock's card: its best use, averaged over the ranks it may be."""
        peeked, unseen, counts = self.state
        return self.dp.value(peeked, unseen, counts)

    def best_keep(self, rank: str) -> float:
        """A card of `rank` that must be kept (the pile's card): on its best open slot."""
        return max(self.dp.placed(rank, self.state, slot) for slot in self.slots())

    def slots(self) -> list[str | None]:
        return list(dict.fromkeys(self.slot_at.values()))

    def draw(self, draws: Sequence[Draw]) -> Draw:
        best, best_value = draws[0], float("-inf")
        for draw in draws:
            if draw.source == "stock":
                worth = self.stock()
            else:
                pile = self.view.discard_piles[0]
                if not pile:
                    continue
                worth = self.best_keep(rank_of(pile[-1]))
            if worth > best_value + 1e-9:
                best, best_value = draw, worth
        return best

    def place(self, card: str, legal: Sequence[Any]) -> Any:
        rank = rank_of(card)
        columns = self.view.rules.columns
        best: Any = legal[0]
        best_value = float("-inf")
        for action in legal:
            if isinstance(action, Discard):
                worth = max(self.dp.turned(self.state, slot) for slot in self.slots())
            elif isinstance(action, Replace):
                slot = self.slot_at[index(columns, action.row, action.col)]
                worth = self.dp.placed(rank, self.state, slot)
            else:
                continue
            if worth > best_value + 1e-9:
                best, best_value = action, worth
        return best

    def flip(self, flips: Sequence[Flip]) -> Flip:
        columns = self.view.rules.columns
        best, best_value = flips[0], float("-inf")
        for action in flips:
            slot = self.slot_at[index(columns, action.row, action.col)]
            worth = self.dp.turned(self.state, slot)
            if worth > best_value + 1e-9:
                best, best_value = action, worth
        return best


def follow(held: Sequence[str], turns: int) -> tuple[str, ...]:
    """The ranks whose groups the continuation follows: grouping ranks the seat holds (face
    up, peeked, in hand), most copies first, then the lowest (a pair of low cards gains
    most over their values), at most `TRACK[turns]` of them."""
    copies: dict[str, int] = {}
    for rank in held:
        if rank not in NEVER_GROUP:
            copies[rank] = copies.get(rank, 0) + 1
    order = sorted(copies, key=lambda r: (-copies[r], VALUE[r], r))
    cap = TRACK.get(turns)
    return tuple(order if cap is None else order[:cap])
