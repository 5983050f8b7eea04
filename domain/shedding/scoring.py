"""Scoring a round: remaining cards by value, the grab bonus, and the game's end at 100."""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import msgspec

from domain.cards import Card, is_card, rank_of, rank_order
from domain.errors import RuleViolation
from domain.shedding.rules import CARD_VALUES, GAME_TARGET, grab_bonus
from domain.shedding.state import Player


class ScoreLine(msgspec.Struct, frozen=True):
    """`count` cards of `rank`, each worth `value`: `points` in all."""

    rank: str
    value: int
    count: int
    points: int


class RemainingScore(msgspec.Struct, frozen=True, tag_field="family", tag="shedding"):
    """The penalty for a player's remaining cards, rank by rank (A low to K high). Tagged by
    `family`, as the views are, so a client tells it from a grid's `LayoutScore`."""

    total: int
    breakdown: tuple[ScoreLine, ...]


def score(cards: Iterable[Card]) -> RemainingScore:
    """A 1, 2-9 face value, J 11, Q 12, K 13, T 20."""
    counts: dict[str, int] = {}
    for card in cards:
        rank = rank_of(card)
        if rank not in CARD_VALUES or not is_card(card):
            raise RuleViolation("card_not_available", f"{card!r} is not a tens-shedding card")
        counts[rank] = counts.get(rank, 0) + 1
    lines = tuple(
        ScoreLine(rank, CARD_VALUES[rank], count, CARD_VALUES[rank] * count)
        for rank, count in sorted(counts.items(), key=lambda item: rank_order(item[0]))
    )
    return RemainingScore(sum(line.points for line in lines), lines)


def remaining_cards(player: Player) -> tuple[Card, ...]:
    """Hand, face-up and face-down stack cards: everything that scores against a player."""
    stacks = tuple(card for card in (*player.face_up, *player.face_down) if card is not None)
    return player.hand + stacks


def round_scores(players: Sequence[Player]) -> tuple[int, ...]:
    """A player with no cards scores 0, the others their remaining cards; grab bonuses to all."""
    return tuple(score(remaining_cards(p)).total + grab_bonus(p.grab) for p in players)


def game_winners(totals: Sequence[int]) -> tuple[int, ...] | None:
    """None while no total has reached 100; then every seat sharing the lowest total."""
    if max(totals) < GAME_TARGET:
        return None
    best = min(totals)
    return tuple(seat for seat, total in enumerate(totals) if total == best)
