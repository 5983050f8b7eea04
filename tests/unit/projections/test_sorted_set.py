"""The in-memory store's sorted set (projections/sorted_set.py) against the plainest model of
one: a dict of scores, sorted whenever asked. Chunks of 2 to 4 entries here (`LOAD` = 2), so
that a few dozen changes split chunks, empty them and read across their edges."""

from __future__ import annotations

import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from projections import sorted_set
from projections.sorted_set import SortedSet

MEMBERS = st.sampled_from([f"m{i}" for i in range(40)])
SCORES = st.sampled_from([0.0, 1.0, 1.5, 2.0, -3.0, 7.0])
CHANGES = st.lists(st.tuples(MEMBERS, st.none() | SCORES), max_size=150)
PROBES = st.tuples(SCORES, st.sampled_from(["", "m0", "m5", "m9", "\U0010ffff"]))


@pytest.fixture(autouse=True)
def small_chunks(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sorted_set, "LOAD", 2)


def applied(changes: list[tuple[str, float | None]]) -> tuple[SortedSet, list[tuple[float, str]]]:
    held, model = SortedSet(), {}
    for member, score in changes:
        if score is None:
            held.remove(member)
            model.pop(member, None)
        else:
            held.add(member, score)
            model[member] = score
    return held, sorted((score, member) for member, score in model.items())


LIMITS = st.integers(min_value=1, max_value=15)


@settings(max_examples=400, deadline=None)
@given(CHANGES, PROBES, PROBES, st.booleans(), LIMITS)
def test_it_holds_and_reads_what_a_sorted_model_holds(
    changes: list[tuple[str, float | None]],
    probe: tuple[float, str],
    stop: tuple[float, str],
    strict: bool,
    limit: int,
) -> None:
    held, expected = applied(changes)
    assert list(held) == expected
    assert len(held) == len(expected)
    up = [e for e in expected if (e > probe if strict else e >= probe) and e <= stop]
    assert held.upward(probe, after=strict, stop=stop, limit=limit) == up[:limit]
    down = [e for e in reversed(expected) if (e < probe if strict else e <= probe) and e >= stop]
    assert held.downward(probe, before=strict, stop=stop, limit=limit) == down[:limit]


@pytest.mark.parametrize("seed", range(300))
def test_long_runs_of_changes_read_as_the_model(seed: int) -> None:
    """Seeded runs longer than hypothesis's usual lists: many chunks of every size, read from
    inside one chunk across the next ones."""
    rng = random.Random(seed)
    changes = [
        (f"m{rng.randrange(40)}", None if rng.random() < 0.2 else float(rng.randrange(8)))
        for _ in range(rng.randrange(20, 120))
    ]
    held, expected = applied(changes)
    probe, stop = (float(rng.randrange(8)), rng.choice(["", "m2", "m5"])), (-1.0, "")
    limit, strict = rng.randrange(1, 12), rng.random() < 0.5
    up = [e for e in expected if (e > probe if strict else e >= probe)]
    assert held.upward(probe, after=strict, stop=(9.0, ""), limit=limit) == up[:limit]
    down = [e for e in reversed(expected) if (e < probe if strict else e <= probe)]
    assert held.downward(probe, before=strict, stop=stop, limit=limit) == down[:limit]


def test_a_read_across_chunks_in_both_directions() -> None:
    held = SortedSet()
    for i in range(20):
        held.add(f"m{i:02}", float(i % 4))
    everything = (-1.0, ""), (9.0, "")
    assert held.upward((1.0, ""), after=False, stop=everything[1], limit=3) == [
        (1.0, "m01"), (1.0, "m05"), (1.0, "m09")
    ]  # fmt: skip
    assert held.downward((1.0, "m05"), before=True, stop=everything[0], limit=2) == [
        (1.0, "m01"), (0.0, "m16")
    ]  # fmt: skip
    assert len(held.upward(everything[0], after=False, stop=everything[1], limit=100)) == 20


def test_emptied_it_reads_nothing_and_fills_again() -> None:
    held = SortedSet()
    for i in range(9):
        held.add(f"m{i}", float(i))
    for i in range(9):
        held.remove(f"m{i}")
    assert list(held) == []
    assert held.upward((0.0, ""), after=False, stop=(9.0, ""), limit=5) == []
    assert held.downward((9.0, ""), before=False, stop=(0.0, ""), limit=5) == []
    held.add("again", 1.0)
    assert list(held) == [(1.0, "again")]
