"""Every contract test runs against both implementations: PostgreSQL and the embedded file."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable, Collection
from pathlib import Path
from typing import Any

import pytest

from events.schema.common import GameStarted
from events.store import (
    Checkpoint,
    EmbeddedStore,
    EventStore,
    NewEvent,
    PostgresStore,
    RecordedEvent,
)

MakeStore = Callable[..., Awaitable[EventStore]]


@pytest.fixture(params=["postgres", "embedded"])
def store_kind(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@pytest.fixture
async def make_store(
    store_kind: str, request: pytest.FixtureRequest, tmp_path: Path
) -> AsyncIterator[MakeStore]:
    """Opens stores of this test's kind (all on the same database or file); closes them."""
    opened: list[EventStore] = []

    async def make(**options: Any) -> EventStore:
        options.setdefault("poll_interval", 0.2)
        if store_kind == "postgres":
            url = request.getfixturevalue("database_url")
            store: EventStore = await PostgresStore.open(url, **options)
        else:
            store = await EmbeddedStore.open(tmp_path, **options)
        opened.append(store)
        return store

    yield make
    for store in opened:
        await store.close()


@pytest.fixture
async def store(make_store: MakeStore) -> EventStore:
    return await make_store()


async def settled_checkpoint(store: EventStore) -> Checkpoint:
    """A checkpoint after which only appends made from now on will show: a marker event's,
    once the feed returns it (every transaction with a lower id has ended by then).
    `feed_head()` alone may be behind while a transaction elsewhere in the cluster runs."""
    marker = f"marker:{uuid.uuid4().hex}"
    before = await store.feed_head()
    await store.append(marker, 0, [NewEvent(uuid.uuid4(), GameStarted("marker", 1))])
    (event,) = await read_feed_until(store, before, {marker}, count=1)
    return event.checkpoint


async def read_feed_until(
    store: EventStore,
    after: Checkpoint,
    streams: Collection[str],
    count: int,
    timeout: float = 15.0,
) -> list[RecordedEvent]:
    """The feed's events of `streams` after `after`, once `count` of them are visible. The
    feed may lag while any transaction in the cluster is open (it waits for them)."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    found: list[RecordedEvent] = []
    checkpoint = after
    while True:
        for event in await store.read_feed(checkpoint, limit=500):
            checkpoint = event.checkpoint
            if event.stream_id in streams:
                found.append(event)
        if len(found) >= count:
            return found
        if loop.time() > deadline:
            raise AssertionError(f"feed showed {len(found)} of {count} events in {timeout} s")
        await asyncio.sleep(0.05)
