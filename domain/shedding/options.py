"""Options: a listed choice that stands for a family of concrete actions.

`covers` tells whether a concrete action is one of an option's family (the service and the
tests check actions against the listed options with it); `expand` yields one action per
distinct outcome, for bots that weigh them all; `pick` draws one covered action at random,
any subset and any order, for bots that play at random.
"""

from __future__ import annotations

from collections.abc import Iterator
from itertools import combinations
from typing import Any

from domain.bots.base import Chooser
from domain.shedding.state import contains
from events.schema.shedding import (
    ChooseStacks,
    ChooseStacksOption,
    EndPlay,
    PlayBlind,
    PlayCards,
    PlayOption,
    SheddingAction,
)


def covers(option: Any, action: Any) -> bool:
    """Whether `action` is one of the concrete actions `option` stands for."""
    match option, action:
        case ChooseStacksOption(), ChooseStacks():
            return len(action.cards) == option.count and contains(option.cards, action.cards)
        case PlayOption(), PlayCards():
            stacks = tuple(action.stacks)
            return (
                bool(action.hand or stacks)
                and contains(option.hand, action.hand)
                and len(set(stacks)) == len(stacks)
                and set(stacks) <= set(option.stacks)
            )
        case (PlayBlind(), PlayBlind()) | (EndPlay(), EndPlay()):
            return bool(option == action)
    return False


def expand(option: Any) -> Iterator[SheddingAction]:
    """One covered action per distinct outcome. A play: one per number of hand cards (cards
    of one rank differ only in suit, which changes nothing) and set of stacks. A choice of
    stack cards: one per set of cards (which stack gets which changes nothing anyone can
    know). A concrete action: itself."""
    match option:
        case ChooseStacksOption():
            for cards in dict.fromkeys(combinations(option.cards, option.count)):
                yield ChooseStacks(cards)
        case PlayOption():
            stack_sets = [
                stacks
                for size in range(len(option.stacks) + 1)
                for stacks in combinations(option.stacks, size)
            ]
            for count in range(len(option.hand) + 1):
                for stacks in stack_sets:
                    if count or stacks:
                        yield PlayCards(hand=option.hand[:count], stacks=stacks)
        case _:
            yield option


def pick(option: Any, rng: Chooser) -> SheddingAction:
    """A covered action drawn at random: any subset, in any order. A concrete action: itself."""
    match option:
        case ChooseStacksOption():
            return ChooseStacks(_sample(option.cards, option.count, rng))
        case PlayOption():
            total = len(option.hand) + len(option.stacks)
            size = 1 + rng.randrange(total)
            chosen = _sample(tuple(range(total)), size, rng)
            split = len(option.hand)
            return PlayCards(
                hand=tuple(option.hand[i] for i in chosen if i < split),
                stacks=tuple(option.stacks[i - split] for i in chosen if i >= split),
            )
    return option  # type: ignore[no-any-return]


def _sample(items: tuple[Any, ...], count: int, rng: Chooser) -> tuple[Any, ...]:
    """`count` entries of `items`, in random order (a partial Fisher-Yates)."""
    rest = list(items)
    out = []
    for _ in range(count):
        out.append(rest.pop(rng.randrange(len(rest))))
    return tuple(out)
