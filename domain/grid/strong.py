"""The strong bot for the grid games: it plans its whole turn from its seat's view alone.

Where the greedy bot prices an unseen card at the deck's average and takes a visible card
only past a fixed margin, this bot weighs every rank an unseen card may be by its odds
(`Knowledge`: the deck less every card the view shows). A draw is valued by expectimax over
the turn: a visible card by its best placement, the stock by the mean over the ranks it may
hold of each rank's best placement; a placement by the expected score of the layout it
leaves. Its choice is a function of the view, the legal actions and the rng alone.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from domain.bots.base import Chooser
from domain.cards import rank_of
from domain.grid.layout import index
from domain.grid.strong_basketball import BasketballPlan
from domain.grid.strong_eval import Knowledge, Ranks, ranks_of
from domain.grid.strong_outlook import basketball_outlook, golf_outlook
from domain.grid.view import GridView
from events.schema.grid import Discard, Draw, EndTurn, Flip, GoOut, Peek, Replace, SetupFlip

GOLF_LOOK_AHEAD = 1.0
"""Golf: the share of the next draw's expected saving counted (measured against greedy bots,
300 games a trial: 0.7 gave 1.33x parity, 1.0 1.52x, 1.3 1.16x, 2.0 1.03x)."""
BASKETBALL_LOOK_AHEAD = 1.3
"""Basketball: the share of the next draw's expected saving counted while placing and
flipping. Tuned against greedy bots (400 games on the same deals a candidate): alone, 0.7
gave 1.11x parity, 1.0 and 1.3 1.26x; with the unseen-card bonus (strong_eval.py), 1.3 and
1.5 about 1.35x on deals not searched."""
BASKETBALL_DP = 5.0
"""Basketball: with at most this many turns left (face-down cards), price every choice by
the exact continuation over the seat's own turns (strong_basketball.py); before that, and
with 0 always, by the priced layouts of `Plan`. Against the priced layouts alone, paired, on
games 0-1999: from 5 turns left (every rank followed from 4) +0.74 +- 0.12 points, +1.0 +-
0.5 points of win rate; from 3 turns +0.12 +- 0.13 (300 games); from 6 -0.23 +- 0.48 and
from 10 (every turn) -4.1 +- 0.8 (300 games): with many turns left the continuation follows
only the ranks the seat holds, which undervalues fresh cards. From 5, on the fresh games
2000-4999: +0.28 +- 0.09 points, +0.69 +- 0.42 points of win rate (docs/BENCHMARKS.md)."""
GO_OUT_MARGIN = 0.0
"""Golf: how much lower than every other layout's its own must be expected to score."""


class StrongGridBot:
    kind = "strong"

    def choose(self, view: GridView, legal: Sequence[Any], rng: Chooser) -> Any:
        if len(legal) == 1:
            return legal[0]
        if Peek() in legal:
            return Peek()
        if isinstance(legal[0], SetupFlip):
            return legal[rng.randrange(len(legal))]
        if view.rules.scoring == "basketball" and _face_down(view) <= BASKETBALL_DP:
            return self._basketball(view, legal)
        plan = Plan(view)
        if GoOut() in legal:
            return GoOut() if plan.going_out_pays() else EndTurn()
        if isinstance(legal[0], Flip):
            return plan.flip([a for a in legal if isinstance(a, Flip)])
        if view.drawn is not None and any(isinstance(a, Replace | Discard) for a in legal):
            return plan.place(view.drawn, legal)
        draws = [a for a in legal if isinstance(a, Draw)]
        if draws:
            return plan.draw(draws)
        return legal[rng.randrange(len(legal))]

    def _basketball(self, view: GridView, legal: Sequence[Any]) -> Any:
        if isinstance(legal[0], Flip):
            return BasketballPlan(view).flip([a for a in legal if isinstance(a, Flip)])
        if view.drawn is not None:
            return BasketballPlan(view).place(view.drawn, legal)
        draws = [a for a in legal if isinstance(a, Draw)]
        pile = view.discard_piles[0] if view.discard_piles else ()
        return BasketballPlan(view, pile[-1] if pile else None).draw(draws)


def _face_down(view: GridView) -> int:
    """The seat's face-down cards (Basketball: its turns left): unseen, or peeked at."""
    top, bottom = view.layouts[view.viewer or 0]
    return sum(card is None for card in (*top, *bottom)) + len(view.peeked)


