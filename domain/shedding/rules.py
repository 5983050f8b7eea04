"""The numbers and checks of Tens-shedding (RULES.md, "Tens, shedding game")."""

from __future__ import annotations

from collections.abc import Sequence
from enum import Enum

import msgspec

from domain.cards import Card, rank_of, rank_order
from domain.errors import RuleViolation
from events.schema.common import GameOptions

MIN_PLAYERS = 2
MAX_PLAYERS = 10
STACKS = 4
CARDS_EACH = 19
HAND_AFTER_SETUP = 11
EXACT_GRAB = 19
EXACT_GRAB_BONUS = -10
GRAB_MIN = 16
GRAB_MAX = 22
TURN_LIMIT = 2000  # completed plays in a round (a blind card and what it adds is one play)
GAME_TARGET = 100
BURNING_RANK = "T"
BURNING_RUN = 4

CARD_VALUES: dict[str, int] = {
    "A": 1,
    **{str(n): n for n in range(2, 10)},
    "T": 20,
    "J": 11,
    "Q": 12,
    "K": 13,
}


class Rules(msgspec.Struct, frozen=True):
    """A game's options with every default filled in."""

    turn_limit: int = TURN_LIMIT
    grab_min: int = GRAB_MIN
    grab_max: int = GRAB_MAX


def decks_for(players: int) -> int:
    """Enough 52-card decks for 19 cards each: ceil(19 x players / 52)."""
    return -(-CARDS_EACH * players // 52)


def rules_for(players: int, options: GameOptions) -> Rules:
    if not MIN_PLAYERS <= players <= MAX_PLAYERS:
        raise RuleViolation(
            "invalid_config", f"tens-shedding is for {MIN_PLAYERS} to {MAX_PLAYERS} players"
        )
    if options.hands is not None:
        raise RuleViolation(
            "invalid_config", "tens-shedding has no fixed number of rounds: it ends at 100"
        )
    rules = Rules(
        turn_limit=TURN_LIMIT if options.turn_limit is None else options.turn_limit,
        grab_min=GRAB_MIN if options.grab_min is None else options.grab_min,
        grab_max=GRAB_MAX if options.grab_max is None else options.grab_max,
    )
    if not 1 <= rules.grab_min <= rules.grab_max <= 40:
        raise RuleViolation("invalid_config", "the grab range must satisfy 1 <= min <= max <= 40")
    if rules.turn_limit < 1:
        raise RuleViolation("invalid_config", "the turn limit must be at least 1 play")
    return rules


def grab_bonus(grab: int) -> int:
    """A grab of exactly 19 cards is worth -10 this round."""
    return EXACT_GRAB_BONUS if grab == EXACT_GRAB else 0


def first_player(grabs: Sequence[int]) -> int:
    """The grab closest to 19 plays first; ties go to the lowest seat."""
    return min(range(len(grabs)), key=lambda seat: (abs(grabs[seat] - EXACT_GRAB), seat))


def top_rank(pile: Sequence[Card]) -> str | None:
    """The current rank: the rank of the pile's top card, none on an empty pile."""
    return rank_of(pile[-1]) if pile else None


def run_on_top(pile: Sequence[Card], rank: str) -> int:
    """How many consecutive cards of `rank` lie on top of the pile."""
    count = 0
    for card in reversed(pile):
        if card[0] != rank:
            break
        count += 1
    return count


class Outcome(Enum):
    BURN = "burn"
    NEXT_PLAYER = "next_player"
    PICK_UP = "pick_up"


def after_play(played_rank: str, rank_before: str | None, pile_after: Sequence[Card]) -> Outcome:
    """The result of a completed play, checked in the rule's order."""
    if played_rank == BURNING_RANK or run_on_top(pile_after, played_rank) >= BURNING_RUN:
        return Outcome.BURN
    if rank_before is None or rank_order(played_rank) <= rank_order(rank_before):
        return Outcome.NEXT_PLAYER
    return Outcome.PICK_UP
