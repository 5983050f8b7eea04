"""Folding one event into a new state: one function per event type."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from msgspec.structs import replace

from domain.cards import make_deck
from domain.grid.layout import index, row_mask
from domain.grid.moves import pile_of, step_after_discard, step_after_keeping
from domain.grid.rules import GridRules
from domain.grid.state import GridState, HandResult, put
from domain.shuffle import Stream
from events.schema.common import GameEnded, GameStarted, HandDealt, HandEnded
from events.schema.grid import (
    CardDiscarded,
    CardDrawn,
    CardReplaced,
    CardsPeeked,
    CardTurned,
    LayoutsRevealed,
    PlayerWentOut,
    SetupCardTurned,
    StockReshuffled,
    TurnEnded,
)
from events.schema.lobby import (
    GameRematched,
    SeatResigned,
    SeatSeedSet,
    SeedChainExtended,
    TurnPlayedFor,
)


def hand_dealt(rules: GridRules, state: GridState, event: HandDealt) -> GridState:
    """Re-derive the deck from the seed; deal each layout whole, left of the dealer first."""
    players, size = state.players, 2 * rules.columns
    stream = Stream(bytes.fromhex(event.seed))
    if event.hand == 1:
        _, stream = stream.below(players)
    decks = rules.deck_for(players)
    deck, stream = stream.shuffled(make_deck(decks.decks, decks.jokers))
    layouts: list[tuple[str, ...]] = [()] * players
    for k in range(players):
        seat = (event.dealer + 1 + k) % players
        layouts[seat] = deck[k * size : (k + 1) * size]
    top = players * size
    centre = None
    piles: tuple[tuple[str, ...], ...] = ((),) if rules.piles == "shared" else ((),) * players
    if rules.turn_up == "centre":
        centre, top = deck[top], top + 1
    elif rules.turn_up == "discard":
        piles, top = ((deck[top],),), top + 1
    setup_first = rules.setup_flips > 0 and rules.setup_when == "before-play"
    first = (event.dealer + 1) % players
    return replace(
        state,
        phase="setup" if setup_first else "playing",
        hand=event.hand,
        dealer=event.dealer,
        seed=event.seed,
        commitment=event.commitment,
        server_seed=event.server_seed,
        stream_position=stream.position,
        stock=deck,
        top=top,
        layouts=tuple(layouts),
        face_up=(0,) * players,
        peeked=(0,) * players,
        piles=piles,
        centre=centre,
        setup_left=(rules.setup_flips,) * players,
        to_play=first,
        step="" if setup_first else _opening_step(rules, rules.setup_flips),
        drawn=None,
        drawn_from=None,
        turns=(0,) * players,
        went_out=None,
    )


def _opening_step(rules: GridRules, setup_left: int) -> str:
    return "setup" if rules.setup_when == "first-turn" and setup_left > 0 else "draw"


def setup_card_turned(rules: GridRules, state: GridState, event: SetupCardTurned) -> GridState:
    seat = event.seat
    at = index(rules.columns, event.row, event.col)
    setup_left = put(state.setup_left, seat, state.setup_left[seat] - 1)
    face_up = put(state.face_up, seat, state.face_up[seat] | 1 << at)
    if state.phase == "setup":
        done = not any(setup_left)
        return replace(
            state,
            face_up=face_up,
            setup_left=setup_left,
            phase="playing" if done else "setup",
            step="draw" if done else "",
        )
    return replace(
        state, face_up=face_up, setup_left=setup_left, step=_opening_step(rules, setup_left[seat])
    )


def cards_peeked(rules: GridRules, state: GridState, event: CardsPeeked) -> GridState:
    mask = state.peeked[event.seat] | row_mask(rules.columns, event.row)
    return replace(state, peeked=put(state.peeked, event.seat, mask))


def card_drawn(rules: GridRules, state: GridState, event: CardDrawn) -> GridState:
    match event.source:
        case "stock":
            card = state.stock[state.top]
            return replace(state, top=state.top + 1, drawn=card, drawn_from="stock", step="place")
        case "centre":
            return replace(
                state, centre=None, drawn=state.centre, drawn_from="centre", step="place"
            )
        case _:
            at = 0 if event.source == "discard" or event.from_seat is None else event.from_seat
            pile = state.piles[at]
            return replace(
                state,
                piles=put(state.piles, at, pile[:-1]),
                drawn=pile[-1],
                drawn_from=event.source,
                step="place",
            )


def _onto_pile(
    rules: GridRules, state: GridState, seat: int, card: str
) -> tuple[tuple[str, ...], ...]:
    at = pile_of(rules, seat)
    return put(state.piles, at, (*state.piles[at], card))


def card_replaced(rules: GridRules, state: GridState, event: CardReplaced) -> GridState:
    seat, drawn = event.seat, state.drawn
    assert drawn is not None
    at = index(rules.columns, event.row, event.col)
    layout = state.layouts[seat]
    after = replace(
        state,
        layouts=put(state.layouts, seat, put(layout, at, drawn)),
        face_up=put(state.face_up, seat, state.face_up[seat] | 1 << at),
        piles=_onto_pile(rules, state, seat, layout[at]),
        drawn=None,
    )
    return replace(after, step=step_after_keeping(rules, after, seat), drawn_from=None)


def card_discarded(rules: GridRules, state: GridState, event: CardDiscarded) -> GridState:
    drawn = state.drawn
    assert drawn is not None
    after = replace(state, piles=_onto_pile(rules, state, event.seat, drawn), drawn=None)
    return replace(after, step=step_after_discard(rules, after, event.seat), drawn_from=None)


def card_turned(rules: GridRules, state: GridState, event: CardTurned) -> GridState:
    at = index(rules.columns, event.row, event.col)
    face_up = put(state.face_up, event.seat, state.face_up[event.seat] | 1 << at)
    return replace(state, face_up=face_up, step="over")


def player_went_out(rules: GridRules, state: GridState, event: PlayerWentOut) -> GridState:
    return replace(state, went_out=event.seat)


def turn_ended(rules: GridRules, state: GridState, event: TurnEnded) -> GridState:
    turns = put(state.turns, event.seat, state.turns[event.seat] + 1)
    after = event.next_seat
    if after is None:
        return replace(state, turns=turns, to_play=-1, step="")
    step = _opening_step(rules, state.setup_left[after])
    return replace(state, turns=turns, to_play=after, step=step)


def stock_reshuffled(rules: GridRules, state: GridState, event: StockReshuffled) -> GridState:
    """Every pile but its top card, pile by pile from the bottom, shuffled into a new stock."""
    gathered = [card for pile in state.piles for card in pile[:-1]]
    stream = Stream(bytes.fromhex(state.seed), state.stream_position)
    stock, stream = stream.shuffled(gathered)
    return replace(
        state,
        stock=stock,
        top=0,
        piles=tuple(pile[-1:] for pile in state.piles),
        stream_position=stream.position,
    )


def game_started(rules: GridRules, state: GridState, event: GameStarted) -> GridState:
    """The caller builds the initial state from it; folding it again changes nothing."""
    return state


def layouts_revealed(rules: GridRules, state: GridState, event: LayoutsRevealed) -> GridState:
    return state


def hand_ended(rules: GridRules, state: GridState, event: HandEnded) -> GridState:
    result = HandResult(event.hand, event.reason, event.seed, event.scores, event.totals)
    return replace(
        state,
        phase="awaiting_deal",
        totals=event.totals,
        last_hand=result,
        to_play=-1,
        step="",
        drawn=None,
        drawn_from=None,
    )


def game_ended(rules: GridRules, state: GridState, event: GameEnded) -> GridState:
    return replace(state, phase="game_over", totals=event.totals, winners=event.winners)


def seeds_only(rules: GridRules, state: GridState, event: Any) -> GridState:
    """A seat's seed or a new seed chain: they reach play through the next `DealHand`.
    Also a seat resigning, or the note that the service played a turn for a seat: who
    chooses a seat's actions is not a rule of the game, nor is a finished game's rematch."""
    return state


EVOLVERS: dict[type, Callable[[GridRules, GridState, Any], GridState]] = {
    SeatSeedSet: seeds_only,
    SeedChainExtended: seeds_only,
    SeatResigned: seeds_only,
    TurnPlayedFor: seeds_only,
    GameRematched: seeds_only,
    GameStarted: game_started,
    HandDealt: hand_dealt,
    SetupCardTurned: setup_card_turned,
    CardsPeeked: cards_peeked,
    CardDrawn: card_drawn,
    CardReplaced: card_replaced,
    CardDiscarded: card_discarded,
    CardTurned: card_turned,
    PlayerWentOut: player_went_out,
    TurnEnded: turn_ended,
    StockReshuffled: stock_reshuffled,
    LayoutsRevealed: layouts_revealed,
    HandEnded: hand_ended,
    GameEnded: game_ended,
}


def evolve(rules: GridRules, state: GridState, event: Any) -> GridState:
    try:
        fold = EVOLVERS[type(event)]
    except KeyError:
        raise ValueError(f"a grid game does not fold {type(event).__name__}") from None
    return fold(rules, state, event)


def evolve_all(rules: GridRules, state: GridState, events: Iterable[Any]) -> GridState:
    for event in events:
        state = evolve(rules, state, event)
    return state
