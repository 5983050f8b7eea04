"""Deciding a command: the events it causes, or the rule it breaks. Never mutates state.

A completed play is followed by exactly one result event (`pile.burned`, `play.passed` or
`pile.picked.up`), unless the player has just gone out: the round ends the moment a player
has no cards, before any result of that play. A play that starts with a blind card stays
open after the card is turned, whatever it is, until the player adds cards of its rank or
ends the play; so nobody learns from it whether they hold that rank.
"""

from __future__ import annotations

from typing import Any

from domain.cards import Card, rank_of
from domain.errors import RuleViolation
from domain.shedding.deal import first_dealer
from domain.shedding.evolve import evolve
from domain.shedding.rules import STACKS, Outcome, after_play, top_rank
from domain.shedding.scoring import game_winners, round_scores
from domain.shedding.state import (
    AWAITING_DEAL,
    GAME_OVER,
    SETUP,
    Player,
    Round,
    SheddingState,
    contains,
)
from domain.shuffle import hand_seeds
from events.schema.common import Act, DealHand, GameEnded, HandEnded
from events.schema.shedding import (
    BlindCardTurned,
    CardsPlayed,
    ChooseStacks,
    EndPlay,
    PileBurned,
    PilePickedUp,
    PlayBlind,
    PlayCards,
    PlayPassed,
    StacksChosen,
)

Events = tuple[Any, ...]


def decide(state: SheddingState, command: Any) -> Events:
    if isinstance(command, DealHand):
        return deal_hand(state, command)
    if isinstance(command, Act):
        return act(state, command.seat, command.action)
    raise RuleViolation("unknown_action", f"tens-shedding has no command {type(command).__name__}")


def deal_hand(state: SheddingState, command: DealHand) -> Events:
    if state.phase == GAME_OVER:
        raise RuleViolation("game_over", "the game has ended: no more rounds are dealt")
    if state.phase != AWAITING_DEAL:
        raise RuleViolation("wrong_phase", "a round is in play: the next is dealt when it ends")
    last = state.round
    number = 1 if last is None else last.number + 1
    seeds = hand_seeds(command, number, state.players)
    if last is None:
        dealer = first_dealer(seeds.seed, state.players)
    else:
        dealer = (last.dealer + 1) % state.players
    return (seeds.dealt(number, dealer),)


def act(state: SheddingState, seat: int, action: Any) -> Events:
    if state.phase == GAME_OVER:
        raise RuleViolation("game_over", "the game has ended")
    if not isinstance(seat, int) or not 0 <= seat < state.players:
        raise RuleViolation("invalid_seat", f"there is no seat {seat} in this game")
    if not isinstance(action, ChooseStacks | PlayCards | PlayBlind | EndPlay):
        raise RuleViolation("unknown_action", "tens-shedding has no such action")
    round_ = state.round
    if round_ is None:
        raise RuleViolation("game_not_started", "no round has been dealt yet")
    if state.phase == AWAITING_DEAL:
        raise RuleViolation("hand_over", "the round has ended; the next has not been dealt")
    if state.phase == SETUP:
        if isinstance(action, ChooseStacks):
            return choose_stacks(round_, seat, action)
        raise RuleViolation("setup_incomplete", "play starts when every player has chosen stacks")
    if isinstance(action, ChooseStacks):
        raise RuleViolation("wrong_phase", "stacks are chosen during setup, before play starts")
    if seat != round_.turn:
        raise RuleViolation("not_your_turn", f"seat {round_.turn} is to play")
    if isinstance(action, PlayCards):
        return play_cards(state, round_, seat, action)
    if isinstance(action, PlayBlind):
        return play_blind(state, round_, seat, action)
    return end_play(state, round_, seat)


def choose_stacks(round_: Round, seat: int, action: ChooseStacks) -> Events:
    player = round_.players[seat]
    if player.chosen:
        raise RuleViolation("already_done", "you have chosen your face-up stack cards already")
    if len(action.cards) != STACKS:
        raise RuleViolation("invalid_play", "choose exactly 4 face-up stack cards")
    if not contains(player.hand, action.cards):
        raise RuleViolation(
            "card_not_available", "face-up stack cards come from your 15 non-stack cards"
        )
    return (StacksChosen(seat, tuple(action.cards)),)


