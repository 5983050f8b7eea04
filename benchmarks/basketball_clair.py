"""The informed policies `basketball_bound.py` measures: greedy play with perfect information
(its own face-down cards and the stock's next card), with its own cards only, and the strong
bot told the stock's next card; with the helpers they share. Benchmark only: nothing here is
reachable from the service."""

from __future__ import annotations

import statistics
from typing import Any

from domain.cards import rank_of
from domain.grid.game import BASKETBALL
from domain.grid.greedy import GreedyGridBot
from domain.grid.layout import index
from domain.grid.moves import face_down
from domain.grid.scoring import score_basketball
from domain.grid.state import GridState
from domain.grid.strong import Plan, StrongGridBot
from events.schema.common import Act
from events.schema.grid import CardDrawn, Discard, Draw, Peek, Replace

GAME = BASKETBALL
RULES = GAME.rules
COLUMNS = RULES.columns
GREEDY = GreedyGridBot()
STRONG = StrongGridBot()


def score(cards: list[str]) -> int:
    return score_basketball(cards, COLUMNS).total


def hidden_positions(state: GridState, seat: int) -> list[int]:
    mask = face_down(RULES, state, seat)
    return [at for at in range(2 * COLUMNS) if mask >> at & 1]


def gain(layout: list[str], at: int, card: str) -> int:
    was = layout[at]
    before = score(layout)
    layout[at] = card
    after = score(layout)
    layout[at] = was
    return after - before


def best_spot(state: GridState, seat: int, card: str) -> tuple[int, int | None]:
    """The most a card adds to the seat's exact score, and where."""
    layout = list(state.layouts[seat])
    best, where = -1_000, None
    for at in hidden_positions(state, seat):
        g = gain(layout, at, card)
        if g > best:
            best, where = g, at
    return best, where


def stock_card(state: GridState, seat: int) -> str | None:
    """The card a draw from the stock would give, reshuffle included."""
    events = GAME.decide(state, Act(seat, Draw("stock")))
    return next((e.card for e in events if isinstance(e, CardDrawn)), None)


def at_action(kind: type, at: int) -> Any:
    row, col = divmod(at, COLUMNS)
    return kind(row, col)


def clair_greedy(state: GridState, seat: int, legal: tuple[Any, ...]) -> Any:
    """Greedy on the exact score, knowing its own cards and the stock's next card."""
    if len(legal) == 1:
        return legal[0]
    if Peek() in legal:
        return Peek()
    step = state.step
    if step == "draw":
        from_stock = stock_card(state, seat)
        stock_gain = max(best_spot(state, seat, from_stock)[0], 0) if from_stock else -1
        pile = state.piles[0]
        taken = pile and Draw("discard") in legal
        if taken and best_spot(state, seat, pile[-1])[0] > stock_gain:
            return Draw("discard")
        return Draw("stock")
    if step == "place":
        assert state.drawn is not None
        g, where = best_spot(state, seat, state.drawn)
        if Discard() in legal and (g <= 0 or where is None):
            return Discard()
        assert where is not None
        return at_action(Replace, where)
    if step == "flip":
        layout = list(state.layouts[seat])
        total = score(layout)
        best, keep = legal[0], -1_000
        for action in legal:
            at = index(COLUMNS, action.row, action.col)
            was = layout[at]
            layout[at] = "JK"  # worth nothing, groups with nothing: what losing this card costs
            loss = total - score(layout)
            layout[at] = was
            if loss > keep:
                best, keep = action, loss
        return best
    return legal[0]


def unseen_by(state: GridState, seat: int) -> list[str]:
    """The cards a seat that knows its own layout still cannot see: the stock and the other
    seats' face-down cards (the drawn card, if any, is the seat's own)."""
    cards = list(state.stock[state.top :])
    for other in range(state.players):
        if other != seat:
            cards.extend(state.layouts[other][at] for at in hidden_positions(state, other))
    return cards


def clair_own(state: GridState, seat: int, legal: tuple[Any, ...]) -> Any:
    """`clair_greedy` knowing its own cards but not the stock: a stock draw is worth the
    mean over the cards it cannot see of the best use of each."""
    if state.step != "draw" or Draw("discard") not in legal:
        return clair_greedy(state, seat, legal)
    unseen = unseen_by(state, seat)
    if not unseen:  # the stock is to be reshuffled from the pile: public cards only
        return clair_greedy(state, seat, legal)
    stock_gain = statistics.fmean(max(best_spot(state, seat, c)[0], 0) for c in unseen)
    if best_spot(state, seat, state.piles[0][-1])[0] > stock_gain:
        return Draw("discard")
    return Draw("stock")


def strong_stock(
    state: GridState, seat: int, legal: tuple[Any, ...], rng: Any, look: bool = False
) -> Any:
    """The strong bot from its view, but told the card the stock will give at the draw;
    `look`: both cards priced with the look-ahead it uses when placing."""
    view = GAME.view(state, seat)
    if state.step != "draw" or Draw("discard") not in legal:
        return STRONG.choose(view, legal, rng)
    plan = Plan(view)
    plan.looking = look
    card = stock_card(state, seat)
    stock = plan.best_with(rank_of(card), True) if card else float("inf")
    return (
        Draw("discard")
        if plan.best_with(rank_of(state.piles[0][-1]), False) < stock
        else Draw("stock")
    )
