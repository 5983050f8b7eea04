"""A greedy bot for the grid games: it sees only its seat's view and the legal actions.

It scores its layout as far as it knows it, a card it cannot see counting as the deck's
average, and takes whichever action improves that estimate most right now.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import cache
from typing import Any

from domain.bots.base import Chooser
from domain.cards import Card, count_cards, make_deck, rank_of
from domain.grid.layout import index
from domain.grid.rules import GridRules
from domain.grid.scoring import VALUES, score_layout
from domain.grid.view import GridView
from events.schema.grid import Discard, Draw, EndTurn, GoOut, Peek, Replace

TAKE_MARGIN = 2
"""Points a visible card must gain over the deck's average before it beats the stock."""


@cache
def average_card(rules: GridRules, players: int) -> int:
    """The mean value of a card of this game's deck, rounded: the worth of an unseen card."""
    size = rules.deck_for(players)
    values = VALUES[rules.scoring]
    counts = count_cards(make_deck(size.decks, size.jokers))
    total = sum(values[rank_of(card)] * n for card, n in counts.items())
    return round(total / sum(counts.values()))


class GreedyGridBot:
    kind = "greedy"

    def choose(self, view: GridView, legal: Sequence[Any], rng: Chooser) -> Any:
        if len(legal) == 1:
            return legal[0]
        if any(isinstance(action, Peek) for action in legal):
            return next(action for action in legal if isinstance(action, Peek))
        if any(isinstance(action, GoOut) for action in legal):
            return self._go_out_or_not(view, legal)
        replaces = [action for action in legal if isinstance(action, Replace)]
        if replaces and view.drawn is not None:
            return self._place(view, view.drawn, replaces, legal)
        draws = [action for action in legal if isinstance(action, Draw)]
        if draws:
            return self._draw(view, draws)
        return legal[rng.randrange(len(legal))]

    def _draw(self, view: GridView, draws: list[Draw]) -> Draw:
        best = next((draw for draw in draws if draw.source == "stock"), draws[0])
        best_gain = TAKE_MARGIN
        spots = _placeable(view)
        for draw in draws:
            card = _visible(view, draw)
            if card is None or not spots:
                continue
            gain = max(_gain(view, card, at) for at in spots)
            if gain > best_gain:
                best, best_gain = draw, gain
        return best

    def _place(
        self, view: GridView, card: Card, replaces: list[Replace], legal: Sequence[Any]
    ) -> Any:
        columns = view.rules.columns
        gains = [(_gain(view, card, index(columns, r.row, r.col)), r) for r in replaces]
        gain, best = max(gains, key=lambda pair: pair[0])
        if gain <= 0:
            return next((action for action in legal if isinstance(action, Discard)), best)
        return best

    def _go_out_or_not(self, view: GridView, legal: Sequence[Any]) -> Any:
        mine = _estimate(view, view.viewer or 0)
        others = [_estimate(view, seat) for seat in range(view.players) if seat != view.viewer]
        going = mine <= min(others) if others else True
        wanted = GoOut if going else EndTurn
        return next(action for action in legal if isinstance(action, wanted))


def _cost(view: GridView, total: int) -> int:
    return -total if view.rules.high_wins else total


def _known(view: GridView, seat: int) -> list[Card | None]:
    top, bottom = view.layouts[seat]
    return [*top, *bottom]


def _estimate(view: GridView, seat: int, cards: Sequence[Card | None] | None = None) -> int:
    rules = view.rules
    layout = _known(view, seat) if cards is None else cards
    total = score_layout(rules.scoring, layout, rules.columns, average_card(rules, view.players))
    return _cost(view, total.total)


def _gain(view: GridView, card: Card, at: int) -> int:
    """How much lower (better) the estimate gets with `card` at `at`."""
    seat = view.viewer or 0
    cards = _known(view, seat)
    before = _estimate(view, seat, cards)
    cards[at] = card
    return before - _estimate(view, seat, cards)


def _placeable(view: GridView) -> list[int]:
    """Where a kept card could go: anywhere, or (Basketball) on a face-down card."""
    cards = _known(view, view.viewer or 0)
    if view.rules.replace == "any":
        return list(range(len(cards)))
    peeked = {index(view.rules.columns, row, col) for row, col in view.peeked}
    return [at for at, card in enumerate(cards) if card is None or at in peeked]


def _visible(view: GridView, draw: Draw) -> Card | None:
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
