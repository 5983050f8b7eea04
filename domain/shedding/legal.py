"""What a seat may do now, as options (events/schema/shedding.py): `decide` accepts every
action a listed option covers, and every action it accepts is covered by a listed option.

A choice of face-up stack cards is one option (any 4 of the 15 cards, in any order); a play
is one option per rank the seat holds (any non-empty combination of its hand cards and
face-up stack cards of that rank); a blind card and ending a play are listed as themselves.
"""

from __future__ import annotations

from domain.cards import Card, rank_order
from domain.shedding.rules import STACKS
from domain.shedding.state import PLAYING, SETUP, Player, SheddingState
from events.schema.shedding import (
    ChooseStacksOption,
    EndPlay,
    PlayBlind,
    PlayOption,
    SheddingOption,
)


def legal_actions(state: SheddingState, seat: int) -> tuple[SheddingOption, ...]:
    round_ = state.round
    if round_ is None or not 0 <= seat < state.players:
        return ()
    player = round_.players[seat]
    if state.phase == SETUP:
        return () if player.chosen else (stack_choice(player),)
    if state.phase != PLAYING or seat != round_.turn:
        return ()
    if round_.open_play is not None:
        adding = play_of_rank(player, round_.open_play.rank)
        return (EndPlay(),) if adding is None else (EndPlay(), adding)
    ranks = {card[0] for card in player.hand}
    ranks.update(card[0] for card in player.face_up if card is not None)
    plays = [play_of_rank(player, rank) for rank in sorted(ranks, key=rank_order)]
    blinds = [PlayBlind(stack) for stack in range(STACKS) if player.uncovered(stack)]
    return (*(play for play in plays if play is not None), *blinds)


def stack_choice(player: Player) -> ChooseStacksOption:
    return ChooseStacksOption(count=STACKS, cards=_sorted(player.hand))


def play_of_rank(player: Player, rank: str) -> PlayOption | None:
    """Every hand card and face-up stack of `rank`; None when the seat has none."""
    hand = tuple(sorted(card for card in player.hand if card[0] == rank))
    stacks = tuple(
        i for i, card in enumerate(player.face_up) if card is not None and card[0] == rank
    )
    return PlayOption(rank, hand, stacks) if hand or stacks else None


def _sorted(cards: tuple[Card, ...]) -> tuple[Card, ...]:
    return tuple(sorted(cards, key=lambda card: (rank_order(card[0]), card[1])))
