"""Every contract test runs against both implementations: PostgreSQL and the embedded file."""

from __future__ import annotations

import asyncio
import hashlib
import sqlite3
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable, Collection
from pathlib import Path
from typing import Any, Protocol

import psycopg
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
from events.store.embedded import _SCHEMA, FILE_NAME

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


JUNK_HASH = hashlib.sha256(b"not the chain").digest()


class Tamper(Protocol):
    """Changes stored rows behind the store's back, as only a superuser (PostgreSQL) or
    someone holding the file (embedded) can."""

    async def insert(self, stream_id: str, version: int, data: str, digest: bytes) -> None:
        """Insert a row directly, with the hash given."""

    async def replace_data(self, stream_id: str, version: int, old: str, new: str) -> None:
        """Replace `old` by `new` in the stored data of one row (its hash unchanged)."""

    async def delete(self, stream_id: str, version: int) -> None: ...


class _PostgresTamper:
    def __init__(self, url: str) -> None:
        self.url = url

    async def _run(self, *statements: tuple[str, tuple[object, ...]]) -> None:
        async with await psycopg.AsyncConnection.connect(self.url, autocommit=True) as conn:
            await conn.execute("SET session_replication_role = replica")  # triggers off
            for query, params in statements:
                await conn.execute(query.encode(), params)

    async def insert(self, stream_id: str, version: int, data: str, digest: bytes) -> None:
        await self._run(
            (
                "INSERT INTO events (stream_id, stream_version, event_id, type, schema_version,"
                " data, metadata, hash) VALUES (%s, %s, %s, 'game.started', 1, %s, '{}', %s)",
                (stream_id, version, uuid.uuid4(), data, digest),
            )
        )

    async def replace_data(self, stream_id: str, version: int, old: str, new: str) -> None:
        await self._run(
            (
                "UPDATE events SET data = replace(data::text, %s, %s)::json"
                " WHERE stream_id = %s AND stream_version = %s",
                (old, new, stream_id, version),
            )
        )

    async def delete(self, stream_id: str, version: int) -> None:
        await self._run(
            (
                "DELETE FROM events WHERE stream_id = %s AND stream_version = %s",
                (stream_id, version),
            )
        )


class _EmbeddedTamper:
    def __init__(self, path: Path) -> None:
        self.path = path

    async def _run(self, query: str, params: tuple[object, ...]) -> None:
        db = sqlite3.connect(self.path, isolation_level=None)
        try:
            db.executescript("DROP TRIGGER events_no_update; DROP TRIGGER events_no_delete;")
            db.execute(query, params)
            db.executescript(f"BEGIN; {_SCHEMA} COMMIT;")  # the triggers back
        finally:
            db.close()

    async def insert(self, stream_id: str, version: int, data: str, digest: bytes) -> None:
        await self._run(
            "INSERT INTO events (stream_id, stream_version, event_id, type, schema_version,"
            " data, metadata, recorded_at, hash) VALUES (?, ?, ?, 'game.started', 1, ?, '{}',"
            " 0, ?)",
            (stream_id, version, str(uuid.uuid4()), data, digest),
        )

    async def replace_data(self, stream_id: str, version: int, old: str, new: str) -> None:
        await self._run(
            "UPDATE events SET data = replace(data, ?, ?)"
            " WHERE stream_id = ? AND stream_version = ?",
            (old, new, stream_id, version),
        )

    async def delete(self, stream_id: str, version: int) -> None:
        await self._run(
            "DELETE FROM events WHERE stream_id = ? AND stream_version = ?", (stream_id, version)
        )


@pytest.fixture
def tamper(store_kind: str, request: pytest.FixtureRequest, tmp_path: Path) -> Tamper:
    """Tampers with the database or file that this test's stores use."""
    if store_kind == "postgres":
        return _PostgresTamper(request.getfixturevalue("database_url"))
    return _EmbeddedTamper(tmp_path / FILE_NAME)


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
