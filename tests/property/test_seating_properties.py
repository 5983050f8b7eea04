"""Seating, over random tournaments: every active player is seated once or sits the round
out, tables are full, byes are shared fairly, Swiss follows the standings, the rotation
meets more different opponents than chance, and the same history seats alike."""

from __future__ import annotations

import hashlib
import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from domain.tournament.decide import Withdraw
from domain.tournament.seating import chunks, meetings, random_order, seat_round
from domain.tournament.standings import standings
from tests.support.tournament_runs import Run

pytestmark = pytest.mark.property


@st.composite
def tournaments(
    draw: st.DrawFn, seatings: tuple[str, ...] = ("swiss", "rotation")
) -> tuple[Run, list[list[str]], int]:
    """A tournament set up (not started), the players withdrawing before each round, and a
    seed for the round results."""
    size = draw(st.integers(2, 6))
    players = draw(st.integers(size, 26))
    rounds = draw(st.integers(1, 4))
    seating = draw(st.sampled_from(seatings))
    secret = draw(st.binary(min_size=32, max_size=32))
    run = Run(players, table_size=size, rounds=rounds, seating=seating, secret=secret)
    names = [f"p{i:02}" for i in range(players)]
    leaving = [draw(st.lists(st.sampled_from(names), max_size=2, unique=True))
               for _ in range(rounds)]  # fmt: skip
    return run, leaving, draw(st.integers(0, 2**32))


@settings(max_examples=150, deadline=None)
@given(tournaments())
def test_every_active_player_sits_at_one_full_table_or_takes_a_bye(
    case: tuple[Run, list[list[str]], int],
) -> None:
    run, leaving, seed = case
    rng = random.Random(seed)
    size = run.state.config.table_size
    for gone in leaving:
        for name in gone:
            if not run.state.player(name).withdrawn:  # type: ignore[union-attr]
                run.do(Withdraw(name))
        active = run.state.active()
        if len(active) < size:
            return
        started = run.start()
        seated = [p for table in started.tables for p in table.players]
        assert sorted(seated + list(started.byes)) == sorted(active)
        assert all(len(table.players) == size for table in started.tables)
        assert len(started.byes) == len(active) % size
        # Fair byes: among the active players, bye counts differ by one at most.
        counts = run.state.byes_so_far()
        assert max(counts[p] for p in active) - min(counts[p] for p in active) <= 1
        run.close(rng)


@settings(max_examples=100, deadline=None)
@given(tournaments(seatings=("swiss",)))
def test_swiss_seats_by_the_standings_and_gives_byes_to_the_lowest_ranked(
    case: tuple[Run, list[list[str]], int],
) -> None:
    run, _, seed = case
    rng = random.Random(seed)
    for number in range(1, run.state.config.rounds + 1):
        before = run.state
        started = run.start()
        if number > 1:
            rows = standings([p.name for p in before.players], before.results(), False)
            ranked = [row.player for row in rows]
            seated = [p for table in started.tables for p in table.players]
            assert seated == [p for p in ranked if p not in started.byes]
            counts = before.byes_so_far()
            fewest = min(counts.values())
            eligible = [p for p in ranked if counts[p] == fewest]
            if len(started.byes) <= len(eligible):
                assert set(started.byes) == set(eligible[len(eligible) - len(started.byes) :])
        run.close(rng)


@pytest.mark.parametrize("which", range(6))
def test_the_rotation_meets_more_different_opponents_than_random_seating(which: int) -> None:
    secret = hashlib.sha256(bytes([which])).digest()
    run = Run(16, table_size=4, rounds=5, seating="rotation", secret=secret)
    rng = random.Random(which)
    chance: set[tuple[str, str]] = set()
    for number in range(1, 6):
        run.start()
        run.close(rng)
        order = random_order(run.state.active(), run.state.chain().server_seed(number), number)
        for table in chunks(order, 4):
            chance |= {(a, b) for a in table for b in table if a < b}
    met = meetings(run.state)
    assert len(met) > len(chance) + 10, "the rotation meets clearly more opponents"


@settings(max_examples=50, deadline=None)
@given(tournaments())
def test_the_same_history_and_seed_seat_the_same(case: tuple[Run, list[list[str]], int]) -> None:
    run, _, seed = case
    rng = random.Random(seed)
    for number in range(1, run.state.config.rounds + 1):
        x_r = run.state.chain().server_seed(number)
        assert seat_round(run.state, x_r) == seat_round(run.state, x_r)
        run.start()
        run.close(rng)


def test_round_one_is_the_shuffle_of_the_names_with_the_last_on_a_bye() -> None:
    run = Run(10, table_size=4)
    x_1 = run.state.chain().server_seed(1)
    order = random_order(run.state.active(), x_1, 1)
    started = run.start()
    assert [p for table in started.tables for p in table.players] == list(order[:8])
    assert started.byes == tuple(sorted(order[8:]))
