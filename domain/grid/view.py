"""The one road from state outward: what a viewer may know, and events as they may see them.

While a hand is live a viewer sees the face-up cards, every discard pile, the centre card,
the stock's size, their own peeked cards and their own card drawn from the stock; after the
hand has ended, every card of it and its seed.
"""

from __future__ import annotations

from typing import Any

import msgspec
from msgspec.structs import replace

from domain.cards import Card
from domain.decider import Phase, Viewer
from domain.grid.layout import ROWS, full_mask, positions
from domain.grid.legal import status
from domain.grid.rules import GridRules
from domain.grid.state import GridState, HandResult
from events.schema.common import HandDealt
from events.schema.grid import CardDrawn, CardsPeeked, LayoutsRevealed

Rows = tuple[tuple[Card | None, ...], ...]


class GridView(msgspec.Struct, frozen=True, tag_field="family", tag="grid"):
    """A grid game (Hang Ten, Tens, Golf, Basketball) as one viewer (a seat, or None for a
    spectator) may know it."""

    rules: GridRules
    viewer: int | None
    players: int
    hand: int
    dealer: int
    phase: Phase
    step: str
    """Where the turn of `to_play` stands: setup, draw, place, flip, finish."""
    to_play: int | None
    to_act: tuple[int, ...]
    layouts: tuple[Rows, ...]
    """Per seat, `[row 0, row 1]`; a card the viewer may not know is None."""
    peeked: tuple[tuple[int, int], ...]
    """The viewer's face-down positions whose cards they know from peeking."""
    discard_piles: tuple[tuple[Card, ...], ...]
    """Bottom to top: one per seat (Hang Ten, Tens) or the shared one (Golf, Basketball)."""
    centre: Card | None
    stock_size: int
    drawn: Card | None
    """The card in the hand of `to_play`: shown to them, and to all if taken from a pile."""
    drawn_from: str | None
    setup_left: tuple[int, ...]
    turns: tuple[int, ...]
    turn_limit: int
    went_out: int | None
    commitment: str | None
    """SHA-256 of the hand's seed, public from the deal on; None before the first deal."""
    seed: str | None
    """None until the hand has ended."""
    totals: tuple[int, ...]
    last_hand: HandResult | None
    winners: tuple[int, ...]


def _rows(layout: tuple[Card, ...], columns: int, shown: int) -> Rows:
    if shown == full_mask(columns):
        return (layout[:columns], layout[columns:])
    known = positions(shown)
    cards: list[Card | None] = [None] * (ROWS * columns)
    for at in known:
        cards[at] = layout[at]
    return (tuple(cards[:columns]), tuple(cards[columns:]))


def view(rules: GridRules, state: GridState, viewer: Viewer) -> GridView:
    if viewer is not None and not 0 <= viewer < state.players:
        viewer = None
    columns, over = rules.columns, state.hand_is_over
    everything = full_mask(columns)
    layouts = []
    for seat, layout in enumerate(state.layouts):
        shown = state.face_up[seat]
        if over:
            shown = everything
        elif seat == viewer:
            shown |= state.peeked[seat]
        layouts.append(_rows(layout, columns, shown))
    peeked: tuple[tuple[int, int], ...] = ()
    if viewer is not None and state.peeked and not over:
        hidden_peeked = state.peeked[viewer] & ~state.face_up[viewer]
        peeked = tuple(divmod(at, columns) for at in positions(hidden_peeked))
    drawn = state.drawn
    if drawn is not None and state.drawn_from == "stock" and viewer != state.to_play:
        drawn = None
    playing = state.phase in ("setup", "playing")
    return GridView(
        rules=rules,
        viewer=viewer,
        players=state.players,
        hand=state.hand,
        dealer=state.dealer,
        phase=state.phase,
        step=state.step if playing else "",
        to_play=state.to_play if playing and state.to_play >= 0 else None,
        to_act=status(rules, state).to_act,
        layouts=tuple(layouts),
        peeked=peeked,
        discard_piles=state.piles,
        centre=state.centre,
        stock_size=state.stock_size,
        drawn=drawn,
        drawn_from=state.drawn_from,
        setup_left=state.setup_left,
        turns=state.turns,
        turn_limit=state.turn_limit,
        went_out=state.went_out,
        commitment=state.commitment or None,
        seed=state.seed if over and state.seed else None,
        totals=state.totals,
        last_hand=state.last_hand,
        winners=state.winners,
    )


def redact(event: Any, viewer: Viewer, hand_over: bool) -> Any:
    """`event` as `viewer` may see it while its hand is live; unchanged once it has ended."""
    if hand_over:
        return event
    match event:
        case HandDealt() if event.seed or event.server_seed:
            return replace(event, seed="", server_seed="")
        case CardDrawn(source="stock") if event.seat != viewer and event.card is not None:
            return replace(event, card=None)
        case CardsPeeked() if event.seat != viewer and event.cards is not None:
            return replace(event, cards=None)
        case LayoutsRevealed() if event.layouts is not None:
            return replace(event, layouts=None)
    return event


class GridTable(msgspec.Struct, frozen=True, tag_field="family", tag="grid"):
    """A grid game with nothing hidden: every card where it lies, the stock in order. Only
    for a hand that is over (replay, audit): no live viewer may ever be shown it."""

    players: int
    hand: int
    dealer: int
    phase: Phase
    step: str
    to_play: int | None
    layouts: tuple[tuple[tuple[Card, ...], ...], ...]
    """Per seat, `[row 0, row 1]`, every card."""
    face_up: tuple[tuple[tuple[bool, ...], ...], ...]
    """Per seat, `[row 0, row 1]`: whether each card lies face up."""
    peeked: tuple[tuple[tuple[bool, ...], ...], ...]
    """Per seat, `[row 0, row 1]`: whether its owner has looked at each card (Basketball)."""
    discard_piles: tuple[tuple[Card, ...], ...]
    centre: Card | None
    stock: tuple[Card, ...]
    """The stock from its top card down."""
    drawn: Card | None
    drawn_from: str | None
    setup_left: tuple[int, ...]
    turns: tuple[int, ...]
    went_out: int | None
    commitment: str | None
    seed: str | None
    totals: tuple[int, ...]
    last_hand: HandResult | None
    winners: tuple[int, ...]


def _mask_rows(mask: int, columns: int) -> tuple[tuple[bool, ...], ...]:
    return tuple(
        tuple(bool(mask >> (row * columns + col) & 1) for col in range(columns))
        for row in range(ROWS)
    )


def table(rules: GridRules, state: GridState) -> GridTable:
    """Everything about `state`: what replay and audit show once a hand is over."""
    columns = rules.columns
    playing = state.phase in ("setup", "playing")
    return GridTable(
        players=state.players,
        hand=state.hand,
        dealer=state.dealer,
        phase=state.phase,
        step=state.step if playing else "",
        to_play=state.to_play if playing and state.to_play >= 0 else None,
        layouts=tuple((lay[:columns], lay[columns:]) for lay in state.layouts),
        face_up=tuple(_mask_rows(mask, columns) for mask in state.face_up),
        peeked=tuple(_mask_rows(mask, columns) for mask in state.peeked),
        discard_piles=state.piles,
        centre=state.centre,
        stock=state.stock[state.top :],
        drawn=state.drawn,
        drawn_from=state.drawn_from,
        setup_left=state.setup_left,
        turns=state.turns,
        went_out=state.went_out,
        commitment=state.commitment or None,
        seed=state.seed or None,
        totals=state.totals,
        last_hand=state.last_hand,
        winners=state.winners,
    )
