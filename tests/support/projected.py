"""Read models as the projector tests look at them: every projection of the catalog built up
to a place in the feed, dumped key for key, and compared with another build.

A place in the feed, not its head: PostgreSQL's feed shows an event only once every
transaction of the cluster older than its own has ended, so on a busy server `feed_head()`
may stand behind appends already made (tests/integration/events/conftest.py,
`settled_checkpoint`, finds a place every earlier append is visible at).
"""

from __future__ import annotations

import asyncio
import contextlib

from events.store import Checkpoint
from projections.base import ProjectionsUnavailable
from projections.catalog import PROJECTIONS
from projections.projector import Projector
from projections.store import ProjectionStore
from service.ops.background import end

CATCH_UP_WITHIN = 120.0
"""Seconds a projector has to apply the feed through a mark: a bound for a broken build (a
projection that stopped), far above what a build here takes; never timed as such."""


async def caught_up(
    pstore: ProjectionStore, mark: Checkpoint, within: float = CATCH_UP_WITHIN
) -> None:
    """Until every projection's live generation has applied the feed through `mark`; fails,
    naming those behind, after `within` seconds."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + within
    behind = [projection.name for projection in PROJECTIONS]
    while True:
        with contextlib.suppress(ProjectionsUnavailable):
            behind = []
            for projection in PROJECTIONS:
                number = await pstore.alias(projection.name)
                meta = None if number is None else await pstore.generation(projection.name, number)
                if meta is None or meta.checkpoint < mark:
                    behind.append(projection.name)
            if not behind:
                return
        assert loop.time() < deadline, f"not caught up with {mark} in {within} s: {behind}"
        await asyncio.sleep(0.05)


async def built_to(projector: Projector, mark: Checkpoint) -> None:
    """Run `projector` until every projection has applied the feed through `mark`."""
    task = asyncio.create_task(projector.run())
    try:
        await caught_up(projector.store, mark)
    finally:
        await end(task)


async def dumps(pstore: ProjectionStore) -> dict[str, dict[str, object]]:
    """Every projection's live generation, key for key."""
    out = {}
    for projection in PROJECTIONS:
        number = await pstore.alias(projection.name)
        assert number is not None, projection.name
        out[projection.name] = dict(await pstore.dump(projection.name, number))
    return out


def differences(found: dict[str, object], expected: dict[str, object]) -> list[object]:
    """The first keys whose values differ, each with what differs (for an index: the
    entries only one side holds)."""
    out: list[object] = []
    for key in sorted(found.keys() | expected.keys()):
        mine, theirs = found.get(key), expected.get(key)
        if mine == theirs:
            continue
        if isinstance(mine, list) and isinstance(theirs, list):
            ours, zero = {tuple(e) for e in mine}, {tuple(e) for e in theirs}
            out.append((key, sorted(ours - zero)[:3], sorted(zero - ours)[:3]))
        else:
            out.append((key, mine, theirs))
    return out[:5]
