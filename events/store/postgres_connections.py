"""One PostgreSQL operation's connection, bounded and translated: libpq settings (connect
timeout, TCP keepalives, a server-side `statement_timeout`; the URL's own win), a closed idle
connection found without a round trip, the deadline that ends a wait on a silent server,
and psycopg's errors turned into the store's own (nothing psycopg leaves events/)."""

from __future__ import annotations

import asyncio
import contextlib
import math
import os
import select
import socket
from types import TracebackType
from typing import Any, Final

import psycopg
import psycopg_pool
from psycopg import conninfo

from events.store.base import (
    ConcurrencyError,
    EventIdConflict,
    InvalidEvent,
    InvalidStreamId,
    StoreError,
    StoreUnavailable,
)

_KEEPALIVES: Final = {  # an idle connection across a dead network is found within ~20 s
    "keepalives": 1,
    "keepalives_idle": 10,
    "keepalives_interval": 3,
    "keepalives_count": 3,
    "tcp_user_timeout": 10_000,  # ms that sent bytes may stay unacknowledged
}


def connection_settings(database_url: str, timeout: float) -> dict[str, Any]:
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


def lost(conn: psycopg.AsyncConnection[Any]) -> bool:
    """Whether an idle connection is gone, without a round trip: an idle connection has
    nothing to read, so anything there (an end of file, a terminated backend's farewell)
    means the server has closed it."""
    if conn.closed:
        return True
    poller = select.poll()
    poller.register(conn.pgconn.socket, select.POLLIN)
    return bool(poller.poll(0))


class Deadline:
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


class Translate:
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
        state = exc.sqlstate or ("22000" if isinstance(exc, psycopg.DataError) else "")
        # psycopg calls our own codes (FW...) operational errors too: they are not. 40001
        # here is a hot standby cancelling a feed read that conflicts with the WAL it replays
        # (the store reads at READ COMMITTED, so the primary never raises it): the read is
        # retried, as after a lost connection.
        if (isinstance(exc, psycopg.OperationalError) and not state.startswith("FW")) or (
            state == "40001"
        ):
            raise StoreUnavailable(f"event store unavailable: {exc}") from None
        raise database_error(
            self.stream_id,
            self.expected,
            state,
            exc.diag.message_primary or str(exc),
            exc.diag.message_detail,
            exc.diag.constraint_name,
        ) from None


def database_error(
    stream_id: str,
    expected: int,
    state: str,
    message: str,
    detail: str | None = None,
    constraint: str | None = None,
) -> StoreError:
    """The store's exception for an error the database reported (its SQLSTATE, message,
    detail and constraint name), on an append to `stream_id` at `expected` or elsewhere:
    whether psycopg raised it or `fairway_append_together` reported it for one append."""
    if state == "FW001":
        return ConcurrencyError(stream_id, expected, int(detail or "0"))
    if state == "FW002" or (state == "23505" and constraint == "events_event_id_key"):
        return EventIdConflict(f"stream {stream_id}: {message or 'event id stored'}")
    if state == "FW004":
        return InvalidStreamId(stream_id)
    if state[:2] in ("08", "53", "57"):
        return StoreUnavailable(f"event store unavailable: {message}")
    if state in ("42P01", "42883"):  # undefined table, undefined function
        # New code on a database not migrated yet (a rolling deploy run out of order).
        return StoreError(
            f"the database is not migrated ({message}): run `fairway migrate` with this release"
        )
    if state[:2] == "22":  # data exception
        return InvalidEvent(f"rejected by the database: {message}")
    return StoreError(f"event store failure: {state} {message}")
