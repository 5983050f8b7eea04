"""Every action a seat may take now; `decide` accepts each of them.

Cards of one rank and suit-blind value are interchangeable, so a play is listed once per
rank, number of hand cards of that rank, and set of face-up stacks of that rank. A choice
of face-up stack cards is listed once per set of four cards: which stack gets which card
changes nothing anyone can know (the face-down cards are unseen), and `decide` accepts any
order.
"""

from __future__ import annotations

from collections.abc import Iterator
from itertools import combinations

from domain.cards import Card, rank_order
from domain.shedding.rules import STACKS
from domain.shedding.state import PLAYING, SETUP, Player, SheddingState
from events.schema.shedding import ChooseStacks, EndPlay, PlayBlind, PlayCards, SheddingAction


def legal_actions(state: SheddingState, seat: int) -> tuple[SheddingAction, ...]:
    round_ = state.round
    if round_ is None or not 0 <= seat < state.players:
        return ()
    player = round_.players[seat]
    if state.phase == SETUP:
        return () if player.chosen else stack_choices(player.hand)
    if state.phase != PLAYING or seat != round_.turn:
        return ()
    if round_.open_play is not None:
        return (EndPlay(), *plays_of_rank(player, round_.open_play.rank))
    ranks = {card[0] for card in player.hand}
    ranks.update(card[0] for card in player.face_up if card is not None)
    plays = [play for rank in sorted(ranks, key=rank_order) for play in plays_of_rank(player, rank)]
    blinds = [PlayBlind(stack) for stack in range(STACKS) if player.uncovered(stack)]
    return (*plays, *blinds)


def stack_choices(cards: tuple[Card, ...]) -> tuple[SheddingAction, ...]:
    ordered = sorted(cards, key=lambda card: (rank_order(card[0]), card[1]))
    choices = dict.fromkeys(combinations(ordered, STACKS))
    return tuple(ChooseStacks(choice) for choice in choices)


def plays_of_rank(player: Player, rank: str) -> Iterator[PlayCards]:
    hand = sorted(card for card in player.hand if card[0] == rank)
    stacks = [i for i, card in enumerate(player.face_up) if card is not None and card[0] == rank]
    stack_sets = [s for size in range(len(stacks) + 1) for s in combinations(stacks, size)]
    for count in range(len(hand) + 1):
        for chosen in stack_sets:
            if count or chosen:
                yield PlayCards(hand=tuple(hand[:count]), stacks=chosen)
