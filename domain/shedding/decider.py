"""`TENS_SHEDDING`: the Tens-shedding rules as one decider (domain.decider.Decider)."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from domain.bots.base import Chooser
from domain.cards import Card, check_in_decks
from domain.decider import Status, Viewer
from domain.shedding.decide import decide
from domain.shedding.evolve import evolve
from domain.shedding.legal import legal_actions
from domain.shedding.options import covers, pick
from domain.shedding.rules import MAX_PLAYERS, MIN_PLAYERS, decks_for, rules_for
from domain.shedding.scoring import RemainingScore, score
from domain.shedding.state import SheddingState, status
from domain.shedding.view import SheddingTable, SheddingView, redact, table, view
from events.schema.common import GameOptions
from events.schema.shedding import SheddingAction, SheddingOption


class TensShedding:
    name = "tens-shedding"
    min_players = MIN_PLAYERS
    max_players = MAX_PLAYERS
    action_type: Any = SheddingAction
    options: tuple[str, ...] = ("turn_limit", "grab_min", "grab_max", "turn_seconds")

    def initial_state(self, players: int, options: GameOptions) -> SheddingState:
        rules = rules_for(players, options)
        return SheddingState(players=players, rules=rules, totals=(0,) * players)

    def decide(self, state: SheddingState, command: Any) -> tuple[Any, ...]:
        return decide(state, command)

    def evolve(self, state: SheddingState, event: Any) -> SheddingState:
        return evolve(state, event)

    def status(self, state: SheddingState) -> Status:
        return status(state)

    def view(self, state: SheddingState, viewer: Viewer) -> SheddingView:
        return view(state, viewer)

    def redact(self, event: Any, viewer: Viewer, hand_over: bool) -> Any:
        return redact(event, viewer, hand_over)

    def table(self, state: SheddingState) -> SheddingTable:
        return table(state)

    def legal_actions(self, state: SheddingState, seat: int) -> tuple[SheddingOption, ...]:
        return legal_actions(state, seat)

    def covers(self, option: SheddingOption, action: SheddingAction) -> bool:
        return covers(option, action)

    def pick(self, option: SheddingOption, rng: Chooser) -> SheddingAction:
        return pick(option, rng)

    def score(self, cards: Iterable[Card]) -> RemainingScore:
        """Score remaining cards; refused: a card the largest deck (ten players: four decks,
        no jokers) cannot hold."""
        cards = tuple(cards)
        check_in_decks(cards, decks_for(MAX_PLAYERS), 0, "Tens-shedding")
        return score(cards)


TENS_SHEDDING = TensShedding()
