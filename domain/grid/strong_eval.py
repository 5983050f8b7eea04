"""What the strong grid bot knows and how it values a layout, from its seat's view alone.

The cards a seat cannot see (the stock, every face-down card but its own peeked ones, a card
another player drew from the stock) are, as far as it can tell, a random draw from the deck
less every card the view shows. `Knowledge` holds that distribution by rank; `expected_cost`
is a layout's expected score under it, as a cost (lower is better; Basketball's score is
negated), each unseen card weighed over every rank it may be, pairs and groups included.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from functools import cache

from domain.cards import Card, count_cards, make_deck, rank_of
from domain.grid.rules import GridRules
from domain.grid.scoring import BASKETBALL_GROUP, NEVER_GROUP, VALUES
from domain.grid.view import GridView

UNKNOWN_BIAS: dict[str, float] = {"hang-ten": 5.0, "tens": 5.0}
"""Points a face-down card counts above the unseen cards' mean while the hand goes on.
Where a discard needs no flip (Hang Ten) or every card drawn is kept (Tens), the player who
turns their layout up first ends the hand on the others' face-down cards: racing pays
(measured against greedy bots: Hang Ten wins 6% at -1.5, 41% at 0, 94% at +5)."""
BASKETBALL_UNSEEN_BONUS = 2.0
"""Basketball: points a face-down card counts above what a card of each rank would add to
the layout, weighed by its odds (it may still be swapped for a better one). Tuned against
greedy bots with the look-ahead at 1.3 (strong.py), 400 games a candidate on the same deals,
from 0 to 6: +1 and +2 best; with +2, 1.37x parity over 2,200 games not searched, against
1.26x without (docs/BENCHMARKS.md)."""
BASKETBALL_OPTION = 4.0
"""Basketball: what a peeked card still face down is worth above what it adds, as a card a
later draw may replace: the mean gain of one draw over it, in units of the mean gain of one
unseen card over another. A low card counts well above its value (it is the card to swap
out), a king nothing (no draw beats it). Against greedy bots on games 0-999 (the bot
without it 1.31x parity, +4.04 points over their mean): 2 gave 1.44x (+4.91), 3 1.46x
(+5.38), 4 1.47x (+5.46), 6 1.38x (+4.25); fresh deals in docs/BENCHMARKS.md."""
Ranks = list[str | None]
"""A row-major layout by rank; None is a card the seat does not know."""


@cache
def deck_ranks(rules: GridRules, players: int) -> tuple[tuple[str, int], ...]:
    """How many cards of each rank this game's deck holds."""
    size = rules.deck_for(players)
    counts: dict[str, int] = {}
    for card, n in count_cards(make_deck(size.decks, size.jokers)).items():
        counts[rank_of(card)] = counts.get(rank_of(card), 0) + n
    return tuple(sorted(counts.items()))


def seen_cards(view: GridView) -> list[Card]:
    """Every card the view shows: layouts, discard piles, the centre, a drawn card."""
    seen = [card for layout in view.layouts for row in layout for card in row if card]
    seen.extend(card for pile in view.discard_piles for card in pile)
    if view.centre is not None:
        seen.append(view.centre)
    if view.drawn is not None:
        seen.append(view.drawn)
    return seen


