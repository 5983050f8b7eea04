"""Givens for the grid rulebook tests: deal a hand, then lay out the cards a rule needs."""

from __future__ import annotations

from typing import Any

import msgspec
import pytest
from msgspec.structs import replace

from domain.errors import RuleViolation
from domain.grid import GridGame, GridState
from events.schema.common import Act, DealHand, GameOptions

SEED = "00" * 31 + "01"
SEED_2 = "00" * 31 + "02"


def seed(n: int) -> str:
    return f"{n:064x}"


def fold(game: GridGame, state: GridState, events: tuple[Any, ...]) -> GridState:
    for event in events:
        state = game.evolve(state, event)
    return state


def started(game: GridGame, players: int, **options: Any) -> GridState:
    return game.initial_state(players, GameOptions(**options))


def dealt(game: GridGame, players: int, hand_seed: str = SEED, **options: Any) -> GridState:
    state = started(game, players, **options)
    return fold(game, state, game.decide(state, DealHand(hand_seed)))


def cards(text: str) -> tuple[str, ...]:
    """`"AS 2S 3S 4S 5S / 6S 7S 8S 9S TS"`: a layout, row 0 then row 1."""
    return tuple(text.replace("/", " ").split())


def mask(*spots: tuple[int, int], columns: int = 5) -> int:
    return sum(1 << (row * columns + col) for row, col in spots)


def all_up(columns: int = 5) -> int:
    return (1 << (2 * columns)) - 1


def given(
    game: GridGame,
    players: int,
    *,
    layouts: dict[int, str] | None = None,
    face_up: dict[int, int] | None = None,
    stock: str | None = None,
    piles: dict[int, str] | None = None,
    to_play: int | None = None,
    options: dict[str, Any] | None = None,
    **changes: Any,
) -> GridState:
    """A dealt hand in play (setup done unless said otherwise), with the cards laid as given."""
    state = dealt(game, players, **(options or {}))
    first_turn_setup = game.rules.setup_when == "first-turn"
    state = replace(
        state,
        phase="playing",
        step="setup" if first_turn_setup and game.rules.setup_flips else "draw",
        setup_left=state.setup_left if first_turn_setup else (0,) * players,
    )
    if layouts:
        state = replace(
            state,
            layouts=tuple(
                cards(layouts[seat]) if seat in layouts else layout
                for seat, layout in enumerate(state.layouts)
            ),
        )
    if face_up:
        state = replace(
            state, face_up=tuple(face_up.get(s, m) for s, m in enumerate(state.face_up))
        )
    if stock is not None:
        state = replace(state, stock=cards(stock), top=0)
    if piles:
        state = replace(
            state, piles=tuple(cards(piles.get(i, " ".join(p))) for i, p in enumerate(state.piles))
        )
    if to_play is not None:
        state = replace(state, to_play=to_play)
    return replace(state, **changes)


def act(game: GridGame, state: GridState, seat: int, *actions: Any) -> tuple[GridState, list[Any]]:
    """Each action by `seat` in turn; the state after them and all the events."""
    events: list[Any] = []
    for action in actions:
        new = game.decide(state, Act(seat, action))
        events.extend(new)
        state = fold(game, state, new)
    return state, events


def rejects(game: GridGame, state: GridState, command: Any, code: str) -> RuleViolation:
    """`command` is refused with `code`, and the state is unchanged."""
    before = msgspec.json.encode(state)
    if not isinstance(command, (Act, DealHand)):
        raise TypeError("pass an Act or a DealHand")
    with pytest.raises(RuleViolation) as caught:
        game.decide(state, command)
    assert caught.value.code == code, caught.value.message
    assert msgspec.json.encode(state) == before
    assert command not in [Act(command.seat, a) for a in _legal(game, state, command)]
    return caught.value


def _legal(game: GridGame, state: GridState, command: Any) -> tuple[Any, ...]:
    return game.legal_actions(state, command.seat) if isinstance(command, Act) else ()


def types(events: list[Any] | tuple[Any, ...]) -> list[str]:
    return [type(event).__name__ for event in events]


def first_legal_until(game: GridGame, state: GridState, phases: tuple[str, ...]) -> GridState:
    """Play the first legal action of the first seat to act until the phase is one of
    `phases` (a deterministic, quick way through a hand with a small turn limit)."""
    from events.schema.common import DealHand as Deal

    hand = 0
    while game.status(state).phase not in phases:
        status = game.status(state)
        if status.phase == "awaiting_deal":
            hand += 1
            command: Any = Deal(seed(1000 + status.hand))
        else:
            seat = status.to_act[0]
            command = Act(seat, game.legal_actions(state, seat)[0])
        state = fold(game, state, game.decide(state, command))
    return state
