"""The event store on PostgreSQL (psycopg 3 async, one connection pool).

Append is one call of `fairway_append` (SECURITY DEFINER: the app role may not INSERT;
events/migrations/0004_append_only_through_the_function.sql) in an implicit transaction:
one round trip. Appends that arrive while another commits wait and then go together, each
still one call of `fairway_append`, in one statement (group commit: postgres_group.py).
Once it has committed, a notifier task sends `NOTIFY fairway_events` as a transaction of its
own (never inside the append, where it would serialise every commit), one NOTIFY for a
whole burst of appends, on a connection of its own (half the client CPU of a pooled one: at
a steady 200 appends a second there are a hundred NOTIFYs a second per process). The feed
reads only rows of transactions older than the snapshot's xmin, which have all ended: a
transaction that commits late is never skipped (docs/EVENT_STORE.md).

A database that goes silent holds no caller for long: every operation ends within `timeout`
of asking, the wait for a pooled connection included, or raises `StoreUnavailable`; libpq's
connect timeout, TCP keepalives and a server-side `statement_timeout` bound the rest.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncIterator, Sequence
from typing import Any, Final, LiteralString, Self

import psycopg
import psycopg_pool

from events.codec import Codec, default_codec
from events.store.base import (
    START,
    AppendResult,
    Checkpoint,
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
from events.store.lead import Lead
from events.store.postgres_connections import (
    Deadline,
    Translate,
    connection_settings,
    database_error,
    lost,
)
from events.store.postgres_group import Busy, GroupCommit, Outcome, Pending, Rows
from events.store.postgres_lead import LeadSeeker
from events.store.postgres_sql import (
    CHANNEL,
    FEED_HEAD,
    LIST_STREAMS,
    NOTIFY,
    READ_FEED,
    READ_STREAM,
    RECEIPT_KEYS,
    REGISTER_RECEIPT_KEY,
    STREAM_VERSION,
    append_batch_call,
    append_call,
)

log = logging.getLogger(__name__)

_RECONNECT_FOR: Final = 5.0
"""The pool retries a lost connection's replacement for this long (back-off 1 s, 2 s...),
then gives up; the next request that waits asks for a fresh one. So the pool heals within
seconds of the database's return however long it was away, with no restart."""
_BUSY: Final = "FW005"
"""`fairway_append_together` skipped an append whose stream's lock was held elsewhere."""
_LISTEN_CHECK: Final = 5.0
"""After this many quiet seconds the listener checks that its connection still answers."""


