"""The feed as the runners of one projector read it: one read for all who ask at once.

Each projection keeps its own checkpoint, but they move in step (they follow one feed, and
rebuild together after a flush), so several runners often ask for the very same page at the
same moment. `SharedFeed` hands them one read, decoded once: a read still in flight, or a
full page read a moment ago. A short page (the feed's end) is not kept: it may have grown; a
full one cannot change (the feed never gains an event before one it has shown), unless the
store itself is replaced, when the projector has it `forget` them.
Runners caught up at the same checkpoint likewise share one wait for the next append (each
wait reads the store to look, so four runners waiting apart would look four times), and the
linger after it, so they wake together and share the read that follows.
"""

from __future__ import annotations

import asyncio
from collections import OrderedDict
from typing import Protocol

from events.store.base import START, Checkpoint, RecordedEvent


class Feed(Protocol):
    """What a runner needs of the event store."""

    async def read_feed(
        self, after: Checkpoint = START, limit: int = 1000
    ) -> list[RecordedEvent]: ...

    async def wait_for_events(self, after: Checkpoint, timeout: float) -> bool: ...

    async def feed_head(self) -> Checkpoint: ...

    async def read_stream(
        self,
        stream_id: str,
        from_version: int = 1,
        limit: int | None = None,
        *,
        prev_hash: bytes | None = None,
    ) -> list[RecordedEvent]:
        """One stream's events: what a projection that folds the domain reads to refold a
        game it has not seen from its start (projections/folds.py)."""
        ...

    async def installation(self) -> str:
        """The event store's id (`EventStore.installation`): a generation names the store
        it was built from, and is rebuilt when the feed is another's."""
        ...


class SharedFeed:
    def __init__(self, feed: Feed, keep: int = 8) -> None:
        self.feed = feed
        self._keep = keep
        self._pages: OrderedDict[tuple[Checkpoint, int], asyncio.Task[list[RecordedEvent]]] = (
            OrderedDict()
        )
        self._waits: dict[Checkpoint, asyncio.Task[bool]] = {}

    async def read_feed(self, after: Checkpoint = START, limit: int = 1000) -> list[RecordedEvent]:
        key = (after, limit)
        task = self._pages.get(key)
        if task is None or (task.done() and not _full(task, limit)):
            task = asyncio.ensure_future(self.feed.read_feed(after, limit))
            self._pages[key] = task
            while len(self._pages) > self._keep:
                self._pages.popitem(last=False)
        return list(await asyncio.shield(task))

    async def wait_for_events(self, after: Checkpoint, timeout: float, linger: float = 0.0) -> bool:
        """Joins a wait after the same checkpoint already under way (and then its timeout
        and linger, not these: the runners of one projector all wait as long). `linger`:
        seconds to wait on after a wake-up, for the appends that follow it to gather; part
        of the shared wait, so the runners woken together also read together (one read for
        all of them, where each lingering on its own read the feed at its own moment)."""
        task = self._waits.get(after)
        if task is None or task.done():
            task = asyncio.ensure_future(self._wait(after, timeout, linger))
            self._waits[after] = task
            task.add_done_callback(lambda done: self._waited(after, done))
        return await asyncio.shield(task)

    async def _wait(self, after: Checkpoint, timeout: float, linger: float) -> bool:
        woke = await self.feed.wait_for_events(after, timeout)
        if woke and linger > 0:
            await asyncio.sleep(linger)
        return woke

    def _waited(self, after: Checkpoint, task: asyncio.Task[bool]) -> None:
        if self._waits.get(after) is task:
            del self._waits[after]
        if not task.cancelled():
            task.exception()  # retrieved: a failure reaches every waiter, not the log

    async def feed_head(self) -> Checkpoint:
        return await self.feed.feed_head()

    async def installation(self) -> str:
        return await self.feed.installation()

    async def source_head(self) -> Checkpoint:
        """The head of the store the feed follows (`EventStore.source_head`: the primary's,
        for a feed read from a replica); a feed that does not say is its own source."""
        source_head = getattr(self.feed, "source_head", None)
        if source_head is None:
            return await self.feed.feed_head()
        head: Checkpoint = await source_head()
        return head

    def forget(self) -> None:
        """Drop the pages kept: the feed is another store's, or went back, so a page read
        after a checkpoint may read otherwise now."""
        self._pages.clear()

    async def read_stream(
        self,
        stream_id: str,
        from_version: int = 1,
        limit: int | None = None,
        *,
        prev_hash: bytes | None = None,
    ) -> list[RecordedEvent]:
        """Not shared: a refold reads one game's stream, which no other runner wants."""
        return await self.feed.read_stream(stream_id, from_version, limit, prev_hash=prev_hash)


def _full(task: asyncio.Task[list[RecordedEvent]], limit: int) -> bool:
    """A finished read worth handing on: it succeeded and filled its page."""
    return not task.cancelled() and task.exception() is None and len(task.result()) == limit
