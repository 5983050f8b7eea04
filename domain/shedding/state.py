"""The state of a Tens-shedding game: immutable values, replaced whole by `evolve`."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Final

import msgspec

from domain.cards import Card
from domain.decider import Phase, Status
from domain.shedding.rules import Rules

AWAITING_DEAL: Final = "awaiting_deal"
SETUP: Final = "setup"
PLAYING: Final = "playing"
GAME_OVER: Final = "game_over"


class Player(msgspec.Struct, frozen=True):
    """One seat's cards this round. During setup `hand` holds all 15 cards to choose from."""

    grab: int
    hand: tuple[Card, ...]
    face_up: tuple[Card | None, ...]
    """One per stack; None before the stacks are chosen and once the card has been played."""
    face_down: tuple[Card | None, ...]
    """One per stack; None once played blind."""
    chosen: bool = False

    def card_count(self) -> int:
        return (
            len(self.hand)
            + sum(card is not None for card in self.face_up)
            + sum(card is not None for card in self.face_down)
        )

    def uncovered(self, stack: int) -> bool:
        return self.face_up[stack] is None and self.face_down[stack] is not None


class OpenPlay(msgspec.Struct, frozen=True):
    """A blind card was turned; its player may still add cards of its rank."""

    seat: int
    stack: int
    rank: str
    rank_before: str | None
    """The current rank before the blind card went down (None: the pile was empty)."""


class Round(msgspec.Struct, frozen=True):
    number: int
    dealer: int
    seed: str
    commitment: str
    first: int
    players: tuple[Player, ...]
    undealt: tuple[Card, ...]
    turn: int
    server_seed: str = ""
    """The round's server seed (`hmac-seat-seeds-v2`); secret while the round is live."""
    pile: tuple[Card, ...] = ()
    burned: tuple[Card, ...] = ()
    open_play: OpenPlay | None = None
    plays: int = 0
    """Completed plays this round, counted against the turn limit."""
    ended: str | None = None
    """Why the round ended (`went_out`, `turn_limit`), None while it is live."""
    scores: tuple[int, ...] = ()


class SheddingState(msgspec.Struct, frozen=True):
    players: int
    rules: Rules
    phase: Phase = AWAITING_DEAL
    totals: tuple[int, ...] = ()
    round: Round | None = None
    winners: tuple[int, ...] = ()


def without(cards: tuple[Card, ...], removed: Iterable[Card]) -> tuple[Card, ...]:
    """`cards` less one copy of each card in `removed` (which must all be there)."""
    rest = list(cards)
    for card in removed:
        rest.remove(card)
    return tuple(rest)


def contains(cards: Iterable[Card], wanted: Iterable[Card]) -> bool:
    """Whether `wanted` is a sub-multiset of `cards`."""
    rest = list(cards)
    for card in wanted:
        if card not in rest:
            return False
        rest.remove(card)
    return True


def set_player(round_: Round, seat: int, player: Player) -> tuple[Player, ...]:
    players = round_.players
    return (*players[:seat], player, *players[seat + 1 :])


def cleared(stacks: tuple[Card | None, ...], indices: Iterable[int]) -> tuple[Card | None, ...]:
    """`stacks` with the cards at `indices` removed."""
    gone = set(indices)
    return tuple(None if i in gone else card for i, card in enumerate(stacks))


def status(state: SheddingState) -> Status:
    round_ = state.round
    to_act: tuple[int, ...] = ()
    if round_ is not None and state.phase == SETUP:
        to_act = tuple(seat for seat, p in enumerate(round_.players) if not p.chosen)
    elif round_ is not None and state.phase == PLAYING:
        to_act = (round_.turn,)
    number = 0 if round_ is None else round_.number
    return Status(state.phase, number, to_act, state.totals, state.winners)
