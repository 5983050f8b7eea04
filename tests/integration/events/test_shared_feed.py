"""One process's consumers of the feed share their reads and their waits (events/feed.py):
a page that may have grown is read again; each waiter keeps its own timeout and linger; a
wait nobody waits on is given up; a failure reaches every consumer that joined."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from events.feed import SharedFeed
from events.schema.common import GameStarted
from events.store import START, Checkpoint, EmbeddedStore, NewEvent, RecordedEvent

pytestmark = pytest.mark.integration


@pytest.fixture
async def feed(tmp_path: Path) -> AsyncIterator[EmbeddedStore]:
    store = await EmbeddedStore.open(tmp_path / "events", poll_interval=0.05)
    yield store
    await store.close()


class Counting:
    """The real store, counting the reads that reach it."""

    def __init__(self, store: EmbeddedStore) -> None:
        self.store = store
        self.reads = 0
        self.waits = 0
        self.waits_given_up = 0

    async def read_feed(self, after: Checkpoint = START, limit: int = 1000) -> list[RecordedEvent]:
        self.reads += 1
        return await self.store.read_feed(after, limit)

    async def wait_for_events(self, after: Checkpoint, timeout: float) -> bool:
        self.waits += 1
        try:
            return await self.store.wait_for_events(after, timeout)
        except asyncio.CancelledError:
            self.waits_given_up += 1
            raise

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


async def test_a_read_in_flight_serves_a_smaller_page_after_the_same_checkpoint(
    feed: EmbeddedStore,
) -> None:
    """The referee's page is not the projector's: one read serves both, cut to each."""
    await append(feed, "game:e", 0, 6)
    counting = Counting(feed)
    shared = SharedFeed(counting)
    big, small = await asyncio.gather(shared.read_feed(START, 1000), shared.read_feed(START, 4))
    assert counting.reads == 1
    assert len(big) == 6
    assert small == big[:4]


async def test_each_waiter_keeps_its_own_timeout(feed: EmbeddedStore) -> None:
    """A consumer due to look again soon (the referee's next deadline) is not held to the
    longer wait it joined, nor cut short by a shorter one."""
    await append(feed, "game:f", 0, 1)
    head = await feed.feed_head()
    counting = Counting(feed)
    shared = SharedFeed(counting)
    long = asyncio.create_task(shared.wait_for_events(head, 60.0))
    await asyncio.sleep(0.01)
    assert await asyncio.wait_for(shared.wait_for_events(head, 0.05), 30) is False
    assert not long.done()
    short = asyncio.create_task(shared.wait_for_events(head, 0.05))
    longer = asyncio.create_task(shared.wait_for_events(head, 60.0))
    assert await asyncio.wait_for(short, 30) is False
    await asyncio.sleep(0.1)
    assert not longer.done()
    await append(feed, "game:f", 1, 1)
    assert await asyncio.wait_for(asyncio.gather(long, longer), 30) == [True, True]
    assert counting.waits == 1


async def test_a_waiter_late_to_a_wake_up_finds_it_without_asking_again(
    feed: EmbeddedStore,
) -> None:
    await append(feed, "game:g", 0, 1)
    head = await feed.feed_head()
    counting = Counting(feed)
    shared = SharedFeed(counting)
    first = asyncio.create_task(shared.wait_for_events(head, 30.0))
    await asyncio.sleep(0.01)
    await append(feed, "game:g", 1, 1)
    assert await asyncio.wait_for(first, 30) is True
    assert await shared.wait_for_events(head, 30.0) is True  # late: the news stands
    assert counting.waits == 1


async def test_a_wait_nobody_waits_on_any_more_is_given_up(feed: EmbeddedStore) -> None:
    """A follower woken by something the feed does not show leaves its wait; the last one
    to leave stops the wait beneath (it would poll the store until its timeout)."""
    head = await feed.feed_head()
    counting = Counting(feed)
    shared = SharedFeed(counting)
    waiting = [asyncio.create_task(shared.wait_for_events(head, 60.0)) for _ in range(2)]
    await asyncio.sleep(0.05)
    waiting[0].cancel()
    await asyncio.sleep(0.05)
    assert counting.waits_given_up == 0  # one still waits
    waiting[1].cancel()
    await asyncio.gather(*waiting, return_exceptions=True)
    async with asyncio.timeout(30):
        while counting.waits_given_up == 0:
            await asyncio.sleep(0.01)
    assert counting.waits == 1


async def test_the_head_is_never_behind_an_event_read_before_asking(feed: EmbeddedStore) -> None:
    """The projector takes a head behind its generation's checkpoint for a feed that went
    back, and rebuilds: a head asked a moment earlier must not answer for a later one (a
    head shared for 0.1 s did, on an unmerged branch)."""
    await append(feed, "game:h", 0, 1)
    shared = SharedFeed(feed)
    before = await shared.source_head()
    await append(feed, "game:h", 1, 1)
    [*_, last] = await shared.read_feed(before)
    assert await shared.source_head() >= last.checkpoint


async def test_after_a_read_that_reached_the_end_the_next_look_waits_for_the_pace(
    feed: EmbeddedStore,
) -> None:
    """Under a steady stream of appends the consumers read once per pace, not once per
    append: a wait after a read that found events and reached the feed's end does not look
    before the pace has passed; then it looks, and finds what was appended meanwhile."""
    await append(feed, "game:i", 0, 1)
    await append(feed, "game:i2", 0, 1)
    counting = Counting(feed)
    shared = SharedFeed(counting, pace=2.0)
    [_, last] = await shared.read_feed(START, 5)
    waiting = [asyncio.create_task(shared.wait_for_events(last.checkpoint, 30.0)) for _ in range(3)]
    await append(feed, "game:i", 1, 1)
    await asyncio.sleep(0.05)
    assert counting.waits == 0
    assert not any(task.done() for task in waiting)
    assert await asyncio.wait_for(asyncio.gather(*waiting), 30) == [True] * 3
    assert counting.waits == 1  # one look for the three, after the pace


async def test_one_games_events_or_a_full_page_are_not_paced(feed: EmbeddedStore) -> None:
    """Nothing is held back after a quiet spell (the last read found nothing), after a read
    of one stream's events alone (a lone action; the referee reading back the turn it has
    just played, to play the next), or while catching up (a page cut to its limit)."""
    counting = Counting(feed)
    shared = SharedFeed(counting, pace=60.0)
    assert await shared.read_feed(START, 5) == []
    waiting = asyncio.create_task(shared.wait_for_events(START, 30.0))
    await asyncio.sleep(0.01)
    await append(feed, "game:j", 0, 2)
    assert await asyncio.wait_for(waiting, 10) is True
    [_, own] = await shared.read_feed(START, 5)
    await append(feed, "game:j", 2, 1)
    assert await asyncio.wait_for(shared.wait_for_events(own.checkpoint, 30.0), 10) is True
    await append(feed, "game:j2", 0, 4)
    [*_, last] = await shared.read_feed(START, 3)
    assert await asyncio.wait_for(shared.wait_for_events(last.checkpoint, 30.0), 10) is True


async def test_a_wait_due_before_the_pace_ends_returns_at_its_timeout_without_looking(
    feed: EmbeddedStore,
) -> None:
    """The referee due to act sooner than the pace is not held to it."""
    await append(feed, "game:k", 0, 1)
    await append(feed, "game:k2", 0, 1)
    counting = Counting(feed)
    shared = SharedFeed(counting, pace=60.0)
    [_, last] = await shared.read_feed(START, 5)
    await append(feed, "game:k", 1, 1)
    assert await asyncio.wait_for(shared.wait_for_events(last.checkpoint, 0.05), 10) is False
    assert counting.waits == 0


async def test_readers_of_different_page_sizes_at_the_feeds_end_share_the_next_read(
    feed: EmbeddedStore,
) -> None:
    """The projector reads pages of 250, the followers of 1000: caught up at one checkpoint
    and woken together, the first to ask reads as many as the largest read that ended there,
    so one read serves both whichever asks first."""
    await append(feed, "game:l", 0, 1)
    await append(feed, "game:l2", 0, 1)
    counting = Counting(feed)
    shared = SharedFeed(counting, pace=0.0)
    small = await shared.read_feed(START, 250)
    big = await shared.read_feed(START, 1000)  # a short page is read again
    assert small == big
    assert counting.reads == 2
    await append(feed, "game:l", 1, 3)
    end = big[-1].checkpoint
    small, big = await asyncio.gather(shared.read_feed(end, 250), shared.read_feed(end, 1000))
    assert counting.reads == 3
    assert len(small) == len(big) == 3