class PostgresStore(EventStore):
    def __init__(
        self,
        pool: psycopg_pool.AsyncConnectionPool[psycopg.AsyncConnection[Any]],
        database_url: str,
        codec: Codec,
        poll_interval: float,
        notify_delay: float = 0.0,
        timeout: float = 2.0,
        group_commit: bool = True,
        max_batch: int = 32,
    ) -> None:
        super().__init__(codec, poll_interval)
        self._pool = pool
        self._url = database_url
        self._timeout = timeout
        self._settings = connection_settings(database_url, timeout)
        self._listener: asyncio.Task[None] | None = None
        self._notifier: asyncio.Task[None] | None = None
        self._notify_due = asyncio.Event()
        self._notify_delay = notify_delay
        self._notifying: psycopg.AsyncConnection[Any] | None = None
        self._lead_seekers: dict[str, LeadSeeker] = {}
        self._group = (
            GroupCommit(
                self._append_alone, self._append_together, self._batch_sent, max_batch, timeout
            )
            if group_commit
            else None
        )

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
        group_commit: bool = True,
        max_batch: int = 32,
        pool_name: str = "fairway-events",
    ) -> Self:
        """`timeout`: the longest one operation may take, the wait for a pooled connection
        included; past it the operation raises `StoreUnavailable`. `startup_timeout`: how
        long to wait for the pool's first connections. `group_commit`: appends that arrive
        while a commit runs go together in the next one, at most `max_batch` of them
        (events/store/postgres_group.py); off, each append is its own transaction."""
        settings = connection_settings(database_url, timeout)
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
            name=pool_name,
            kwargs=settings,
        )
        try:
            await pool.open(wait=True, timeout=startup_timeout)
        except (psycopg.Error, OSError) as exc:
            await pool.close()
            raise StoreUnavailable(f"cannot reach the event store database: {exc}") from None
        codec = codec or default_codec()
        return cls(
            pool,
            database_url,
            codec,
            poll_interval,
            notify_delay,
            timeout,
            group_commit,
            max_batch,
        )

    async def close(self) -> None:
        if self._group is not None:
            await self._group.close()
        for task in (self._listener, self._notifier):
            if task is not None:
                task.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await task
        self._listener = self._notifier = None
        for seeker in self._lead_seekers.values():
            await seeker.close()
        if self._notify_due.is_set():
            await self._notify()
        await self._stop_notifying()
        await self._pool.close()

    # ---- writing ----------------------------------------------------------------------------

    async def append(
        self, stream_id: str, expected_version: int, events: Sequence[NewEvent]
    ) -> AppendResult:
        prepared = self._prepare(stream_id, expected_version, events)
        if self._group is not None:
            rows = await self._group.append(stream_id, expected_version, prepared)
        else:
            self._batch_sent(1)
            rows = await self._append_alone(stream_id, expected_version, prepared)
        rows.sort()
        return AppendResult(
            stream_id,
            rows[0][0],
            rows[-1][0],
            tuple(r[1] for r in rows),
            bytes(rows[-1][2]),
            tuple(bytes(r[2]) for r in rows),
        )

    async def _append_alone(
        self, stream_id: str, expected_version: int, prepared: list[PreparedEvent]
    ) -> Rows:
        query, params = append_call(stream_id, expected_version, prepared)
        with Translate(stream_id, expected_version):
            async with self._connection() as conn:
                rows = await (await conn.execute(query, params)).fetchall()
        self._notify_soon()
        return rows

    async def _append_together(self, batch: Sequence[Pending]) -> list[Outcome]:
        """One transaction for the whole batch; each append's rows or exception (`Busy`: its
        stream's lock was held elsewhere, migration 0008). Sorted by stream id (stably: one
        stream's appends keep their order)."""
        order = sorted(range(len(batch)), key=lambda i: batch[i].stream_id)
        query, params = append_batch_call(
            [(batch[i].stream_id, batch[i].expected, batch[i].prepared) for i in order]
        )
        with Translate():
            async with self._connection() as conn:
                rows = await (await conn.execute(query, params)).fetchall()
        self._notify_soon()
        outcomes: list[Outcome] = [[] for _ in batch]
        for number, version, position, digest, state, message, detail, constraint in rows:
            i = order[number - 1]
            found = outcomes[i]
            if state is None and isinstance(found, list):
                found.append((version, position, digest))
            elif state == _BUSY:
                outcomes[i] = Busy(message)
            else:
                one = batch[i]
                outcomes[i] = database_error(
                    one.stream_id, one.expected, state, message, detail, constraint
                )
        return [o or StoreError("the batch returned nothing for this append") for o in outcomes]

    def _batch_sent(self, size: int) -> None:
        for listener in self.append_batches:
            listener(size)

    async def _register_receipt_key(self, key_id: str, public_key: bytes) -> None:
        with Translate():
            async with self._connection() as conn:
                await conn.execute(REGISTER_RECEIPT_KEY, (key_id, public_key))

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
        """Outside any append transaction, on the notifier's own connection (opened on the
        first NOTIFY, and again after one that failed), bounded by the store's timeout like
        any operation. A failure loses nothing: readers also poll."""
        loop = asyncio.get_running_loop()
        try:
            with Translate():
                conn = self._notifying
                if conn is None or lost(conn):
                    await self._stop_notifying()
                    conn = await psycopg.AsyncConnection.connect(self._url, **self._settings)
                    self._notifying = conn
                with Deadline(conn, loop.time() + self._timeout, self._timeout):
                    await conn.execute(NOTIFY)
            return True
        except StoreError as exc:
            await self._stop_notifying()
            log.warning("NOTIFY after an append failed: %s", exc)
            return False

    async def _stop_notifying(self) -> None:
        conn, self._notifying = self._notifying, None
        if conn is not None:
            with contextlib.suppress(psycopg.Error, OSError):
                await conn.close()

    # ---- reading ----------------------------------------------------------------------------

    async def _stream_rows(
        self, stream_id: str, from_version: int, limit: int | None
    ) -> list[tuple[Any, ...]]:
        return await self._fetch(READ_STREAM, (stream_id, from_version, limit))

    async def stream_version(self, stream_id: str) -> int:
        check_stream_id(stream_id)
        rows = await self._fetch(STREAM_VERSION, (stream_id,))
        return int(rows[0][0])

    async def read_feed(self, after: Checkpoint = START, limit: int = 1000) -> list[RecordedEvent]:
        rows = await self._fetch(READ_FEED, (str(after.tx_id), after.position, limit))
        return self._records(rows, feed=True)

    async def feed_head(self) -> Checkpoint:
        rows = await self._fetch(FEED_HEAD, ())
        return Checkpoint(rows[0][0], rows[0][1]) if rows else START

    async def list_streams(
        self, prefix: str = "", after: str = "", limit: int = 100
    ) -> list[StreamInfo]:
        rows = await self._fetch(LIST_STREAMS, (after, prefix, limit))
        return [StreamInfo(stream_id, version) for stream_id, version in rows]

    async def receipt_keys(self) -> list[RegisteredKey]:
        rows = await self._fetch(RECEIPT_KEYS, ())
        return [RegisteredKey(key_id, bytes(key), seen) for key_id, key, seen in rows]

    async def _fetch(self, query: LiteralString, params: Sequence[object]) -> list[tuple[Any, ...]]:
        with Translate():
            async with self._connection() as conn:
                cursor = await conn.execute(query, params, binary=True)
                return await cursor.fetchall()

    @contextlib.asynccontextmanager
    async def _connection(self) -> AsyncIterator[psycopg.AsyncConnection[Any]]:
        """A pooled connection for one operation, which must end within `timeout` of asking
        (see `Deadline`). Connections the server has closed are passed over."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + self._timeout
        while True:
            conn = await self._pool.getconn(timeout=max(0.0, deadline - loop.time()))
            if not lost(conn):
                break
            await conn.close()
            await self._pool.putconn(conn)  # closed: the pool connects a replacement
        try:
            with Deadline(conn, deadline, self._timeout):
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
        lost = False
        while True:
            try:
                conn = await psycopg.AsyncConnection.connect(self._url, **self._settings)
                async with conn:
                    with Deadline(conn, loop.time() + self._timeout, self._timeout):
                        await conn.execute(f"LISTEN {CHANNEL}")
                    if lost:
                        log.warning("event feed listener is listening again")
                    backoff, lost = 0.1, False
                    self._wake_waiters()  # something may have been appended while away
                    while True:
                        async for _ in conn.notifies(timeout=_LISTEN_CHECK):
                            self._wake_waiters()
                        with Deadline(conn, loop.time() + self._timeout, self._timeout):
                            await conn.execute("")
            except (psycopg.Error, OSError, StoreUnavailable) as exc:
                log.warning("event feed listener lost its connection: %s", exc)
                lost = True
            await asyncio.sleep(backoff)
            backoff = min(backoff * 2, 5.0)

    # ---- the installation -------------------------------------------------------------------

    async def try_lead(self, name: str = "background") -> Lead | None:
        seeker = self._lead_seekers.get(name)
        if seeker is None:
            seeker = LeadSeeker(self._url, self._settings, self._timeout, name)
            self._lead_seekers[name] = seeker
        return await seeker.try_lead()

    async def installation(self) -> str:
        rows = await self._fetch("SELECT id FROM installation", ())  # one row (0005)
        if not rows:
            raise StoreError("the event store has no installation row (migration 0005)")
        return str(rows[0][0])
