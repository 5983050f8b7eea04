"""The event store on PostgreSQL (psycopg 3 async, one connection pool).

Append is one call of `fairway_append` (SECURITY DEFINER: the app role may not INSERT;
events/migrations/0004_append_only_through_the_function.sql) in an implicit transaction:
one round trip, prepared. Once it has committed, a notifier task sends
`NOTIFY fairway_events` as a transaction of its own (never inside the append, where it would
serialise every commit), one NOTIFY for a whole burst of appends. The feed reads only rows of
transactions older than the snapshot's xmin, which have all ended: a transaction that commits
late is never skipped (docs/EVENT_STORE.md).

A database that goes silent holds no caller for long: every operation ends within `timeout`
of asking, the wait for a pooled connection included, or raises `StoreUnavailable`; libpq's
connect timeout, TCP keepalives and a server-side `statement_timeout` bound the rest.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import math
import os
import select
import socket
from collections.abc import AsyncIterator, Sequence
from types import TracebackType
from typing import Any, Final, LiteralString

import psycopg
import psycopg_pool
from psycopg import conninfo

from events.codec import Codec, default_codec
from events.store.base import (
    START,
    AppendResult,
    Checkpoint,
    ConcurrencyError,
    EventIdConflict,
    EventStore,
    InvalidEvent,
    InvalidStreamId,
    NewEvent,
    PreparedEvent,
    RecordedEvent,
    StoreError,
    StoreUnavailable,
    StreamInfo,
    check_stream_id,
)

log = logging.getLogger(__name__)

CHANNEL: Final = "fairway_events"

_KEEPALIVES: Final = {  # an idle connection across a dead network is found within ~20 s
    "keepalives": 1,
    "keepalives_idle": 10,
    "keepalives_interval": 3,
    "keepalives_count": 3,
    "tcp_user_timeout": 10_000,  # ms that sent bytes may stay unacknowledged
}
_RECONNECT_FOR: Final = 5.0
"""The pool retries a lost connection's replacement for this long (back-off 1 s, 2 s...),
then gives up; the next request that waits asks for a fresh one. So the pool heals within
seconds of the database's return however long it was away, with no restart."""
_LISTEN_CHECK: Final = 5.0
"""After this many quiet seconds the listener checks that its connection still answers."""

_APPEND: Final = (
    "SELECT stream_version, global_position, hash FROM fairway_append("
    "%b::text, %b::int4, %b::uuid[], %b::text[], %b::int4[], %b::text[], %b::text[])"
)
_APPEND_ONE: Final = (  # the same function for one event, without arrays (cheaper to send)
    "SELECT stream_version, global_position, hash FROM fairway_append("
    "%b::text, %b::int4, %b::uuid, %b::text, %b::int4, %b::text, %b::text)"
)
_NOTIFY: Final = f"NOTIFY {CHANNEL}"
# `events.` in ORDER BY: a bare `tx_id` would sort by the output column (the int8 cast)
# and miss the index.
_COLUMNS: Final = (
    "global_position, tx_id::text::int8, stream_id, stream_version, event_id, type,"
    " schema_version, data::text, metadata::text, recorded_at, hash"
)
_READ_STREAM: Final = (  # then the event id's text, which the hash chain covers
    f"SELECT {_COLUMNS}, event_id::text FROM events"
    " WHERE stream_id = %s::text AND stream_version >= %s::int4"
    " ORDER BY stream_version LIMIT %s::int8"
)
_STREAM_VERSION: Final = (
    "SELECT coalesce(max(stream_version), 0) FROM events WHERE stream_id = %s::text"
)
_VISIBLE: Final = "tx_id < pg_snapshot_xmin(pg_current_snapshot())"
_READ_FEED: Final = (
    f"SELECT {_COLUMNS} FROM events"
    f" WHERE (tx_id, global_position) > (%s::text::xid8, %s::int8) AND {_VISIBLE}"
    " ORDER BY events.tx_id, events.global_position LIMIT %s::int8"
)
_FEED_HEAD: Final = (
    f"SELECT tx_id::text::int8, global_position FROM events WHERE {_VISIBLE}"
    " ORDER BY events.tx_id DESC, events.global_position DESC LIMIT 1"
)
_LIST_STREAMS: Final = (
    "SELECT stream_id, max(stream_version) FROM events"
    " WHERE stream_id > %s::text AND starts_with(stream_id, %s::text)"
    " GROUP BY stream_id ORDER BY stream_id LIMIT %s::int8"
)


