"""The installation's lead on PostgreSQL: a session advisory lock (`pg_try_advisory_lock`) on a
connection of its own, taken without waiting. The server frees it when that connection ends:
a process that dies, is killed or loses the network gives the lead up with its connection, and
another process takes it at its next try.

The holder checks its connection every `CHECK` seconds without a round trip (a server that
closed it has left something to read), and with one every `PING` seconds, bounded by the
store's timeout (a silent network would hold it for ever); either failing, the lead is lost."""

from __future__ import annotations

import asyncio
import contextlib
import zlib
from typing import Any, Final

import psycopg

from events.store.base import StoreUnavailable
from events.store.lead import Lead
from events.store.postgres_connections import Deadline, Translate, lost

LOCK_CLASS: Final = 0x46574159  # "FWAY": the two-key form, apart from the streams' locks
CHECK: Final = 0.5
PING: Final = 5.0


def lock_key(name: str) -> int:
    """The lock's second key for the lead called `name`: its CRC-32 as a signed int4."""
    return (zlib.crc32(name.encode()) ^ 0x80000000) - 0x80000000


class LeadSeeker:
    """Tries to take the lead on a connection of its own, kept between tries (a process
    standing by tries every few seconds: one connection, not one a try). The connection
    that takes the lead goes with it; the next try, after the lead is lost, opens another."""

    def __init__(self, url: str, settings: dict[str, Any], timeout: float, name: str) -> None:
        self._key = lock_key(name)
        self._url = url
        self._settings = settings
        self._timeout = timeout
        self._conn: psycopg.AsyncConnection[Any] | None = None

    async def try_lead(self) -> Lead | None:
        """The lead, or None when another session holds it."""
        loop = asyncio.get_running_loop()
        if self._conn is not None and lost(self._conn):
            await self.close()
        if self._conn is None:
            with Translate():
                self._conn = await psycopg.AsyncConnection.connect(self._url, **self._settings)
        conn = self._conn
        try:
            with Translate(), Deadline(conn, loop.time() + self._timeout, self._timeout):
                cursor = await conn.execute(
                    "SELECT pg_try_advisory_lock(%s, %s)", (LOCK_CLASS, self._key)
                )
                row = await cursor.fetchone()
        except BaseException:
            await self.close()
            raise
        if not (row and row[0]):
            return None
        self._conn = None
        return PostgresLead(conn, self._timeout)

    async def close(self) -> None:
        conn, self._conn = self._conn, None
        if conn is not None:
            with contextlib.suppress(psycopg.Error, OSError):
                await conn.close()


class PostgresLead(Lead):
    def __init__(self, conn: psycopg.AsyncConnection[Any], timeout: float) -> None:
        self._conn = conn
        self._timeout = timeout

    async def lost(self) -> None:
        loop = asyncio.get_running_loop()
        pinged = loop.time()
        while not lost(self._conn):
            await asyncio.sleep(CHECK)
            if loop.time() - pinged < PING:
                continue
            pinged = loop.time()
            try:
                with Deadline(self._conn, loop.time() + self._timeout, self._timeout):
                    await self._conn.execute("")
            except (psycopg.Error, OSError, StoreUnavailable):
                return

    async def release(self) -> None:
        """Close the connection: the server frees the lock with the session."""
        with contextlib.suppress(psycopg.Error, OSError):
            await self._conn.close()
