"""Group commit bounds each queued caller's wait by the store's timeout: a caller whose batch
never ends hears `StoreUnavailable`, one answered in time hears its rows and nothing later."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence

import pytest

from events.store.base import PreparedEvent, StoreUnavailable
from events.store.postgres_group import GroupCommit, Outcome, Pending, Rows

pytestmark = pytest.mark.unit

TIMEOUT = 0.2
HANG = 30.0
"""Longer than any test waits: a batch that never ends, for the test's purposes."""


class Database:
    """Commits held until released (`hold`), each append answered with one row."""

    def __init__(self) -> None:
        self.release = asyncio.Event()
        self.together_sizes: list[int] = []

    async def alone(self, stream_id: str, expected: int, prepared: list[PreparedEvent]) -> Rows:
        await asyncio.wait_for(self.release.wait(), HANG)
        return [(expected + 1, 1, b"h")]

    async def together(self, batch: Sequence[Pending]) -> list[Outcome]:
        self.together_sizes.append(len(batch))
        await asyncio.wait_for(self.release.wait(), HANG)
        return [[(p.expected + 1, 1, b"h")] for p in batch]


def _group(db: Database) -> GroupCommit:
    return GroupCommit(db.alone, db.together, lambda size: None, 32, TIMEOUT)


async def test_queued_callers_whose_commit_hangs_give_up_at_the_timeout() -> None:
    db = Database()
    group = _group(db)
    first = asyncio.create_task(group.append("s-1", 0, []))  # goes alone, and hangs
    await asyncio.sleep(0)
    queued = [asyncio.create_task(group.append(f"s-{n}", 0, [])) for n in (2, 3)]
    done, _ = await asyncio.wait(queued, timeout=HANG / 3)
    assert done == set(queued), "a queued caller waited past the store's timeout"
    for task in queued:
        with pytest.raises(StoreUnavailable, match=r"did not answer within 0\.2 s"):
            task.result()
    db.release.set()
    assert await first == [(1, 1, b"h")]  # the lone append's own deadline is the connection's
    await group.close()


async def test_callers_answered_in_time_get_their_rows_and_no_late_failure() -> None:
    db = Database()
    group = _group(db)
    first = asyncio.create_task(group.append("s-1", 0, []))
    await asyncio.sleep(0)
    queued = [asyncio.create_task(group.append(f"s-{n}", 4, [])) for n in (2, 3, 4)]
    await asyncio.sleep(0)
    db.release.set()
    assert await first == [(1, 1, b"h")]
    assert [await task for task in queued] == [[(5, 1, b"h")]] * 3
    assert db.together_sizes == [3]
    await asyncio.sleep(TIMEOUT * 2)  # past every deadline: nothing fails late
    assert all(task.exception() is None for task in queued)
    await group.close()