class Knowledge:
    """The unseen cards' distribution by rank, and the constants every estimate needs."""

    def __init__(self, view: GridView) -> None:
        rules = view.rules
        self.rules = rules
        self.columns = rules.columns
        self.scoring = rules.scoring
        self.values = VALUES[rules.scoring]
        counts = dict(deck_ranks(rules, view.players))
        for card in seen_cards(view):
            rank = rank_of(card)
            counts[rank] = max(counts.get(rank, 0) - 1, 0)
        total = sum(counts.values()) or 1
        self.odds: dict[str, float] = {r: n / total for r, n in counts.items() if n}
        """The chance that an unseen card is of each rank."""
        self.mean = sum(p * self.values[r] for r, p in self.odds.items())
        self.pair_odds = sum(p * p for p in self.odds.values())
        self.pair_worth = sum(p * p * 2 * self.values[r] for r, p in self.odds.items())
        self.unknown = self.mean + UNKNOWN_BIAS.get(rules.scoring, 0.0)
        """What a face-down card is taken to be worth: it is far likelier to be replaced
        before the hand ends than revealed, so its chance to pair is not counted."""
        self._bonus = _BONUS[rules.scoring]
        self._options: dict[int, float] = {}
        """Basketball: `_option` by worth, worked out when first needed."""
        self._option_scale: float | None = None

    def cost(
        self,
        ranks: Sequence[str | None],
        final: bool = False,
        open_: Collection[int] | None = None,
    ) -> float:
        """The expected score of a layout as a cost: lower is better in every variant.
        `final`: the hand ends before the seat's next turn, every face-down card is revealed
        as it is, so it is worth the unseen cards' mean. `open_` (Basketball): the positions
        still face down, a peeked card's among them (None: the unknown cards only)."""
        if self.scoring == "basketball":
            return -self._basketball(ranks, open_)
        return self._columns(ranks, self.mean if final else self.unknown)

    def _columns(self, ranks: Sequence[str | None], unknown: float) -> float:
        columns, values = self.columns, self.values
        total = 0.0
        pairs: list[str | None] = []
        for col in range(columns):
            top, bottom = ranks[col], ranks[columns + col]
            if top is not None and top == bottom:
                pairs.append(top)
                continue
            pairs.append(None)
            total += unknown if top is None else values[top]
            total += unknown if bottom is None else values[bottom]
        return total + self._bonus(pairs)

    def _option(self, worth: int) -> float:
        """Basketball: what a peeked face-down card now adding `worth` is worth above that,
        as a card a later draw may replace (`BASKETBALL_OPTION`)."""
        options, odds, values = self._options, self.odds, self.values
        if self._option_scale is None:
            spread = sum(
                p * q * max(0, values[a] - values[b])
                for a, p in odds.items()
                for b, q in odds.items()
            )
            self._option_scale = BASKETBALL_OPTION / spread if spread else 0.0
        if worth not in options:
            gain = sum(p * max(0, values[r] - worth) for r, p in odds.items())
            options[worth] = self._option_scale * gain
        return options[worth]

    def _basketball(self, ranks: Sequence[str | None], open_: Collection[int] | None) -> float:
        """Known cards exactly; each unseen card adds what a card of each rank would add to
        the known ones (a single value, or a group grown by one), weighed by its odds; a
        peeked card still face down (in `open_`) its chance to be swapped for a better one."""
        values = self.values
        counts: dict[str, int] = {}
        unknown = 0
        for rank in ranks:
            if rank is None:
                unknown += 1
            else:
                counts[rank] = counts.get(rank, 0) + 1
        total = float(sum(_group_worth(r, n, values[r]) for r, n in counts.items()))
        for at in open_ or ():
            rank = ranks[at]
            if rank is not None:
                n, value = counts[rank], values[rank]
                adds = _group_worth(rank, n, value) - _group_worth(rank, n - 1, value)
                total += self._option(adds)
        if unknown:
            extra = BASKETBALL_UNSEEN_BONUS + sum(
                p
                * (
                    _group_worth(r, counts.get(r, 0) + 1, values[r])
                    - _group_worth(r, counts.get(r, 0), values[r])
                )
                for r, p in self.odds.items()
            )
            total += unknown * extra
        return total


def _group_worth(rank: str, count: int, value: int) -> int:
    if count < 2 or rank in NEVER_GROUP:
        return count * value
    grouped = min(count, 4)
    return BASKETBALL_GROUP[grouped] + (count - grouped) * value


def _runs(pairs: list[str | None]) -> list[int]:
    """Lengths of runs of adjacent columns paired in one rank."""
    runs: list[int] = []
    last = None
    for rank in pairs:
        if rank is not None and rank == last:
            runs[-1] += 1
        elif rank is not None:
            runs.append(1)
        last = rank
    return runs


def _hang_ten(pairs: list[str | None]) -> int:
    return sum(-10 * (k // 2) for k in _runs(pairs))


def _tens(pairs: list[str | None]) -> int:
    return sum(-10 * k for k in _runs(pairs) if k >= 2)


def _golf(pairs: list[str | None]) -> int:
    counts = count_cards(pairs)
    return sum(-10 * (n // 2) for n in counts.values())


def _none(pairs: list[str | None]) -> int:
    return 0


_BONUS = {"hang-ten": _hang_ten, "tens": _tens, "golf": _golf, "basketball": _none}


def ranks_of(view: GridView, seat: int) -> Ranks:
    top, bottom = view.layouts[seat]
    return [None if card is None else rank_of(card) for card in (*top, *bottom)]
