"""Basketball's strong bot plays for the win: behind the leader it pays for variance, ahead
of it it pays to avoid it, judged from face-up cards and face-down counts alone."""

from __future__ import annotations

import pytest
from grid_helpers import given, mask

from domain.grid import BASKETBALL
from domain.grid.strong import Plan

pytestmark = pytest.mark.unit

LOW = "2S 3S 4S 5S 6S / 7S 8S 9S 2H 3H"
"""Seven ranks, 46 points when all face up, no group beyond the pair of 2s and 3s."""
HIGH = "KS KH KD AS AH / QS QH QD JS JH"
"""Kings, aces and two groups: far above any likely layout."""
UP_TOP = mask((0, 0), (0, 1), (0, 2), (0, 3), (0, 4))
"""The top row face up, the bottom row face down."""


def plan(mine: str, theirs: str) -> Plan:
    state = given(
        BASKETBALL,
        4,
        layouts={0: mine, 1: theirs, 2: LOW, 3: LOW},
        face_up={0: UP_TOP, 1: UP_TOP, 2: UP_TOP, 3: UP_TOP},
        to_play=0,
    )
    return Plan(BASKETBALL.view(state, 0))


def test_a_seat_behind_the_leader_values_variance_and_a_seat_ahead_avoids_it() -> None:
    assert plan(LOW, HIGH).risk > 0
    assert plan(HIGH, LOW).risk < 0


def test_behind_an_unseen_card_is_worth_more_than_ahead_for_its_spread_alone() -> None:
    behind, ahead = plan(LOW, HIGH), plan(HIGH, LOW)
    layout = ["2", "3", "4", "5", "6", None, None, None, None, None]
    # The same layout, the same unseen cards: only the standing differs.
    assert behind.know.odds == ahead.know.odds
    assert behind.know.cost(layout) < ahead.know.cost(layout)
