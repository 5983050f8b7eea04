"""The projector's linger after a wake-up: longer while events keep arriving, bounded, and
none after a lone event (projections/projector.py)."""

from __future__ import annotations

import itertools

import pytest

from projections.memory import MemoryProjectionStore
from projections.projector import LINGER, LINGER_MAX, Projector


class NoFeed:
    """`_next_linger` reads no feed; the projector only holds one."""


def projector(linger: float = LINGER, linger_max: float = LINGER_MAX) -> Projector:
    return Projector([], MemoryProjectionStore(), NoFeed(), linger=linger, linger_max=linger_max)  # type: ignore[arg-type]


def test_the_linger_grows_while_events_keep_arriving_up_to_its_bound() -> None:
    p = projector()
    seen = [LINGER]
    for _ in range(10):
        seen.append(p._next_linger(seen[-1], read=30))
    assert seen[1] == pytest.approx(LINGER * 1.5)
    assert all(a <= b for a, b in itertools.pairwise(seen))
    assert max(seen) == LINGER_MAX
    assert LINGER_MAX <= 0.03  # the lag it adds must stay well inside the 100 ms target


def test_a_lone_event_drops_the_linger_and_a_burst_brings_it_back() -> None:
    p = projector()
    assert p._next_linger(LINGER_MAX, read=1) == 0.0
    assert p._next_linger(LINGER_MAX, read=0) == 0.0
    assert p._next_linger(0.0, read=2) == LINGER  # back to the first linger, not 0 * 1.5


def test_no_linger_configured_means_none_ever() -> None:
    p = projector(linger=0.0)
    assert p._next_linger(0.0, read=500) == 0.0


def test_a_bound_below_the_first_linger_is_raised_to_it() -> None:
    p = projector(linger=0.02, linger_max=0.005)
    assert p._next_linger(0.02, read=50) == 0.02
