"""Deciding a command: the events it causes, or the rule it breaks.

Each action is checked against the rules record, then its events are folded into a scratch
state to see whether the turn, the hand or the game ends with it.
"""

from __future__ import annotations

from typing import Any

from domain.errors import RuleViolation
from domain.grid.evolve import evolve_all
from domain.grid.layout import full_mask, index, on_grid, positions, rows
from domain.grid.moves import (
    face_down,
    has_finish_step,
    has_flip_step,
    may_discard,
    may_peek,
    may_take,
    replaceable,
    setup_choices,
)
from domain.grid.rules import GridRules
from domain.grid.scoring import score_layout
from domain.grid.state import GridState
from domain.shuffle import Stream, hand_seeds
from events.schema.common import Act, DealHand, GameEnded, HandEnded
from events.schema.grid import (
    CardDiscarded,
    CardDrawn,
    CardReplaced,
    CardsPeeked,
    CardTurned,
    Discard,
    Draw,
    EndTurn,
    Flip,
    GoOut,
    LayoutsRevealed,
    Peek,
    PlayerWentOut,
    Replace,
    SetupCardTurned,
    SetupFlip,
    StockReshuffled,
    TurnEnded,
)

Events = tuple[Any, ...]

SETUP_RULE_TEXT = {
    "rows-apart": "one in each row, not in the same column",
    "not-adjacent": "no two orthogonally adjacent",
    "same-column": "both in the same column",
    "any": "any face-down cards",
}


def decide(rules: GridRules, state: GridState, command: Any) -> Events:
    if isinstance(command, DealHand):
        return deal(rules, state, command)
    if isinstance(command, Act):
        return act(rules, state, command.seat, command.action)
    raise RuleViolation("unknown_action", f"{rules.title}: {type(command).__name__} is no command")


def deal(rules: GridRules, state: GridState, command: DealHand) -> Events:
    if state.phase == "game_over":
        raise RuleViolation("game_over", f"{rules.title}: the game is over")
    if state.phase != "awaiting_deal":
        raise RuleViolation("wrong_phase", f"{rules.title}: a hand is in play; it ends first")
    hand = state.hand + 1
    seeds = hand_seeds(command, hand, state.players)
    if hand == 1:
        dealer, _ = Stream(seeds.seed).below(state.players)
    else:
        dealer = (state.dealer + 1) % state.players
    return (seeds.dealt(hand, dealer),)


def act(rules: GridRules, state: GridState, seat: int, action: Any) -> Events:
    if not 0 <= seat < state.players:
        raise RuleViolation("invalid_seat", f"{rules.title}: there is no seat {seat}")
    if state.phase == "game_over":
        raise RuleViolation("game_over", f"{rules.title}: the game is over")
    if state.phase == "awaiting_deal":
        if state.hand == 0:
            raise RuleViolation("game_not_started", f"{rules.title}: no hand has been dealt")
        raise RuleViolation("hand_over", f"{rules.title}: the hand is over; the next is not dealt")
    match action:
        case SetupFlip():
            return _setup_flip(rules, state, seat, action)
        case Peek():
            return _peek(rules, state, seat)
        case Draw():
            return _draw(rules, state, seat, action)
        case Replace():
            return _replace(rules, state, seat, action)
        case Discard():
            return _discard(rules, state, seat)
        case Flip():
            return _flip(rules, state, seat, action)
        case GoOut():
            return _go_out(rules, state, seat)
        case EndTurn():
            return _end_turn(rules, state, seat)
    raise RuleViolation("unknown_action", f"{rules.title}: {type(action).__name__} is no action")


def _setup_flip(rules: GridRules, state: GridState, seat: int, action: SetupFlip) -> Events:
    if rules.setup_flips == 0:
        raise RuleViolation("unknown_action", f"{rules.title}: there are no setup flips")
    if state.setup_left[seat] == 0:
        raise RuleViolation("already_done", f"{rules.title}: your setup flips are done")
    if rules.setup_when == "first-turn" and seat != state.to_play:
        raise RuleViolation(
            "not_your_turn", f"{rules.title}: setup flips start your own first turn"
        )
    at = _position(rules, action.row, action.col)
    if not setup_choices(rules, state, seat) >> at & 1:
        text = SETUP_RULE_TEXT[rules.setup_rule]
        raise RuleViolation(
            "illegal_position",
            f"{rules.title}: setup turns up {rules.setup_flips} face-down cards, {text}",
        )
    card = state.layouts[seat][at]
    return (SetupCardTurned(seat, action.row, action.col, card),)


