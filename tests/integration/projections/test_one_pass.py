"""The catalog built in one pass over the feed (projections/one_pass.py) is, key for key,
what each projection builds alone; a member that falls out of step goes on alone to the
same end; a gap met in the pass stops every projection as it stops each alone."""

from __future__ import annotations

import contextlib
import sqlite3
from pathlib import Path

import pytest

from events.store import START, EmbeddedStore
from events.store.embedded import FILE_NAME
from projections.catalog import fresh
from projections.one_pass import OnePass
from projections.projector import Projector
from projections.runner import Runner, VersionGap
from projections.store import ProjectionStore
from tests.support.feeds import random_feed, streams_of
from tests.support.played_games import append_interleaved, game_streams

pytestmark = pytest.mark.integration


async def played(feed: EmbeddedStore) -> None:
    """Lobby games and played games of every variant, interleaved."""
    streams = [(s, [e.data for e in ev]) for s, ev in streams_of(random_feed(5, 12)).items()]
    await append_interleaved(feed, streams + game_streams(8, 4), 5, most=7)


async def dumps(store: ProjectionStore, numbers: dict[str, int]) -> dict[str, object]:
    """Every key and value of each projection's generation `numbers[name]`."""
    return {name: await store.dump(name, number) for name, number in numbers.items()}


async def test_the_catalog_built_in_one_pass_is_each_projection_built_alone(
    pstore: ProjectionStore, feed: EmbeddedStore
) -> None:
    await played(feed)
    alone = Projector(fresh(), pstore, feed, batch=64, grace=0)
    each = {p.name: await alone.build(p, None, "requested") for p in alone.projections}
    expected = await dumps(pstore, each)
    assert all(expected.values())
    together = Projector(fresh(), pstore, feed, batch=64, grace=0)
    built = await together.build_many(
        [(p, each[p.name], "requested") for p in together.projections]
    )
    numbers = {
        p.name: n for p, n in zip(together.projections, built, strict=True) if isinstance(n, int)
    }
    assert len(numbers) == len(built)
    assert all(numbers[name] > each[name] for name in each)  # new generations, switched in
    assert {name: await pstore.alias(name) for name in numbers} == numbers
    assert await dumps(pstore, numbers) == expected


async def test_a_member_out_of_step_goes_on_alone_to_the_same_end(
    pstore: ProjectionStore, feed: EmbeddedStore
) -> None:
    await played(feed)
    total = len(await feed.read_feed(START, limit=100_000))
    projections = fresh()
    generations = [await pstore.begin(p.name, p.version) for p in projections]
    runners = [Runner(p, pstore, feed, batch=50) for p in projections]
    ahead = Runner(type(projections[0])(), pstore, feed, batch=50)
    await ahead.step(generations[0].number)  # the lobby's generation moves on without it
    together = OnePass(
        [(r, g.number) for r, g in zip(runners, generations, strict=True)], pstore, feed, 50
    )
    await together.run()
    assert together.pages > 0
    assert runners[0] not in [m.runner for m in together.members]  # it left at once
    for runner, generation in zip(runners, generations, strict=True):
        while await runner.step(generation.number):
            pass
    assert runners[0].applied + ahead.applied == total
    assert all(runner.applied == total for runner in runners[1:])
    reference = fresh()
    for projection, generation in zip(reference, generations, strict=True):
        alone = await pstore.begin(projection.name, projection.version)
        runner = Runner(projection, pstore, feed, batch=50)
        while await runner.step(alone.number):
            pass
        assert await pstore.dump(projection.name, generation.number) == await pstore.dump(
            projection.name, alone.number
        )


async def test_a_gap_met_in_one_pass_stops_every_projection_and_marks_it_failed(
    pstore: ProjectionStore, feed: EmbeddedStore, tmp_path: Path
) -> None:
    await append_interleaved(feed, game_streams(4, 8), 8)
    events = await feed.read_feed(START, limit=100_000)
    victim = events[len(events) // 2]
    assert victim.version > 1
    with contextlib.closing(sqlite3.connect(tmp_path / "events" / FILE_NAME)) as db, db:
        db.execute("DROP TRIGGER events_no_delete")
        db.execute("DELETE FROM events WHERE global_position = ?", (victim.global_position,))
    projector = Projector(fresh(), pstore, feed, grace=0)
    built = await projector.build_many([(p, None, "requested") for p in projector.projections])
    assert all(isinstance(outcome, VersionGap) for outcome in built), built
    for projection, gap in zip(projector.projections, built, strict=True):
        assert isinstance(gap, VersionGap)
        assert projection.name in str(gap)
        assert (gap.stream_id, gap.applied, gap.found) == (
            victim.stream_id,
            victim.version - 1,
            victim.version + 1,
        )
        [number] = await pstore.generations(projection.name)
        meta = await pstore.generation(projection.name, number)
        assert meta is not None
        assert meta.state == "failed"
        assert await pstore.alias(projection.name) is None
