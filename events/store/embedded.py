"""The embedded event store: one SQLite file (WAL, synchronous=FULL), the default when no
PostgreSQL is configured. Same contract as the PostgreSQL store.

SQLite has one writer at a time (`BEGIN IMMEDIATE` takes the write lock first, even across
processes), so positions are drawn and committed in the same order: the feed orders by
position, which serves as the transaction id. Every call runs on one worker thread that
owns the connection, so the event loop never waits on the disk.
"""

from __future__ import annotations

import asyncio
import sqlite3
import uuid
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any, Final, TypeVar
from uuid import UUID

from events.codec import GENESIS_HASH, Codec, canonical_bytes, chain_hash, default_codec
from events.store.base import (
    START,
    AppendResult,
    Checkpoint,
    ConcurrencyError,
    EventIdConflict,
    NewEvent,
    PreparedEvent,
    RecordedEvent,
    RegisteredKey,
    StoreError,
    StoreUnavailable,
    StreamInfo,
    check_stream_id,
)
from events.store.contract import EventStore

T = TypeVar("T")

FILE_NAME: Final = "events.sqlite3"
_SCHEMA_VERSION: Final = 1
"""Raised only for a change an older release could not live with. The table receipt_keys,
added later, is not one: a release that knows nothing of it ignores it."""
_EPOCH: Final = datetime(1970, 1, 1, tzinfo=UTC)
_SCHEMA: Final = """
CREATE TABLE IF NOT EXISTS events (
    global_position INTEGER PRIMARY KEY AUTOINCREMENT,
    stream_id       TEXT    NOT NULL,
    stream_version  INTEGER NOT NULL CHECK (stream_version >= 1),
    event_id        TEXT    NOT NULL UNIQUE,
    type            TEXT    NOT NULL,
    schema_version  INTEGER NOT NULL,
    data            TEXT    NOT NULL,
    metadata        TEXT    NOT NULL,
    recorded_at     INTEGER NOT NULL,  -- microseconds since the Unix epoch, UTC
    hash            BLOB    NOT NULL,
    UNIQUE (stream_id, stream_version)
);
CREATE TRIGGER IF NOT EXISTS events_no_update BEFORE UPDATE ON events
BEGIN SELECT RAISE(ABORT, 'events are immutable'); END;
CREATE TRIGGER IF NOT EXISTS events_no_delete BEFORE DELETE ON events
BEGIN SELECT RAISE(ABORT, 'events are immutable'); END;
CREATE TABLE IF NOT EXISTS receipt_keys (
    public_key BLOB    PRIMARY KEY CHECK (length(public_key) = 32),
    key_id     TEXT    NOT NULL UNIQUE,
    first_seen INTEGER NOT NULL  -- microseconds since the Unix epoch, UTC
);
CREATE TRIGGER IF NOT EXISTS receipt_keys_no_update BEFORE UPDATE ON receipt_keys
BEGIN SELECT RAISE(ABORT, 'receipt keys are kept for good'); END;
CREATE TRIGGER IF NOT EXISTS receipt_keys_no_delete BEFORE DELETE ON receipt_keys
BEGIN SELECT RAISE(ABORT, 'receipt keys are kept for good'); END;
CREATE TABLE IF NOT EXISTS installation (
    id  TEXT    NOT NULL PRIMARY KEY,
    one INTEGER NOT NULL DEFAULT 1 UNIQUE CHECK (one = 1)  -- never a second row
);
CREATE TRIGGER IF NOT EXISTS installation_no_update BEFORE UPDATE ON installation
BEGIN SELECT RAISE(ABORT, 'the installation is immutable'); END;
CREATE TRIGGER IF NOT EXISTS installation_no_delete BEFORE DELETE ON installation
BEGIN SELECT RAISE(ABORT, 'the installation is immutable'); END;
"""
_COLUMNS: Final = (
    "global_position, global_position, stream_id, stream_version, event_id, type,"
    " schema_version, data, metadata, recorded_at, hash"
)
_INSERT: Final = (
    "INSERT INTO events (stream_id, stream_version, event_id, type, schema_version, data,"
    " metadata, recorded_at, hash) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)"
)


