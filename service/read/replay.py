"""Replay of a finished hand: each of its events with the whole table after it.

Pure: it takes a game's stored events and folds them with the decider that played them
(`domain.variants.start`), so replay cannot drift from play. Every card is shown, which is
only allowed once the hand is over: a hand still in play is refused whole, never partly
shown. Every event of the hand is a step, the lobby's too (a seat's seed set mid-hand, a
seed chain extended, a seat resigned, a turn played for a seat: the table does not change
at them), so the steps' versions run without a gap; a seed chain's secret is blank
(`projections.replay.shown`). The endpoint (service/http/controllers/audit.py) and the
Redis read model call the same function.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from domain.variants import start
from events.schema import lobby
from events.schema.common import GameStarted, HandDealt, HandEnded
from projections.replay import shown
from service.contract.public import to_public
from service.contract.schemas import HandReplay, ReplayStep


class ReplayRefused(Exception):
    """The hand cannot be replayed: `code` is the problem code (`hand_in_play`,
    `hand_not_found`), `detail` says why."""

    def __init__(self, code: str, detail: str) -> None:
        super().__init__(detail)
        self.code = code
        self.detail = detail


def replay_hand(game_id: str, events: Sequence[tuple[int, Any]], hand: int) -> HandReplay:
    """Hand `hand` of the game whose events are `events` ((version, stored event) from
    version 1 in order, at least through the hand's `hand.ended`). The steps run from the
    hand's `hand.dealt` to the last event before the next deal (the game's `game.ended`
    belongs to the last hand). Raises `ReplayRefused` for a hand not dealt or not over."""
    decider: Any = None
    state: Any = None
    variant = ""
    steps: list[ReplayStep] = []
    over = False
    for version, event in events:
        if isinstance(event, GameStarted):
            decider, state = start(event)
            variant = event.variant
            continue
        if decider is None:
            continue  # the lobby before the game: in no hand
        if isinstance(event, HandDealt) and event.hand > hand:
            break
        if not isinstance(event, lobby.EVENTS):  # the lobby's events are not on the table
            state = decider.evolve(state, event)
        if steps or (isinstance(event, HandDealt) and event.hand == hand):
            steps.append(ReplayStep(version, to_public(shown(event)), decider.table(state)))
        if isinstance(event, HandEnded) and event.hand == hand:
            over = True
    if not steps:
        raise ReplayRefused("hand_not_found", f"game {game_id} has no hand {hand}")
    if not over:
        raise ReplayRefused(
            "hand_in_play", f"hand {hand} of game {game_id} is still in play: it is shown once over"
        )
    return HandReplay(game_id=game_id, hand=hand, variant=variant, steps=steps)  # type: ignore[arg-type]