def _append_call(
    stream_id: str, expected: int, prepared: list[PreparedEvent]
) -> tuple[LiteralString, tuple[object, ...]]:
    """The statement and parameters of `fairway_append` for these events."""
    if len(prepared) == 1:
        (one,) = prepared
        return _APPEND_ONE, (
            stream_id,
            expected,
            one.event_id,
            one.type,
            one.schema_version,
            one.data.decode(),
            one.metadata.decode(),
        )
    return _APPEND, (
        stream_id,
        expected,
        [p.event_id for p in prepared],
        [p.type for p in prepared],
        [p.schema_version for p in prepared],
        [p.data.decode() for p in prepared],
        [p.metadata.decode() for p in prepared],
    )


def _connection_settings(database_url: str, timeout: float) -> dict[str, Any]:
    """libpq settings for every connection; the URL's own (and PGOPTIONS) win."""
    given = conninfo.conninfo_to_dict(database_url)
    settings: dict[str, Any] = {
        "autocommit": True,
        "prepare_threshold": 0,
        "client_encoding": "UTF8",
    }
    bounds = {"connect_timeout": max(2, math.ceil(timeout)), **_KEEPALIVES}  # libpq's least: 2
    settings |= {name: value for name, value in bounds.items() if name not in given}
    options = str(given.get("options") or os.environ.get("PGOPTIONS", ""))
    if "statement_timeout" not in options:  # the server gives up too when the client has
        statement_timeout = f"-c statement_timeout={math.ceil(timeout * 1000)}"
        settings["options"] = f"{options} {statement_timeout}".strip()
    return settings


def _lost(conn: psycopg.AsyncConnection[Any]) -> bool:
    """Whether an idle connection is gone, without a round trip: an idle connection has
    nothing to read, so anything there (an end of file, a terminated backend's farewell)
    means the server has closed it."""
    if conn.closed:
        return True
    poller = select.poll()
    poller.register(conn.pgconn.socket, select.POLLIN)
    return bool(poller.poll(0))


class _Deadline:
    """Ends the block's wait on `conn` at `deadline` (the event loop's clock): the socket is
    shut down under psycopg, whose wait then fails at once, leaving the connection broken
    for good (the pool discards it). Cancelling the waiting task instead would send psycopg
    down its cancel path, which itself waits seconds for the silent server."""

    __slots__ = ("conn", "expired", "timeout", "timer")

    def __init__(self, conn: psycopg.AsyncConnection[Any], deadline: float, timeout: float) -> None:
        self.conn = conn
        self.timeout = timeout
        self.expired = False
        self.timer = asyncio.get_running_loop().call_at(deadline, self._abort)

    def _abort(self) -> None:
        self.expired = True
        with (
            contextlib.suppress(OSError, psycopg.Error),
            socket.socket(fileno=os.dup(self.conn.pgconn.socket)) as sock,
        ):
            sock.shutdown(socket.SHUT_RDWR)

    def __enter__(self) -> None:
        return None

    def __exit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.timer.cancel()
        if self.expired and isinstance(exc, psycopg.Error | OSError):
            # An append's outcome is unknown: it may have committed. Never report success;
            # the client retries with the same event ids (its Idempotency-Key).
            raise StoreUnavailable(
                f"the event store did not answer within {self.timeout:g} s"
            ) from None


class _Translate:
    """Turns psycopg and pool errors into the store's own; nothing psycopg leaves here."""

    __slots__ = ("expected", "stream_id")

    def __init__(self, stream_id: str = "", expected: int = 0) -> None:
        self.stream_id = stream_id
        self.expected = expected

    def __enter__(self) -> None:
        return None

    def __exit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        if exc is None:
            return
        if isinstance(exc, OSError):
            raise StoreUnavailable(f"event store unavailable: {exc}") from None
        if not isinstance(exc, psycopg.Error):
            return
        if isinstance(exc, psycopg_pool.PoolClosed):
            raise StoreError("the event store is closed") from None
        state = exc.sqlstate or ""
        if state == "FW001":
            actual = int(exc.diag.message_detail or "0")
            raise ConcurrencyError(self.stream_id, self.expected, actual) from None
        if state == "FW002" or (
            isinstance(exc, psycopg.errors.UniqueViolation)
            and exc.diag.constraint_name == "events_event_id_key"
        ):
            raise EventIdConflict(
                f"stream {self.stream_id}: {exc.diag.message_primary or 'event id stored'}"
            ) from None
        if state == "FW004":
            raise InvalidStreamId(self.stream_id) from None
        if isinstance(exc, psycopg.OperationalError) or state[:2] in ("08", "53", "57"):
            raise StoreUnavailable(f"event store unavailable: {exc}") from None
        if isinstance(exc, psycopg.errors.DataError):
            raise InvalidEvent(f"rejected by the database: {exc}") from None
        raise StoreError(f"event store failure: {state} {exc}") from None


