"""Who may act now, and every concrete action a seat may take."""

from __future__ import annotations

from functools import cache
from typing import Any

from domain.decider import Status
from domain.grid.layout import ROWS, positions
from domain.grid.moves import (
    face_down,
    may_discard,
    may_peek,
    may_take,
    replaceable,
    setup_choices,
)
from domain.grid.rules import GridRules
from domain.grid.state import GridState
from events.schema.grid import Discard, Draw, EndTurn, Flip, GoOut, Peek, Replace, SetupFlip

PEEK = Peek()
DISCARD = Discard()
GO_OUT = GoOut()
END_TURN = EndTurn()
FROM_STOCK = Draw("stock")
FROM_DISCARD = Draw("discard")
FROM_CENTRE = Draw("centre")


@cache
def _at_positions(
    columns: int,
) -> tuple[tuple[SetupFlip, ...], tuple[Replace, ...], tuple[Flip, ...]]:
    spots = [divmod(i, columns) for i in range(ROWS * columns)]
    return (
        tuple(SetupFlip(r, c) for r, c in spots),
        tuple(Replace(r, c) for r, c in spots),
        tuple(Flip(r, c) for r, c in spots),
    )


@cache
def _from_pile(seat: int) -> Draw:
    return Draw("pile", seat)


def status(rules: GridRules, state: GridState) -> Status:
    phase = state.phase
    if phase == "setup":
        to_act = tuple(seat for seat, left in enumerate(state.setup_left) if left)
    elif phase == "playing":
        first: tuple[int, ...] = () if state.step == "over" else (state.to_play,)
        peekers: tuple[int, ...] = ()
        if rules.peek_row is not None:
            peekers = tuple(
                seat
                for seat in range(state.players)
                if seat != state.to_play and may_peek(rules, state, seat)
            )
        to_act = first + peekers
    else:
        to_act = ()
    return Status(phase, state.hand, to_act, state.totals, state.winners)


def legal_actions(rules: GridRules, state: GridState, seat: int) -> tuple[Any, ...]:
    if state.phase not in ("setup", "playing") or not 0 <= seat < state.players:
        return ()
    setups, replaces, flips = _at_positions(rules.columns)
    actions: list[Any] = []
    if rules.peek_row is not None and may_peek(rules, state, seat):
        actions.append(PEEK)
    if state.phase == "setup" or (seat == state.to_play and state.step == "setup"):
        actions.extend(setups[at] for at in positions(setup_choices(rules, state, seat)))
        return tuple(actions)
    if seat != state.to_play:
        return tuple(actions)
    match state.step:
        case "draw":
            actions.extend(_draws(rules, state, seat))
        case "place":
            actions.extend(replaces[at] for at in positions(replaceable(rules, state, seat)))
            if may_discard(rules, state):
                actions.append(DISCARD)
        case "flip":
            actions.extend(flips[at] for at in positions(face_down(rules, state, seat)))
        case "finish":
            actions += (GO_OUT, END_TURN)
    return tuple(actions)


def _draws(rules: GridRules, state: GridState, seat: int) -> list[Draw]:
    draws = [FROM_STOCK]
    if not may_take(rules, state, seat):
        return draws
    sources = rules.draw_from
    if "discard" in sources and state.piles[0]:
        draws.append(FROM_DISCARD)
    if "centre" in sources and state.centre is not None:
        draws.append(FROM_CENTRE)
    if "pile" in sources:
        draws.extend(
            _from_pile(other) for other, pile in enumerate(state.piles) if pile and other != seat
        )
    return draws