def _peek(rules: GridRules, state: GridState, seat: int) -> Events:
    row = rules.peek_row
    if row is None:
        raise RuleViolation("unknown_action", f"{rules.title}: there is no peeking")
    if state.peeked[seat]:
        raise RuleViolation("already_done", f"{rules.title}: a player peeks only once")
    if not may_peek(rules, state, seat):
        raise RuleViolation("wrong_phase", f"{rules.title}: the peek comes before your first draw")
    cards = rows(state.layouts[seat], rules.columns)[row]
    return (CardsPeeked(seat, row, tuple(card for card in cards if card is not None)),)


def _draw(rules: GridRules, state: GridState, seat: int, action: Draw) -> Events:
    source = action.source
    if source not in rules.draw_from:
        sources = ", ".join(rules.draw_from)
        raise RuleViolation("card_not_available", f"{rules.title}: cards are drawn from: {sources}")
    if source != "pile" and action.from_seat is not None:
        raise RuleViolation(
            "card_not_available", "only a draw from another player's pile names a seat"
        )
    _on_turn(rules, state, seat, "draw")
    if source == "stock":
        return _draw_from_stock(rules, state, seat)
    if not may_take(rules, state, seat):
        raise RuleViolation(
            "card_not_available",
            f"{rules.title}: a taken card must replace a face-down card, and none is left",
        )
    if source == "centre":
        if state.centre is None:
            raise RuleViolation(
                "card_not_available", f"{rules.title}: the centre card is gone until the next deal"
            )
        return (CardDrawn(seat, "centre", None, state.centre),)
    at = 0 if source == "discard" else action.from_seat
    if at is None or not 0 <= at < state.players:
        raise RuleViolation("card_not_available", f"{rules.title}: name another player's pile")
    if source == "pile" and at == seat:
        raise RuleViolation(
            "card_not_available", f"{rules.title}: never take from your own discard pile"
        )
    pile = state.piles[at]
    if not pile:
        raise RuleViolation("card_not_available", f"{rules.title}: that discard pile is empty")
    return (CardDrawn(seat, source, action.from_seat, pile[-1]),)


def _draw_from_stock(rules: GridRules, state: GridState, seat: int) -> Events:
    if state.stock_size:
        return (CardDrawn(seat, "stock", None, state.stock[state.top]),)
    gathered = sum(max(len(pile) - 1, 0) for pile in state.piles)
    if not gathered:
        return hand_end(rules, state, "stock_exhausted")
    reshuffled = StockReshuffled(gathered)
    after = evolve_all(rules, state, (reshuffled,))
    return (reshuffled, CardDrawn(seat, "stock", None, after.stock[after.top]))


def _replace(rules: GridRules, state: GridState, seat: int, action: Replace) -> Events:
    _on_turn(rules, state, seat, "place")
    at = _position(rules, action.row, action.col)
    if not replaceable(rules, state, seat) >> at & 1:
        raise RuleViolation("illegal_position", f"{rules.title}: a face-up card is never replaced")
    layout, drawn = state.layouts[seat], state.drawn
    assert drawn is not None
    was_face_up = bool(state.face_up[seat] >> at & 1)
    placed = CardReplaced(seat, action.row, action.col, drawn, layout[at], was_face_up)
    return _with_turn_end(rules, state, (placed,))


def _discard(rules: GridRules, state: GridState, seat: int) -> Events:
    if rules.discard_stock_card == "never" and rules.keep_taken_card:
        raise RuleViolation(
            "must_keep_card", f"{rules.title}: the card must be placed; it is never discarded"
        )
    _on_turn(rules, state, seat, "place")
    if not may_discard(rules, state):
        raise RuleViolation(
            "must_keep_card", f"{rules.title}: a card taken from a pile must be kept"
        )
    assert state.drawn is not None
    return _with_turn_end(rules, state, (CardDiscarded(seat, state.drawn),))


def _flip(rules: GridRules, state: GridState, seat: int, action: Flip) -> Events:
    if not has_flip_step(rules):
        raise RuleViolation("unknown_action", f"{rules.title}: no flip follows a discard")
    _on_turn(rules, state, seat, "flip")
    at = _position(rules, action.row, action.col)
    if not face_down(rules, state, seat) >> at & 1:
        raise RuleViolation("illegal_position", f"{rules.title}: that card is face up already")
    card = state.layouts[seat][at]
    return _with_turn_end(rules, state, (CardTurned(seat, action.row, action.col, card),))


