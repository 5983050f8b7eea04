"""The strong Tens-shedding bot: determinized look-ahead from its seat's view alone.

The greedy bot's arithmetic lists what each action does at once; this bot asks what it
leads to. It deals the cards it cannot see at random a few times (`sample`: the deck less
every card its view shows, into the other hands, the face-down stacks and the undealt
rest), and in each such world plays each of its most promising actions, then lets the
other seats play greedily until its own next turn (or the round's end). An action's worth
is the mean, over the worlds, of where that leaves it: the points it still holds, plus a
price per card, against the other seats' mean. The same worlds serve every action, so the
comparison is fair; the choice depends on the view, the legal options and the rng alone.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from domain.bots.base import Chooser
from domain.shedding.decide import decide
from domain.shedding.evolve import evolve
from domain.shedding.greedy import GreedySheddingBot, _worth
from domain.shedding.legal import legal_actions
from domain.shedding.options import expand
from domain.shedding.rules import CARD_VALUES
from domain.shedding.scoring import remaining_cards
from domain.shedding.state import PLAYING, SheddingState
from domain.shedding.strong_sample import sample, unseen
from domain.shedding.view import OpenPlayView, PlayerView, SheddingView
from events.schema.common import Act
from events.schema.shedding import ChooseStacksOption, PlayCards, PlayOption

SAMPLES = 3
"""Worlds dealt per decision."""
KEEP = 8
"""Actions weighed: the greedy bot's favourites, and each low play it would not make."""
CARD_PRICE = 0.0
"""What one more card in hand costs beyond its points: it is one more to shed."""
HORIZON = 24
"""At most this many actions by the others before the worth is read."""

GREEDY = GreedySheddingBot()


class StrongSheddingBot:
    kind = "strong"

    def choose(self, view: Any, legal: Sequence[Any], rng: Chooser) -> Any:
        if not legal:
            raise ValueError("no legal action to choose from")
        if not isinstance(view, SheddingView) or view.viewer is None:
            raise ValueError("the strong bot plays a seat's own Tens-shedding view")
        if any(isinstance(option, ChooseStacksOption) for option in legal):
            return GREEDY.choose(view, legal, rng)
        candidates = shortlist(view, legal)
        if len(candidates) == 1:
            return candidates[0]
        pool = unseen(view)
        seat = view.viewer
        worth = [0.0] * len(candidates)
        for _ in range(SAMPLES):
            world = sample(view, pool, rng)
            for i, action in enumerate(candidates):
                worth[i] += look_ahead(world, seat, action, rng)
        best = min(range(len(candidates)), key=lambda i: (worth[i], i))
        return candidates[best]


def shortlist(view: SheddingView, legal: Sequence[Any]) -> list[Any]:
    """The greedy bot's `KEEP` favourite actions, then the whole play of each rank not
    among them (low plays the greedy bot passes over), in the greedy bot's order."""
    assert view.viewer is not None
    me = view.players[view.viewer]
    actions = [action for option in legal for action in expand(option)]
    ranked = sorted(actions, key=lambda action: -_worth(view, me, action))
    chosen = ranked[:KEEP]
    for option in legal:
        if isinstance(option, PlayOption):
            whole = PlayCards(hand=option.hand, stacks=option.stacks)
            if whole not in chosen:
                chosen.append(whole)
    return chosen


def look_ahead(world: SheddingState, seat: int, action: Any, rng: Chooser) -> float:
    """Play `action` in `world`; then play on greedily, the seat too while the turn stays
    with it (a burn, a pick-up), until its next turn after another seat's; the seat's cost
    there (lower is better)."""
    state = _apply(world, seat, action)
    others_moved = False
    for _ in range(HORIZON):
        round_ = state.round
        if state.phase != PLAYING or round_ is None:
            break
        mover = round_.turn
        if mover == seat and others_moved and round_.open_play is None:
            break
        others_moved = others_moved or mover != seat
        legal = legal_actions(state, mover)
        state = _apply(state, mover, GREEDY.choose(glance(state, mover), legal, rng))
    return cost(state, seat)


def glance(state: SheddingState, seat: int) -> SheddingView:
    """A seat's view with only what the greedy bot reads (the pile, the open play, its own
    face-up cards): the whole `view` would cost more than the greedy choice itself."""
    round_ = state.round
    assert round_ is not None
    open_play = round_.open_play
    return SheddingView(
        viewer=seat,
        phase=state.phase,
        hand=round_.number,
        players=tuple(
            PlayerView(seat=i, total=0, face_up=p.face_up) for i, p in enumerate(round_.players)
        ),
        totals=state.totals,
        pile=round_.pile,
        open_play=None
        if open_play is None
        else OpenPlayView(open_play.seat, open_play.stack, open_play.rank, open_play.rank_before),
    )


def _apply(state: SheddingState, seat: int, action: Any) -> SheddingState:
    for event in decide(state, Act(seat, action)):
        state = evolve(state, event)
    return state


def cost(state: SheddingState, seat: int) -> float:
    """The seat's points and cards against the other seats' mean: the round's scores once
    it has ended."""
    round_ = state.round
    assert round_ is not None
    if round_.ended is not None:
        scores = [float(s) for s in round_.scores]
    else:
        scores = []
        for player in round_.players:
            cards = remaining_cards(player)
            scores.append(sum(CARD_VALUES[c[0]] for c in cards) + CARD_PRICE * len(cards))
    mine = scores[seat]
    others = [s for i, s in enumerate(scores) if i != seat]
    return mine - sum(others) / len(others)
