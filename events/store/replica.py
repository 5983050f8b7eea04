"""The feed read from a PostgreSQL streaming replica (FAIRWAY_FEED_DATABASE_URL).

A `ReplicaStore` is a `PostgresStore` on a physical hot standby of the primary, for the
processes that only read the feed (the projector, the live-stream watcher, the referee, the
bots, the round keeper). It never writes: an append through it is a `StoreError`, so a
command always decides and appends on the primary, and a client reads its own writes
through the command path whatever the replica's lag.

Why the feed stays gap-free on a standby (docs/EVENT_STORE.md has the argument on the
primary): the standby replays the primary's WAL in order, and `pg_current_snapshot()` there
is built from the transactions the replayed WAL shows running (`KnownAssignedXids`). An id
the standby has not met yet is above every id it has met, so above the snapshot's xmin; ids
skipped over are counted running until the WAL shows them ended. So every row with `tx_id`
below the standby's xmin belongs to a transaction whose end has been replayed: the set is
final there too, and only grows as replay goes on. `tx_id` and `global_position` are the
primary's own values, copied by the WAL, so a checkpoint means the same on both servers.
A logical replica would not do: its snapshots count its own transactions, not the primary's.

Wake-ups: NOTIFY is not replicated, and a standby refuses LISTEN. The store takes its
wake-ups from the primary's LISTEN connection (`EventStore.wake_listeners`): a notification
means the primary has committed something that the standby will show a moment later, so a
woken waiter chases, reading the standby after 2 ms, then 4, 8... up to the poll interval;
without a wake-up it polls at the poll interval as on the primary.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Sequence
from typing import Final

from events.codec import Codec
from events.store.base import AppendResult, Checkpoint, NewEvent, StoreError, StoreUnavailable
from events.store.contract import EventStore
from events.store.lead import Lead
from events.store.postgres import PostgresStore

log = logging.getLogger(__name__)

CHASE_FIRST: Final = 0.002
"""Seconds a waiter woken by the primary first waits before it reads the standby again; each
empty read doubles it, up to the poll interval."""

READ_ONLY: Final = (
    "the feed replica (FAIRWAY_FEED_DATABASE_URL) is read-only: appends go to the primary"
)
_REPLAY_LAG: Final = (  # seconds the standby's replay is behind; 0 when it has replayed all
    "SELECT pg_is_in_recovery(), CASE"
    " WHEN NOT pg_is_in_recovery() THEN 0"
    " WHEN pg_last_wal_receive_lsn() = pg_last_wal_replay_lsn() THEN 0"
    " ELSE extract(epoch FROM now() - pg_last_xact_replay_timestamp())::float8 END"
)


class ReplicaStore(PostgresStore):
    """The feed (and stream reads) from a standby; wake-ups from the primary."""

    primary: EventStore | None = None
    _hooked = False
    _woke_at = float("-inf")

    @classmethod
    async def open_replica(
        cls,
        database_url: str,
        primary: EventStore,
        *,
        codec: Codec | None = None,
        max_size: int = 10,
        poll_interval: float = 0.5,
        timeout: float = 2.0,
    ) -> ReplicaStore:
        """Open the standby at `database_url` as the feed of `primary`. Refuses a server
        that holds another event store (another installation id): a replica of something
        else would feed the read models another store's events."""
        try:
            store = await cls.open(
                database_url,
                codec=codec or primary.codec,
                min_size=1,
                max_size=max_size,
                poll_interval=poll_interval,
                timeout=timeout,
                group_commit=False,  # it appends nothing
                pool_name="fairway-feed-replica",
            )
        except StoreUnavailable as exc:
            raise StoreUnavailable(f"the feed replica: {exc}") from None
        store.primary = primary
        try:
            mine, theirs = await store.installation(), await primary.installation()
            if mine != theirs:
                raise StoreError(
                    f"the feed replica holds event store {mine}, the primary {theirs}: "
                    "FAIRWAY_FEED_DATABASE_URL must name a streaming replica of DATABASE_URL"
                )
            in_recovery, _ = await store.replication_lag_row()
            if not in_recovery:
                log.warning("the feed replica is not in recovery (a primary, or promoted)")
        except BaseException:
            await store.close()
            raise
        return store

    async def append(
        self, stream_id: str, expected_version: int, events: Sequence[NewEvent]
    ) -> AppendResult:
        raise StoreError(READ_ONLY)

    async def _register_receipt_key(self, key_id: str, public_key: bytes) -> None:
        raise StoreError(READ_ONLY)

    async def try_lead(self, name: str = "background") -> Lead | None:
        """The primary's: a standby's advisory locks are its own, shared with no one."""
        if self.primary is None:
            raise StoreError("a feed replica without its primary leads nothing")
        return await self.primary.try_lead(name)

    async def replication_lag_row(self) -> tuple[bool, float | None]:
        """Whether the server is a standby, and how many seconds its replay is behind the
        WAL it has received (None: nothing replayed since it started)."""
        rows = await self._fetch(_REPLAY_LAG, ())
        in_recovery, lag = rows[0]
        return bool(in_recovery), None if lag is None else max(0.0, float(lag))

    async def source_head(self) -> Checkpoint:
        """The primary's head: a generation whose checkpoint is past this replica's head was
        advanced by a reader nearer the primary, and this replica lags; only a primary whose
        head is behind it went back (a restore). While the primary does not answer, this
        replica's own head."""
        if self.primary is not None:
            with contextlib.suppress(StoreUnavailable):
                return await self.primary.feed_head()
        return await self.feed_head()

    # ---- waking readers ---------------------------------------------------------------------

    async def _start_listening(self) -> None:
        """No LISTEN here (a standby refuses it): the primary's listener wakes us."""
        if self.primary is None:
            return  # opened without a primary: polling alone
        if not self._hooked:
            self.primary.wake_listeners.append(self._primary_woke)
            self._hooked = True
        await self.primary._start_listening()

    def _primary_woke(self) -> None:
        self._woke_at = asyncio.get_running_loop().time()
        self._wake_waiters()

    async def wait_for_events(self, after: Checkpoint, timeout: float) -> bool:
        """As on the primary, but a wake-up means the standby shows the news shortly, not
        yet: after one, look again soon and then less and less often."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout
        await self._start_listening()
        recent = loop.time() - self._woke_at < self._poll_interval
        step = CHASE_FIRST if recent else self._poll_interval
        while True:
            signal = self._appended  # taken before looking, so no wake-up falls between
            if await self.read_feed(after, limit=1):
                return True
            remaining = deadline - loop.time()
            if remaining <= 0:
                return False
            try:  # asyncio.timeout, not wait_for, which may lose a cancel (contract.py)
                async with asyncio.timeout(min(remaining, step)):
                    await signal.wait()
                step = CHASE_FIRST
            except TimeoutError:
                step = min(step * 2, self._poll_interval)

    async def close(self) -> None:
        if self.primary is not None and self._hooked:
            with contextlib.suppress(ValueError):
                self.primary.wake_listeners.remove(self._primary_woke)
            self._hooked = False
        await super().close()


async def open_feed(
    primary: EventStore,
    feed_url: str | None,
    *,
    pool_max_size: int = 10,
    poll_interval: float = 0.5,
    db_timeout: float = 2.0,
) -> EventStore:
    """The store the feed's readers read: the replica at `feed_url`, else `primary` itself.
    Close it with `close_feed`."""
    if not feed_url:
        return primary
    return await ReplicaStore.open_replica(
        feed_url,
        primary,
        max_size=pool_max_size,
        poll_interval=poll_interval,
        timeout=db_timeout,
    )


async def close_feed(feed: EventStore, primary: EventStore) -> None:
    """Close what `open_feed` opened (the primary is its owner's to close)."""
    if feed is not primary:
        await feed.close()
