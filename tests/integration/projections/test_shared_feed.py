"""Runners in step share their feed reads; a page that may have grown is read again."""

from __future__ import annotations

import asyncio
import uuid

import pytest

from events.schema.common import GameStarted
from events.store import START, Checkpoint, EmbeddedStore, NewEvent, RecordedEvent
from projections.feed import SharedFeed

pytestmark = pytest.mark.integration


class Counting:
    """The real store, counting the reads that reach it."""

    def __init__(self, store: EmbeddedStore) -> None:
        self.store = store
        self.reads = 0

    async def read_feed(self, after: Checkpoint = START, limit: int = 1000) -> list[RecordedEvent]:
        self.reads += 1
        return await self.store.read_feed(after, limit)

    async def wait_for_events(self, after: Checkpoint, timeout: float) -> bool:
        return await self.store.wait_for_events(after, timeout)

    async def feed_head(self) -> Checkpoint:
        return await self.store.feed_head()


async def append(store: EmbeddedStore, stream: str, version: int, count: int) -> None:
    events = [NewEvent(uuid.uuid4(), GameStarted("golf", 2)) for _ in range(count)]
    await store.append(stream, version, events)


async def test_readers_of_the_same_page_share_one_read(feed: EmbeddedStore) -> None:
    await append(feed, "game:a", 0, 10)
    counting = Counting(feed)
    shared = SharedFeed(counting)
    pages = await asyncio.gather(*(shared.read_feed(START, 5) for _ in range(4)))
    assert counting.reads == 1
    assert all(page == pages[0] for page in pages)
    assert len(pages[0]) == 5
    again = await shared.read_feed(START, 5)  # a full page, read a moment ago
    assert again == pages[0]
    assert counting.reads == 1


async def test_a_short_page_is_read_again_and_sees_what_was_appended(feed: EmbeddedStore) -> None:
    await append(feed, "game:b", 0, 3)
    counting = Counting(feed)
    shared = SharedFeed(counting)
    assert len(await shared.read_feed(START, 5)) == 3
    await append(feed, "game:b", 3, 4)
    assert len(await shared.read_feed(START, 5)) == 5
    assert counting.reads == 2
    assert await shared.feed_head() == await feed.feed_head()


async def test_runners_caught_up_at_one_checkpoint_share_one_wait(feed: EmbeddedStore) -> None:
    await append(feed, "game:c", 0, 2)
    head = await feed.feed_head()
    waits = 0

    class CountingWaits(Counting):
        async def wait_for_events(self, after: Checkpoint, timeout: float) -> bool:
            nonlocal waits
            waits += 1
            return await self.store.wait_for_events(after, timeout)

    shared = SharedFeed(CountingWaits(feed))
    waiting = [asyncio.create_task(shared.wait_for_events(head, 5.0)) for _ in range(4)]
    await asyncio.sleep(0.05)
    assert not any(task.done() for task in waiting)
    await append(feed, "game:c", 2, 1)
    assert await asyncio.wait_for(asyncio.gather(*waiting), 5.0) == [True] * 4
    assert waits == 1
    # The wait is over: the next one looks again, and times out when nothing comes.
    assert await shared.wait_for_events(await feed.feed_head(), 0.05) is False
    assert waits == 2


async def test_a_failed_shared_wait_fails_every_waiter_and_the_next_one_waits_anew(
    feed: EmbeddedStore,
) -> None:
    class Failing(Counting):
        failures = 1

        async def wait_for_events(self, after: Checkpoint, timeout: float) -> bool:
            if self.failures:
                self.failures -= 1
                await asyncio.sleep(0.01)
                raise ConnectionError("store down")
            return await self.store.wait_for_events(after, timeout)

    await append(feed, "game:d", 0, 1)
    shared = SharedFeed(Failing(feed))
    results = await asyncio.gather(
        *(shared.wait_for_events(START, 1.0) for _ in range(3)), return_exceptions=True
    )
    assert all(isinstance(r, ConnectionError) for r in results)
    assert await shared.wait_for_events(START, 1.0) is True  # START: an event is there