def play_cards(state: SheddingState, round_: Round, seat: int, action: PlayCards) -> Events:
    player = round_.players[seat]
    hand, stacks = tuple(action.hand), tuple(action.stacks)
    if not hand and not stacks:
        raise RuleViolation("invalid_play", "a play puts one or more cards on the pile")
    stack_cards = _face_up_cards(player, stacks)
    if not contains(player.hand, hand):
        raise RuleViolation("card_not_available", "you can play only cards in your hand")
    ranks = {rank_of(card) for card in hand + stack_cards}
    if len(ranks) > 1:
        raise RuleViolation("invalid_play", "the cards of a play are all of a single rank")
    rank = ranks.pop()
    open_play = round_.open_play
    if open_play is not None and rank != open_play.rank:
        raise RuleViolation(
            "invalid_play", f"cards added to the blind card must be of its rank, {open_play.rank}"
        )
    rank_before = open_play.rank_before if open_play else top_rank(round_.pile)
    played = CardsPlayed(seat, hand, stacks, stack_cards)
    return (played, *_complete(evolve(state, played), seat, rank, rank_before))


def _face_up_cards(player: Player, stacks: tuple[int, ...]) -> tuple[Card, ...]:
    if any(not isinstance(s, int) or not 0 <= s < STACKS for s in stacks):
        raise RuleViolation("illegal_position", "stacks are numbered 0 to 3")
    if len(set(stacks)) != len(stacks):
        raise RuleViolation("illegal_position", "each stack can be named once in a play")
    cards = tuple(player.face_up[s] for s in stacks)
    if any(card is None for card in cards):
        raise RuleViolation("card_not_available", "that stack has no face-up card left")
    return tuple(card for card in cards if card is not None)


def play_blind(state: SheddingState, round_: Round, seat: int, action: PlayBlind) -> Events:
    if round_.open_play is not None:
        raise RuleViolation(
            "wrong_phase", "a blind card is turned: add cards of its rank or end the play"
        )
    stack = action.stack
    if not isinstance(stack, int) or not 0 <= stack < STACKS:
        raise RuleViolation("illegal_position", "stacks are numbered 0 to 3")
    player = round_.players[seat]
    card = player.face_down[stack]
    if card is None:
        raise RuleViolation("card_not_available", "that stack's face-down card has been played")
    if player.face_up[stack] is not None:
        raise RuleViolation(
            "illegal_position", "a face-down card is played only once its face-up card is gone"
        )
    turned = BlindCardTurned(seat, stack, card)
    after = evolve(state, turned)
    if _went_out(after, seat):
        return (turned, *_end_round(after, "went_out"))
    return (turned,)


def end_play(state: SheddingState, round_: Round, seat: int) -> Events:
    open_play = round_.open_play
    if open_play is None:
        raise RuleViolation("wrong_phase", "end-play closes a play begun with a blind card")
    return _complete(state, seat, open_play.rank, open_play.rank_before)


def _complete(after: SheddingState, seat: int, rank: str, rank_before: str | None) -> Events:
    """The play is complete: going out, else its result, then the turn limit."""
    if _went_out(after, seat):
        return _end_round(after, "went_out")
    round_ = _round(after)
    pile = round_.pile
    outcome = after_play(rank, rank_before, pile)
    result: Any
    if outcome is Outcome.BURN:
        result = PileBurned(seat, pile)
    elif outcome is Outcome.NEXT_PLAYER:
        result = PlayPassed(seat, (seat + 1) % after.players)
    else:
        result = PilePickedUp(seat, pile)
    if round_.plays + 1 >= after.rules.turn_limit:
        return (result, *_end_round(evolve(after, result), "turn_limit"))
    return (result,)


def _went_out(state: SheddingState, seat: int) -> bool:
    return _round(state).players[seat].card_count() == 0


def _end_round(state: SheddingState, reason: str) -> Events:
    round_ = _round(state)
    scores = round_scores(round_.players)
    totals = tuple(total + s for total, s in zip(state.totals, scores, strict=True))
    ended = HandEnded(round_.number, reason, round_.seed, scores, totals, round_.server_seed)
    winners = game_winners(totals)
    return (ended,) if winners is None else (ended, GameEnded(totals, winners))


def _round(state: SheddingState) -> Round:
    if state.round is None:
        raise ValueError("no round has been dealt")
    return state.round
