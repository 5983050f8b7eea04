"""A greedy Tens-shedding bot: it sees only its seat's view and the legal options, and
weighs one action per distinct outcome of each (`expand`).

It scores each action by the play's immediate result: completing four of a rank burns the
pile for free; a play that passes the turn sheds points (high cards first, as many as it
can); a Ten burns a big pile or saves a pick-up; a pick-up is the last resort, made with as
few cards as possible. A blind card is a gamble worth taking before a sure pick-up.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from domain.bots.base import Chooser
from domain.cards import Card
from domain.shedding.options import expand
from domain.shedding.rules import (
    BURNING_RANK,
    CARD_VALUES,
    Outcome,
    after_play,
    top_rank,
)
from domain.shedding.view import PlayerView, SheddingView
from events.schema.shedding import ChooseStacks, EndPlay, PlayBlind, PlayCards

BIG_PILE = 6


class GreedySheddingBot:
    kind = "greedy"

    def choose(self, view: Any, legal: Sequence[Any], rng: Chooser) -> Any:
        if not legal:
            raise ValueError("no legal action to choose from")
        if not isinstance(view, SheddingView) or view.viewer is None:
            raise ValueError("the greedy bot plays a seat's own Tens-shedding view")
        me = view.players[view.viewer]
        actions = (action for option in legal for action in expand(option))
        return max(actions, key=lambda action: _worth(view, me, action))


def _worth(view: SheddingView, me: PlayerView, action: Any) -> float:
    if isinstance(action, ChooseStacks):
        # Face-up cards are public: show high cards, keep Tens out of sight.
        return sum(0 if card[0] == BURNING_RANK else CARD_VALUES[card[0]] for card in action.cards)
    pile = view.pile
    open_play = view.open_play
    rank_before = open_play.rank_before if open_play else top_rank(pile)
    if isinstance(action, PlayBlind):
        return 105.0 if not pile else 0.0
    if isinstance(action, EndPlay):
        if open_play is None:
            return -1000.0
        return _result(open_play.rank, rank_before, pile, ())
    if isinstance(action, PlayCards):
        stack_cards = tuple(card for i in action.stacks if (card := me.face_up[i]) is not None)
        cards = (*action.hand, *stack_cards)
        return _result(cards[0][0], rank_before, pile, cards)
    return -1000.0


def _result(
    rank: str, rank_before: str | None, pile: tuple[Card, ...], cards: tuple[Card, ...]
) -> float:
    shed = sum(CARD_VALUES[card[0]] for card in cards)
    pile_after = pile + cards
    outcome = after_play(rank, rank_before, pile_after)
    if outcome is Outcome.PICK_UP:
        return -100.0 - len(pile_after)
    if outcome is Outcome.BURN and rank != BURNING_RANK:
        return 1000.0 + shed
    if outcome is Outcome.BURN:
        # A Ten: worth it on a big pile; otherwise kept unless the alternative is a pick-up.
        return 500.0 + len(pile) if len(pile) >= BIG_PILE else 50.0 + shed / 10
    return 100.0 + shed
