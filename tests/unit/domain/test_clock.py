"""The turn clock in the domain: `due` compares two given times (no clock is read), and
`play_for` makes a legal move chosen on the seat's own view alone."""

from __future__ import annotations

import random
from datetime import UTC, datetime, timedelta
from typing import Any

import msgspec
import pytest

from domain import clock
from domain.decider import Decider
from domain.errors import RuleViolation
from domain.variants import DECIDERS
from events.schema.common import Act, DealHand, GameOptions

pytestmark = pytest.mark.unit

BEGAN = datetime(2026, 11, 23, 12, 0, tzinfo=UTC)


def test_a_turn_is_due_once_its_seconds_have_passed() -> None:
    assert not clock.due(5, BEGAN, BEGAN)
    assert not clock.due(5, BEGAN, BEGAN + timedelta(seconds=4.999))
    assert clock.due(5, BEGAN, BEGAN + timedelta(seconds=5))
    assert clock.due(5, BEGAN, BEGAN + timedelta(days=3))


def test_without_a_clock_no_turn_is_ever_due() -> None:
    assert not clock.due(None, BEGAN, BEGAN + timedelta(days=365))


def test_a_time_before_the_turn_began_is_not_due() -> None:
    """A clock behind the store's (another instance's) never plays early."""
    assert not clock.due(5, BEGAN, BEGAN - timedelta(seconds=60))


def dealt(decider: Decider, players: int, seed: int) -> Any:
    state = decider.initial_state(players, GameOptions())
    for event in decider.decide(state, DealHand(f"{seed:064x}")):
        state = decider.evolve(state, event)
    return state


class Blinded:
    """A decider whose `view` records which seats were looked at, and whose state is
    hidden from the bot: `play_for` may read only the view (and the legal actions)."""

    def __init__(self, decider: Decider) -> None:
        self.inner = decider
        self.name = decider.name
        self.viewed: list[object] = []

    def view(self, state: Any, viewer: Any) -> Any:
        self.viewed.append(viewer)
        return self.inner.view(state, viewer)

    def legal_actions(self, state: Any, seat: int) -> tuple[Any, ...]:
        return self.inner.legal_actions(state, seat)

    def pick(self, option: Any, rng: Any) -> Any:
        return self.inner.pick(option, rng)


@pytest.mark.parametrize("variant", sorted(DECIDERS))
def test_playing_for_a_seat_makes_a_legal_move_from_its_view_to_the_games_end(
    variant: str,
) -> None:
    decider = DECIDERS[variant]
    rng = random.Random(7)
    state = dealt(decider, decider.min_players, 1)
    moves = 0
    while (status := decider.status(state)).phase in ("setup", "playing") and moves < 400:
        seat = status.to_act[0]
        blinded = Blinded(decider)
        action = clock.play_for(blinded, state, seat, rng)  # type: ignore[arg-type]
        assert blinded.viewed == [seat], "only the seat's own view was looked at"
        legal = decider.legal_actions(state, seat)
        assert any(decider.covers(option, action) for option in legal)
        for event in decider.decide(state, Act(seat, action)):  # refused if illegal
            state = decider.evolve(state, event)
        moves += 1
    assert moves > 0


def test_the_same_seed_makes_the_same_move() -> None:
    """Every instance that plays for a seat, seeded alike, makes the same move."""
    decider = DECIDERS["tens-shedding"]
    state = dealt(decider, 2, 3)
    seat = decider.status(state).to_act[0]
    first = clock.play_for(decider, state, seat, random.Random(b"game|5|0"))
    again = clock.play_for(decider, state, seat, random.Random(b"game|5|0"))
    assert msgspec.to_builtins(first) == msgspec.to_builtins(again)


def test_a_seat_with_nothing_to_do_is_refused() -> None:
    decider = DECIDERS["golf"]
    state = dealt(decider, 2, 4)
    status = decider.status(state)
    idle = next((s for s in range(2) if s not in status.to_act), None)
    if idle is None:  # golf's setup is simultaneous: play it, then the turns alternate
        while decider.status(state).phase == "setup":
            seat = decider.status(state).to_act[0]
            action = clock.play_for(decider, state, seat, random.Random(1))
            for event in decider.decide(state, Act(seat, action)):
                state = decider.evolve(state, event)
        idle = next(s for s in range(2) if s not in decider.status(state).to_act)
    with pytest.raises(RuleViolation) as refused:
        clock.play_for(decider, state, idle, random.Random(1))
    assert refused.value.code == "not_your_turn"
