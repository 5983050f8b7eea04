"""A real event store seen through `events.feed.Feed`, for tests that count or hold what a
consumer asks of it: subclass `Through` and override the calls to watch; every other call
goes straight to the store."""

from __future__ import annotations

from events.store import START, Checkpoint, EventStore, RecordedEvent


class Through:
    """The store's feed, unchanged; `reads` counts the pages read through it."""

    def __init__(self, store: EventStore) -> None:
        self.store = store
        self.reads = 0

    async def read_feed(self, after: Checkpoint = START, limit: int = 1000) -> list[RecordedEvent]:
        self.reads += 1
        return await self.store.read_feed(after, limit)

    async def wait_for_events(self, after: Checkpoint, timeout: float) -> bool:
        return await self.store.wait_for_events(after, timeout)

    async def feed_head(self) -> Checkpoint:
        return await self.store.feed_head()

    async def read_stream(
        self,
        stream_id: str,
        from_version: int = 1,
        limit: int | None = None,
        *,
        prev_hash: bytes | None = None,
    ) -> list[RecordedEvent]:
        return await self.store.read_stream(stream_id, from_version, limit, prev_hash=prev_hash)

    async def installation(self) -> str:
        return await self.store.installation()