class Plan:
    """One decision's arithmetic: the seat's layout by rank, its face-down positions, and
    what it may do with a card in hand."""

    def __init__(self, view: GridView) -> None:
        self.view = view
        self.know = Knowledge(view)
        self.seat = view.viewer or 0
        self.final = view.went_out is not None
        """Someone is out: this is the seat's last turn of the hand."""
        self.rules = view.rules
        self.ranks = ranks_of(view, self.seat)
        columns = self.rules.columns
        peeked = {index(columns, row, col) for row, col in view.peeked}
        self.hidden = [at for at, r in enumerate(self.ranks) if r is None or at in peeked]
        """Face-down positions: unseen, or (Basketball) peeked at."""
        self.looking = False
        """Basketball: price layouts with the next draw's saving (placing and flipping; in
        the draw it costs a rank's worth of work more per rank and measured no better)."""
        self.spots = self.hidden if self.rules.replace == "face-down" else range(len(self.ranks))

    def cost(self, ranks: Ranks, open_: Sequence[int] | None = None) -> float:
        """The expected cost of a layout the turn leaves, `open_` its face-down positions:
        as it lies, less (Golf; Basketball while placing or flipping) what the seat's next
        draw is expected to save. Golf: no next draw once the hand ends before it."""
        know = self.know
        if self.rules.scoring == "golf":
            ends = self.final or None not in ranks
            unknown = know.mean if self.final else know.unknown
            weight = 0.0 if ends else GOLF_LOOK_AHEAD
            return golf_outlook(ranks, know.columns, know.values, know.odds, unknown, weight)
        open_ = self.hidden if open_ is None else open_
        if self.looking:
            return basketball_outlook(know, ranks, open_, BASKETBALL_LOOK_AHEAD)
        return know.cost(ranks, self.final, open_)

    def after_flip(self, ranks: Ranks, open_: list[int]) -> float:
        """The cost once the flip that must follow a discard is made as well as it can be."""
        if self.rules.discard_stock_card not in ("flip", "flip-unless-last") or not open_:
            return self.cost(ranks, open_)
        return min(self.cost(ranks, [at for at in open_ if at != flip]) for flip in open_)

    def best_with(self, rank: str, from_stock: bool) -> float:
        """The expected cost after the best use of a card of `rank` in hand."""
        ranks, hidden = self.ranks, self.hidden
        discard = from_stock and self._may_discard(from_stock)
        if discard:
            best = self.after_flip(ranks, hidden)
        else:
            best = self.cost(ranks) if self._may_discard(from_stock) else float("inf")
        for at in self.spots:
            was = ranks[at]
            ranks[at] = rank
            cost = self.cost(ranks, [h for h in hidden if h != at])
            ranks[at] = was
            if cost < best:
                best = cost
        return best

    def _may_discard(self, from_stock: bool) -> bool:
        rules = self.rules
        if from_stock:
            return rules.discard_stock_card != "never"
        return not rules.keep_taken_card

    def draw(self, draws: list[Draw]) -> Draw:
        best, best_cost = draws[0], float("inf")
        for draw in draws:
            if draw.source == "stock":
                cost = sum(p * self.best_with(r, True) for r, p in self.know.odds.items())
            else:
                card = self._visible(draw)
                if card is None:
                    continue
                cost = self.best_with(rank_of(card), False)
            if cost < best_cost - 1e-9:
                best, best_cost = draw, cost
        return best

    def place(self, card: str, legal: Sequence[Any]) -> Any:
        rank = rank_of(card)
        columns = self.rules.columns
        self.looking = self.rules.scoring == "basketball"
        best: Any = None
        best_cost = float("inf")
        for action in legal:
            if isinstance(action, Discard):
                if self.view.drawn_from == "stock":
                    cost = self.after_flip(self.ranks, self.hidden)
                else:
                    cost = self.cost(self.ranks)
            elif isinstance(action, Replace):
                at = index(columns, action.row, action.col)
                ranks = list(self.ranks)
                ranks[at] = rank
                cost = self.cost(ranks, [h for h in self.hidden if h != at])
            else:
                continue
            if cost < best_cost - 1e-9:
                best, best_cost = action, cost
        return best if best is not None else legal[0]

    def flip(self, flips: list[Flip]) -> Flip:
        """Turn up the card whose chance of being swapped later is worth least: a peeked
        card at least as good as any likely draw, else an unseen card."""
        columns = self.rules.columns
        self.looking = self.rules.scoring == "basketball"
        best, best_cost = flips[0], float("inf")
        for action in flips:
            at = index(columns, action.row, action.col)
            cost = self.cost(self.ranks, [h for h in self.hidden if h != at])
            if cost < best_cost - 1e-9:
                best, best_cost = action, cost
        return best

    def going_out_pays(self) -> bool:
        """Golf: go out when no other layout is expected to score lower than this one once
        its final turn has brought it the next draw's expected saving (against greedy bots,
        300 games: 1.69x parity, 1.53x without that saving)."""
        know, view = self.know, self.view
        mine = know.cost(self.ranks, final=True)
        others = [
            golf_outlook(ranks_of(view, seat), know.columns, know.values, know.odds, know.mean, 1.0)
            for seat in range(view.players)
            if seat != self.seat
        ]
        return not others or mine <= min(others) - GO_OUT_MARGIN

    def _visible(self, draw: Draw) -> str | None:
        view = self.view
        match draw.source:
            case "centre":
                return view.centre
            case "discard":
                pile = view.discard_piles[0]
                return pile[-1] if pile else None
            case "pile" if draw.from_seat is not None:
                pile = view.discard_piles[draw.from_seat]
                return pile[-1] if pile else None
        return None