def _go_out(rules: GridRules, state: GridState, seat: int) -> Events:
    if not has_finish_step(rules):
        raise RuleViolation("unknown_action", f"{rules.title}: there is no going out by choice")
    _on_turn(rules, state, seat, "finish")
    (at,) = positions(face_down(rules, state, seat))
    row, col = divmod(at, rules.columns)
    card = state.layouts[seat][at]
    return _with_turn_end(rules, state, (CardTurned(seat, row, col, card),))


def _end_turn(rules: GridRules, state: GridState, seat: int) -> Events:
    if not has_finish_step(rules):
        raise RuleViolation("unknown_action", f"{rules.title}: a turn ends by itself")
    _on_turn(rules, state, seat, "finish")
    return turn_end(rules, state)


STEP_TEXT = {
    "draw": "draw a card first",
    "place": "a card has been drawn; place it or discard it",
    "flip": "after the discard, turn a face-down card up",
    "finish": "with one face-down card left, go out or end the turn",
}


def _on_turn(rules: GridRules, state: GridState, seat: int, step: str) -> None:
    if state.phase == "setup":
        raise RuleViolation(
            "setup_incomplete", f"{rules.title}: every player finishes the setup flips first"
        )
    if seat != state.to_play:
        raise RuleViolation("not_your_turn", f"{rules.title}: it is seat {state.to_play}'s turn")
    if state.step == "setup":
        raise RuleViolation(
            "setup_incomplete",
            f"{rules.title}: turn up {state.setup_left[seat]} more card(s) before drawing",
        )
    if state.step != step:
        raise RuleViolation("wrong_phase", f"{rules.title}: {STEP_TEXT[state.step]}")


def _position(rules: GridRules, row: int, col: int) -> int:
    if not on_grid(rules.columns, row, col):
        raise RuleViolation(
            "illegal_position", f"{rules.title}: ({row}, {col}) is not in a 2x{rules.columns} grid"
        )
    return index(rules.columns, row, col)


def _with_turn_end(rules: GridRules, state: GridState, events: Events) -> Events:
    after = evolve_all(rules, state, events)
    return events + turn_end(rules, after) if after.step == "over" else events


def turn_end(rules: GridRules, state: GridState) -> Events:
    """The turn of `to_play` is over: did they go out, and does the hand end with it?"""
    seat, players = state.to_play, state.players
    full = full_mask(rules.columns)
    events: list[Any] = []
    went_out = state.went_out
    if rules.end == "went-out" and went_out is None and state.face_up[seat] == full:
        events.append(PlayerWentOut(seat))
        went_out = seat
    after = (seat + 1) % players
    turns = [*state.turns]
    turns[seat] += 1
    reason = None
    if rules.end == "all-face-up" and all(mask == full for mask in state.face_up):
        reason = "all_face_up"
    elif went_out is not None and after == went_out:
        reason = "went_out"
    elif went_out is None and min(turns) >= state.turn_limit:
        # Once a player is out, the final turns owed to the others are played past the limit.
        reason = "turn_limit"
    events.append(TurnEnded(seat, None if reason else after))
    if reason:
        events.extend(hand_end(rules, state, reason))
    return tuple(events)


def hand_end(rules: GridRules, state: GridState, reason: str) -> Events:
    """Reveal every layout, score it, and end the game too when its end is reached."""
    columns = rules.columns
    scores = tuple(score_layout(rules.scoring, layout, columns).total for layout in state.layouts)
    totals = tuple(total + score for total, score in zip(state.totals, scores, strict=True))
    events: list[Any] = [
        LayoutsRevealed(tuple(rows(layout, columns) for layout in state.layouts)),
        HandEnded(state.hand, reason, state.seed, scores, totals, state.server_seed),
    ]
    hands = state.hands
    beyond = rules.ends_beyond
    if (hands is not None and state.hand >= hands) or (
        beyond is not None and any(abs(total) > beyond for total in totals)
    ):
        best = max(totals) if rules.high_wins else min(totals)
        events.append(GameEnded(totals, tuple(s for s, t in enumerate(totals) if t == best)))
    return tuple(events)