class PostgresStore(EventStore):
    def __init__(
        self,
        pool: psycopg_pool.AsyncConnectionPool[psycopg.AsyncConnection[Any]],
        database_url: str,
        codec: Codec,
        poll_interval: float,
        notify_delay: float = 0.0,
        timeout: float = 2.0,
    ) -> None:
        super().__init__(codec, poll_interval)
        self._pool = pool
        self._url = database_url
        self._timeout = timeout
        self._settings = _connection_settings(database_url, timeout)
        self._listener: asyncio.Task[None] | None = None
        self._notifier: asyncio.Task[None] | None = None
        self._notify_due = asyncio.Event()
        self._notify_delay = notify_delay

    @classmethod
    async def open(
        cls,
        database_url: str,
        *,
        codec: Codec | None = None,
        min_size: int = 2,
        max_size: int = 10,
        poll_interval: float = 0.5,
        notify_delay: float = 0.002,
        timeout: float = 2.0,
        startup_timeout: float = 10.0,
    ) -> PostgresStore:
        """`timeout`: the longest one operation may take, the wait for a pooled connection
        included; past it the operation raises `StoreUnavailable`. `startup_timeout`: how
        long to wait for the pool's first connections."""
        settings = _connection_settings(database_url, timeout)
        try:  # fail fast, and with the server's own reason (refused, no such database...)
            probe = await psycopg.AsyncConnection.connect(database_url, **settings)
            await probe.close()
        except (psycopg.Error, OSError) as exc:
            raise StoreUnavailable(f"cannot reach the event store database: {exc}") from None
        pool: psycopg_pool.AsyncConnectionPool[psycopg.AsyncConnection[Any]]
        pool = psycopg_pool.AsyncConnectionPool(
            database_url,
            min_size=min_size,
            max_size=max_size,
            timeout=timeout,
            reconnect_timeout=_RECONNECT_FOR,
            open=False,
            name="fairway-events",
            kwargs=settings,
        )
        try:
            await pool.open(wait=True, timeout=startup_timeout)
        except (psycopg.Error, OSError) as exc:
            await pool.close()
            raise StoreUnavailable(f"cannot reach the event store database: {exc}") from None
        codec = codec or default_codec()
        return cls(pool, database_url, codec, poll_interval, notify_delay, timeout)

    async def close(self) -> None:
        for task in (self._listener, self._notifier):
            if task is not None:
                task.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await task
        self._listener = self._notifier = None
        if self._notify_due.is_set():
            await self._notify()
        await self._pool.close()

    # ---- writing ----------------------------------------------------------------------------

    async def append(
        self, stream_id: str, expected_version: int, events: Sequence[NewEvent]
    ) -> AppendResult:
        prepared = self._prepare(stream_id, expected_version, events)
        query, params = _append_call(stream_id, expected_version, prepared)
        with _Translate(stream_id, expected_version):
            async with self._connection() as conn:
                rows = await (await conn.execute(query, params)).fetchall()
        self._notify_soon()
        rows.sort()
        return AppendResult(
            stream_id,
            rows[0][0],
            rows[-1][0],
            tuple(r[1] for r in rows),
            rows[-1][2],
            tuple(bytes(r[2]) for r in rows),
        )

    def _notify_soon(self) -> None:
        """Called after a commit: a NOTIFY will start after this moment. One task sends
        them, one at a time, so a burst of appends costs a few NOTIFYs, not one each, and no
        append waits for one."""
        self._notify_due.set()
        if self._notifier is None or self._notifier.done():
            self._notifier = asyncio.create_task(self._send_notifies(), name="fairway-notify")

    async def _send_notifies(self) -> None:
        while True:
            await self._notify_due.wait()
            await asyncio.sleep(self._notify_delay)  # gather a burst into one NOTIFY
            self._notify_due.clear()
            if not await self._notify():
                self._notify_due.set()  # try again shortly; readers poll meanwhile
                await asyncio.sleep(0.5)

    async def _notify(self) -> bool:
        """Outside any append transaction. A failure loses nothing: readers also poll."""
        try:
            with _Translate():
                async with self._connection() as conn:
                    await conn.execute(_NOTIFY)
            return True
        except StoreError as exc:
            log.warning("NOTIFY after an append failed: %s", exc)
            return False

    # ---- reading ----------------------------------------------------------------------------

    async def _stream_rows(
        self, stream_id: str, from_version: int, limit: int | None
    ) -> list[tuple[Any, ...]]:
        return await self._fetch(_READ_STREAM, (stream_id, from_version, limit))

    async def stream_version(self, stream_id: str) -> int:
        check_stream_id(stream_id)
        rows = await self._fetch(_STREAM_VERSION, (stream_id,))
        return int(rows[0][0])

    async def read_feed(self, after: Checkpoint = START, limit: int = 1000) -> list[RecordedEvent]:
        rows = await self._fetch(_READ_FEED, (str(after.tx_id), after.position, limit))
        return self._records(rows)

    async def feed_head(self) -> Checkpoint:
        rows = await self._fetch(_FEED_HEAD, ())
        return Checkpoint(rows[0][0], rows[0][1]) if rows else START

    async def list_streams(
        self, prefix: str = "", after: str = "", limit: int = 100
    ) -> list[StreamInfo]:
        rows = await self._fetch(_LIST_STREAMS, (after, prefix, limit))
        return [StreamInfo(stream_id, version) for stream_id, version in rows]

    async def _fetch(self, query: LiteralString, params: Sequence[object]) -> list[tuple[Any, ...]]:
        with _Translate():
            async with self._connection() as conn:
                cursor = await conn.execute(query, params, binary=True)
                return await cursor.fetchall()

    @contextlib.asynccontextmanager
    async def _connection(self) -> AsyncIterator[psycopg.AsyncConnection[Any]]:
        """A pooled connection for one operation, which must end within `timeout` of asking
        (see `_Deadline`). Connections the server has closed are passed over."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + self._timeout
        while True:
            conn = await self._pool.getconn(timeout=max(0.0, deadline - loop.time()))
            if not _lost(conn):
                break
            await conn.close()
            await self._pool.putconn(conn)  # closed: the pool connects a replacement
        try:
            with _Deadline(conn, deadline, self._timeout):
                yield conn
        finally:
            await self._pool.putconn(conn)

    # ---- waking readers ---------------------------------------------------------------------

    async def _start_listening(self) -> None:
        if self._listener is None or self._listener.done():
            self._listener = asyncio.create_task(self._listen(), name="fairway-events-listen")

    async def _listen(self) -> None:
        """LISTEN on a connection of its own; wake waiters on every notification. A quiet
        connection is checked every few seconds (a silent network would hold it forever). On
        a lost connection, reconnect with a back-off (waiters poll meanwhile)."""
        loop = asyncio.get_running_loop()
        backoff = 0.1
        while True:
            try:
                conn = await psycopg.AsyncConnection.connect(self._url, **self._settings)
                async with conn:
                    with _Deadline(conn, loop.time() + self._timeout, self._timeout):
                        await conn.execute(f"LISTEN {CHANNEL}")
                    backoff = 0.1
                    self._wake_waiters()  # something may have been appended while away
                    while True:
                        async for _ in conn.notifies(timeout=_LISTEN_CHECK):
                            self._wake_waiters()
                        with _Deadline(conn, loop.time() + self._timeout, self._timeout):
                            await conn.execute("")
            except (psycopg.Error, OSError, StoreUnavailable) as exc:
                log.warning("event feed listener lost its connection: %s", exc)
            await asyncio.sleep(backoff)
            backoff = min(backoff * 2, 5.0)

    # ---- the installation -------------------------------------------------------------------

    async def installation(self) -> str:
        rows = await self._fetch("SELECT id FROM installation", ())  # one row (0005)
        if not rows:
            raise StoreError("the event store has no installation row (migration 0005)")
        return str(rows[0][0])
