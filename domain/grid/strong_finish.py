"""Basketball: the strong bot's last turn, played for the win rather than for points.

Every seat turns one card up a turn, so when the seat has one face-down card left this is
its last turn, and every other seat has at most its own last turn to come: their layouts
are known but for one card each at most. The highest total wins, so a sure +5 is worth
nothing to a seat 12 points behind, and a gamble is a mistake for a seat 3 points ahead.
`Finish` prices each end of the turn by the chance that the seat's total beats every other
seat's (a tie shared), an other seat's last card as the greedy bot would end it: a drawn
card kept where it adds more than an average card (`average_card`), else the face-down card
turned up as it is. Everything comes from the seat's view: its layout, the others' face-up
cards, and the odds of the cards it cannot see (`Knowledge`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from domain.cards import rank_of
from domain.grid.greedy import average_card
from domain.grid.scoring import BASKETBALL_GROUP, NEVER_GROUP, VALUES
from domain.grid.strong_eval import Knowledge, Ranks, ranks_of
from domain.grid.view import GridView
from events.schema.grid import Discard, Draw, Replace

Outcome = dict[int, float]
"""A final total's distribution: total -> chance."""


def total_of(ranks: Sequence[str | None]) -> int:
    """The score of the known ranks of a layout (a face-down card counts nothing)."""
    values = VALUES["basketball"]
    counts: dict[str, int] = {}
    for rank in ranks:
        if rank is not None:
            counts[rank] = counts.get(rank, 0) + 1
    total = 0
    for rank, n in counts.items():
        if n < 2 or rank in NEVER_GROUP:
            total += n * values[rank]
        else:
            grouped = min(n, 4)
            total += BASKETBALL_GROUP[grouped] + (n - grouped) * values[rank]
    return total


class Finish:
    """The last turn's arithmetic: the others' final totals, and the seat's chance to win
    with each total it may end on."""

    def __init__(self, view: GridView, know: Knowledge, ranks: Ranks, hidden: list[int]) -> None:
        self.odds = know.odds
        self.seat = view.viewer or 0
        self.at = hidden[0]
        self.rest = [r for i, r in enumerate(ranks) if i != self.at]
        self.mine = ranks[self.at]
        """The last face-down card's rank if the seat peeked at it, else None."""
        average = average_card(view.rules, view.players)
        self.others: list[Outcome] | None = []
        for seat in range(view.players):
            if seat == self.seat:
                continue
            final = _greedy_finish(ranks_of(view, seat), self.odds, average)
            if final is None:
                self.others = None
                break
            self.others.append(final)
        self._chances: dict[int, float] = {}

    @property
    def applies(self) -> bool:
        """Every other seat has at most one face-down card left."""
        return self.others is not None

    def chance(self, total: int) -> float:
        """The chance that `total` wins, a tie counted as half a win a tied seat."""
        if total not in self._chances:
            win = 1.0
            for outcome in self.others or ():
                win *= sum(
                    p * (1.0 if t < total else 0.5 if t == total else 0.0)
                    for t, p in outcome.items()
                )
            self._chances[total] = win
        return self._chances[total]

    def worth(self, outcome: Mapping[int, float]) -> tuple[float, float]:
        """The chance to win, then the expected total (a tie-break when nothing can change
        the chance: the hand won for sure, or lost)."""
        win = sum(p * self.chance(t) for t, p in outcome.items())
        return win, sum(p * t for t, p in outcome.items())

    def keep(self, rank: str) -> Outcome:
        """The seat's total with a card of `rank` on its last face-down card."""
        return {total_of([*self.rest, rank]): 1.0}

    def turn_up(self) -> Outcome:
        """The seat's total with its last face-down card turned up as it is."""
        if self.mine is not None:
            return self.keep(self.mine)
        out: Outcome = {}
        for rank, p in self.odds.items():
            total = total_of([*self.rest, rank])
            out[total] = out.get(total, 0.0) + p
        return out

    def best_of(self, rank: str) -> tuple[float, float]:
        """A card of `rank` drawn from the stock: kept, or discarded and the card turned up."""
        return max(self.worth(self.keep(rank)), self.worth(self.turn_up()))

    def draw(self, draws: list[Draw], visible: Any) -> Draw:
        best, best_worth = draws[0], (-1.0, 0.0)
        for draw in draws:
            if draw.source == "stock":
                pairs = [(p, self.best_of(r)) for r, p in self.odds.items()]
                worth = (sum(p * w[0] for p, w in pairs), sum(p * w[1] for p, w in pairs))
            else:
                card = visible(draw)
                if card is None:
                    continue
                worth = self.worth(self.keep(rank_of(card)))
            if worth > best_worth:
                best, best_worth = draw, worth
        return best

    def place(self, card: str, legal: Sequence[Any]) -> Any:
        keep = self.worth(self.keep(rank_of(card)))
        discard = next((a for a in legal if isinstance(a, Discard)), None)
        replace = next(a for a in legal if isinstance(a, Replace))
        if discard is not None and self.worth(self.turn_up()) > keep:
            return discard
        return replace


def _greedy_finish(ranks: Ranks, odds: Mapping[str, float], average: int) -> Outcome | None:
    """An other seat's final total: its layout if all face up; with one card face down,
    as the greedy bot ends it (a drawn card kept if it adds more than `average`, else
    the face-down card turned up); None with more cards face down."""
    hidden = [i for i, r in enumerate(ranks) if r is None]
    if not hidden:
        return {total_of(ranks): 1.0}
    if len(hidden) > 1:
        return None
    known = [r for r in ranks if r is not None]
    base = total_of(known)
    adds = {rank: total_of([*known, rank]) - base for rank in odds}
    out: Outcome = {}
    for rank, p in odds.items():
        if adds[rank] > average:
            out[base + adds[rank]] = out.get(base + adds[rank], 0.0) + p
        else:
            for other, q in odds.items():
                total = base + adds[other]
                out[total] = out.get(total, 0.0) + p * q
    return out