class EmbeddedStore(EventStore):
    def __init__(
        self,
        connection: sqlite3.Connection,
        executor: ThreadPoolExecutor,
        codec: Codec,
        poll_interval: float,
    ) -> None:
        super().__init__(codec, poll_interval)
        self._db = connection
        self._executor = executor
        self._closed = False

    @classmethod
    async def open(
        cls, data_dir: str | Path, *, codec: Codec | None = None, poll_interval: float = 0.5
    ) -> EmbeddedStore:
        path = Path(data_dir) / FILE_NAME
        executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="fairway-sqlite")
        loop = asyncio.get_running_loop()
        try:
            connection = await loop.run_in_executor(executor, _connect, path)
        except (sqlite3.Error, OSError) as exc:
            executor.shutdown(wait=False)
            raise StoreUnavailable(f"cannot open the event store at {path}: {exc}") from None
        return cls(connection, executor, codec or default_codec(), poll_interval)

    async def close(self) -> None:
        if not self._closed:
            self._closed = True
            await asyncio.get_running_loop().run_in_executor(self._executor, self._db.close)
            self._executor.shutdown(wait=True)

    async def _run(self, fn: Callable[..., T], *args: Any) -> T:
        if self._closed:
            raise StoreError("the event store is closed")
        try:
            return await asyncio.get_running_loop().run_in_executor(self._executor, fn, *args)
        except sqlite3.OperationalError as exc:
            raise StoreUnavailable(f"event store unavailable: {exc}") from None
        except sqlite3.Error as exc:
            raise StoreError(f"event store failure: {exc}") from None

    # ---- writing ----------------------------------------------------------------------------

    async def append(
        self, stream_id: str, expected_version: int, events: Sequence[NewEvent]
    ) -> AppendResult:
        prepared = self._prepare(stream_id, expected_version, events)
        rows = await self._run(self._append, stream_id, expected_version, prepared)
        self._wake_waiters()
        return AppendResult(
            stream_id,
            rows[0][0],
            rows[-1][0],
            tuple(r[1] for r in rows),
            rows[-1][2],
            tuple(bytes(r[2]) for r in rows),
        )

    def _append(
        self, stream_id: str, expected: int, prepared: list[PreparedEvent]
    ) -> list[tuple[int, int, bytes]]:
        """(version, position, hash) of each event, in stream order."""
        db = self._db
        db.execute("BEGIN IMMEDIATE")
        try:
            head = db.execute(
                "SELECT stream_version, hash FROM events WHERE stream_id = ?"
                " ORDER BY stream_version DESC LIMIT 1",
                (stream_id,),
            ).fetchone()
            current, prev = head if head else (0, GENESIS_HASH)
            if current != expected:
                return self._stored_result(stream_id, expected, current, prepared)
            now = _now()
            rows = []
            for version, event in enumerate(prepared, start=expected + 1):
                prev = chain_hash(
                    prev,
                    canonical_bytes(
                        stream_id,
                        version,
                        event.event_id,
                        event.type,
                        event.schema_version,
                        event.data,
                        event.metadata,
                    ),
                )
                cursor = db.execute(
                    _INSERT,
                    (
                        stream_id,
                        version,
                        event.event_id,
                        event.type,
                        event.schema_version,
                        event.data.decode(),
                        event.metadata.decode(),
                        now,
                        prev,
                    ),
                )
                rows.append((version, int(cursor.lastrowid or 0), prev))
            db.execute("COMMIT")
            return rows
        except sqlite3.IntegrityError as exc:
            if "event_id" in str(exc):
                raise EventIdConflict(f"stream {stream_id}: event id stored already") from None
            raise
        finally:
            if db.in_transaction:
                db.execute("ROLLBACK")

    def _stored_result(
        self, stream_id: str, expected: int, current: int, prepared: list[PreparedEvent]
    ) -> list[tuple[int, int, bytes]]:
        """The idempotent path: the same events stored right after `expected`, or an error."""
        found = []
        for offset, event in enumerate(prepared, start=1):
            row = self._db.execute(
                "SELECT stream_id, stream_version, type, schema_version, data, global_position,"
                " hash FROM events WHERE event_id = ?",
                (event.event_id,),
            ).fetchone()
            if row is not None:
                same = row[:5] == (
                    stream_id,
                    expected + offset,
                    event.type,
                    event.schema_version,
                    event.data.decode(),
                )
                found.append((row[1], row[5], row[6]) if same else None)
        if not found:
            raise ConcurrencyError(stream_id, expected, current)
        if len(found) == len(prepared) and None not in found:
            return [row for row in found if row is not None]
        raise EventIdConflict(f"stream {stream_id}: event ids stored elsewhere or differently")

    async def _register_receipt_key(self, key_id: str, public_key: bytes) -> None:
        await self._run(
            self._db.execute,
            "INSERT INTO receipt_keys (key_id, public_key, first_seen) VALUES (?, ?, ?)"
            " ON CONFLICT DO NOTHING",
            (key_id, public_key, _now()),
        )

    async def _start_listening(self) -> None:
        """In-process appends wake waiters directly; other processes are caught by polling."""

    # ---- reading ----------------------------------------------------------------------------

    async def _stream_rows(
        self, stream_id: str, from_version: int, limit: int | None
    ) -> list[tuple[Any, ...]]:
        return await self._run(
            self._fetch,
            f"SELECT {_COLUMNS}, event_id FROM events WHERE stream_id = ? AND stream_version >= ?"
            " ORDER BY stream_version LIMIT ?",
            (stream_id, from_version, -1 if limit is None else limit),
        )

    async def stream_version(self, stream_id: str) -> int:
        check_stream_id(stream_id)
        rows = await self._run(
            self._fetch,
            "SELECT coalesce(max(stream_version), 0) FROM events WHERE stream_id = ?",
            (stream_id,),
        )
        return int(rows[0][0])

    async def read_feed(self, after: Checkpoint = START, limit: int = 1000) -> list[RecordedEvent]:
        rows = await self._run(
            self._fetch,
            f"SELECT {_COLUMNS} FROM events WHERE global_position > ?"
            " ORDER BY global_position LIMIT ?",
            (max(after.tx_id, after.position), limit),
        )
        return self._records(rows, feed=True)

    async def feed_head(self) -> Checkpoint:
        rows = await self._run(self._fetch, "SELECT max(global_position) FROM events", ())
        head = rows[0][0]
        return Checkpoint(head, head) if head else START

    async def list_streams(
        self, prefix: str = "", after: str = "", limit: int = 100
    ) -> list[StreamInfo]:
        rows = await self._run(
            self._fetch,
            "SELECT stream_id, max(stream_version) FROM events"
            " WHERE stream_id > ? AND substr(stream_id, 1, ?) = ?"
            " GROUP BY stream_id ORDER BY stream_id LIMIT ?",
            (after, len(prefix), prefix, limit),
        )
        return [StreamInfo(stream_id, version) for stream_id, version in rows]

    async def receipt_keys(self) -> list[RegisteredKey]:
        rows = await self._run(
            self._fetch,
            "SELECT key_id, public_key, first_seen FROM receipt_keys ORDER BY first_seen, key_id",
            (),
        )
        return [RegisteredKey(key_id, key, self._recorded_at(seen)) for key_id, key, seen in rows]

    def _fetch(self, query: str, params: Sequence[object]) -> list[tuple[Any, ...]]:
        return self._db.execute(query, params).fetchall()

    @staticmethod
    def _event_id(stored: Any) -> UUID:
        return UUID(stored)

    @staticmethod
    def _recorded_at(stored: Any) -> datetime:
        return _EPOCH + timedelta(microseconds=stored)

    # ---- the installation -------------------------------------------------------------------

    async def installation(self) -> str:
        rows = await self._run(self._fetch, "SELECT id FROM installation", ())
        return str(rows[0][0])


def _now() -> int:
    """Microseconds since the Unix epoch, as the file keeps times."""
    return (datetime.now(UTC) - _EPOCH) // timedelta(microseconds=1)


def _connect(path: Path) -> sqlite3.Connection:
    path.parent.mkdir(parents=True, exist_ok=True)
    db = sqlite3.connect(path, isolation_level=None, check_same_thread=False, timeout=10.0)
    db.execute("PRAGMA journal_mode = WAL")
    db.execute("PRAGMA synchronous = FULL")
    (version,) = db.execute("PRAGMA user_version").fetchone()
    if version > _SCHEMA_VERSION:
        db.close()
        raise sqlite3.DatabaseError(f"{path} has schema version {version}, newer than this code")
    # every open: creating what is missing also restores a dropped trigger
    db.executescript(f"BEGIN; {_SCHEMA} PRAGMA user_version = {_SCHEMA_VERSION}; COMMIT;")
    # The file's id, made by whichever process creates it first (`installation`).
    db.execute("INSERT OR IGNORE INTO installation (id) VALUES (?)", (str(uuid.uuid4()),))
    return db
