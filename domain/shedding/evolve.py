"""Folding one event into a new state: one small function per event type."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from msgspec.structs import replace

from domain.shedding.deal import deal_round
from domain.shedding.rules import top_rank
from domain.shedding.state import (
    AWAITING_DEAL,
    GAME_OVER,
    PLAYING,
    SETUP,
    OpenPlay,
    Round,
    SheddingState,
    cleared,
    set_player,
    without,
)
from events.schema.common import GameEnded, GameStarted, HandDealt, HandEnded
from events.schema.lobby import (
    GameRematched,
    SeatResigned,
    SeatSeedSet,
    SeedChainExtended,
    TurnPlayedFor,
)
from events.schema.shedding import (
    BlindCardTurned,
    CardsPlayed,
    PileBurned,
    PilePickedUp,
    PlayPassed,
    StacksChosen,
)


def _live(state: SheddingState) -> Round:
    if state.round is None:
        raise ValueError("no round has been dealt")
    return state.round


def hand_dealt(state: SheddingState, event: HandDealt) -> SheddingState:
    dealer = None if event.hand == 1 else event.dealer
    deal = deal_round(bytes.fromhex(event.seed), state.players, state.rules, dealer)
    round_ = Round(
        number=event.hand,
        dealer=deal.dealer,
        seed=event.seed,
        commitment=event.commitment,
        first=deal.first,
        players=deal.players,
        undealt=deal.undealt,
        turn=deal.first,
        server_seed=event.server_seed,
    )
    return replace(state, phase=SETUP, round=round_)


def stacks_chosen(state: SheddingState, event: StacksChosen) -> SheddingState:
    round_ = _live(state)
    player = round_.players[event.seat]
    chosen = replace(
        player, hand=without(player.hand, event.cards), face_up=tuple(event.cards), chosen=True
    )
    players = set_player(round_, event.seat, chosen)
    phase = PLAYING if all(p.chosen for p in players) else SETUP
    return replace(state, phase=phase, round=replace(round_, players=players))


def cards_played(state: SheddingState, event: CardsPlayed) -> SheddingState:
    round_ = _live(state)
    player = round_.players[event.seat]
    played = replace(
        player,
        hand=without(player.hand, event.hand) if event.hand else player.hand,
        face_up=cleared(player.face_up, event.stacks) if event.stacks else player.face_up,
    )
    pile = round_.pile + tuple(event.hand) + tuple(event.stack_cards)
    players = set_player(round_, event.seat, played)
    return replace(state, round=replace(round_, players=players, pile=pile))


def blind_card_turned(state: SheddingState, event: BlindCardTurned) -> SheddingState:
    round_ = _live(state)
    player = round_.players[event.seat]
    turned = replace(player, face_down=cleared(player.face_down, (event.stack,)))
    open_play = OpenPlay(event.seat, event.stack, event.card[0], top_rank(round_.pile))
    return replace(
        state,
        round=replace(
            round_,
            players=set_player(round_, event.seat, turned),
            pile=(*round_.pile, event.card),
            open_play=open_play,
        ),
    )


def pile_burned(state: SheddingState, event: PileBurned) -> SheddingState:
    round_ = _live(state)
    burned = round_.burned + round_.pile
    return replace(
        state,
        round=replace(
            round_, pile=(), burned=burned, open_play=None, plays=round_.plays + 1, turn=event.seat
        ),
    )


def pile_picked_up(state: SheddingState, event: PilePickedUp) -> SheddingState:
    round_ = _live(state)
    player = round_.players[event.seat]
    taken = replace(player, hand=player.hand + round_.pile)
    return replace(
        state,
        round=replace(
            round_,
            players=set_player(round_, event.seat, taken),
            pile=(),
            open_play=None,
            plays=round_.plays + 1,
            turn=event.seat,
        ),
    )


def play_passed(state: SheddingState, event: PlayPassed) -> SheddingState:
    round_ = _live(state)
    return replace(
        state, round=replace(round_, open_play=None, plays=round_.plays + 1, turn=event.to)
    )


def hand_ended(state: SheddingState, event: HandEnded) -> SheddingState:
    round_ = replace(_live(state), ended=event.reason, scores=event.scores, open_play=None)
    return replace(state, phase=AWAITING_DEAL, round=round_, totals=event.totals)


def game_ended(state: SheddingState, event: GameEnded) -> SheddingState:
    return replace(state, phase=GAME_OVER, totals=event.totals, winners=event.winners)


def game_started(state: SheddingState, event: GameStarted) -> SheddingState:
    """The caller builds the state from `GameStarted` with `initial_state`."""
    return state


def seeds_only(state: SheddingState, event: Any) -> SheddingState:
    """A seat's seed or a new seed chain: they reach play through the next `DealHand`.
    Also a seat resigning, or the note that the service played a turn for a seat: who
    chooses a seat's actions is not a rule of the game, nor is a finished game's rematch."""
    return state


_FOLDS: dict[type, Callable[[SheddingState, Any], SheddingState]] = {
    SeatSeedSet: seeds_only,
    SeedChainExtended: seeds_only,
    SeatResigned: seeds_only,
    TurnPlayedFor: seeds_only,
    GameRematched: seeds_only,
    GameStarted: game_started,
    HandDealt: hand_dealt,
    StacksChosen: stacks_chosen,
    CardsPlayed: cards_played,
    BlindCardTurned: blind_card_turned,
    PileBurned: pile_burned,
    PilePickedUp: pile_picked_up,
    PlayPassed: play_passed,
    HandEnded: hand_ended,
    GameEnded: game_ended,
}


def evolve(state: SheddingState, event: Any) -> SheddingState:
    fold = _FOLDS.get(type(event))
    if fold is None:
        raise ValueError(f"tens-shedding does not fold {type(event).__name__}")
    return fold(state, event)
