"""Group commit in the PostgreSQL store (events/store/postgres_group.py): appends that arrive
while a commit runs go together in the next transaction, each at its own expected version,
each answered with its own outcome, and one that fails fails alone.

How a batch forms here: `asyncio.gather` starts every append in the same turn of the event
loop. The first finds nothing in flight and goes alone; the others queue behind it before its
answer can arrive, and go together next. So `sizes` (what the store reports for each commit)
is [1, n - 1] for n appends, with no timing assumed.
"""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import AsyncIterator, Awaitable
from typing import Any

import psycopg
import pytest
from psycopg import conninfo

from events.codec import Codec, Encoded, default_codec
from events.schema.common import HandDealt
from events.store import (
    AppendResult,
    ConcurrencyError,
    EventIdConflict,
    InvalidEvent,
    NewEvent,
    PostgresStore,
    StoreError,
    StoreUnavailable,
)
from events.store.postgres_sql import append_call
from tests.support.event_samples import dealt, new, started, stream

pytestmark = pytest.mark.integration

POISON_HAND = 666


class PoisonCodec(Codec):
    """Encodes the deal of hand 666 as text that is not JSON, which only the database refuses
    (the store's own checks run on the event, not on these bytes)."""

    def encode(self, event: object) -> Encoded:
        encoded = super().encode(event)
        if isinstance(event, HandDealt) and event.hand == POISON_HAND:
            return Encoded(encoded.type, encoded.schema_version, b'{"type": "hand.dealt", oops')
        return encoded


class Recording:
    def __init__(self, store: PostgresStore) -> None:
        self.store = store
        self.sizes: list[int] = []
        store.append_batches.append(self.sizes.append)


@pytest.fixture
async def pg(database_url: str) -> AsyncIterator[Recording]:
    codec = PoisonCodec(default_codec().event_types)
    async with await PostgresStore.open(database_url, codec=codec, timeout=10.0) as store:
        yield Recording(store)


async def outcomes(*appends: Awaitable[AppendResult]) -> list[AppendResult | BaseException]:
    return await asyncio.wait_for(asyncio.gather(*appends, return_exceptions=True), 30)


def failure(exc: BaseException | AppendResult) -> tuple[object, ...]:
    """What a caller sees of an exception: its type, message and attributes."""
    assert isinstance(exc, StoreError), exc
    return type(exc), str(exc), sorted(vars(exc).items())


async def test_concurrent_appends_commit_together_each_answered_with_its_own_result(
    pg: Recording,
) -> None:
    store = pg.store
    streams = [stream() for _ in range(24)]

    results = await outcomes(*(store.append(s, 0, [new(started()), new(dealt())]) for s in streams))

    assert pg.sizes == [1, 23]
    for stream_id, result in zip(streams, results, strict=True):
        assert isinstance(result, AppendResult)
        stored = await store.read_stream(stream_id)
        assert result.stream_id == stream_id
        assert (result.first_version, result.last_version) == (1, 2)
        assert result.positions == tuple(e.global_position for e in stored)
        assert result.hashes == tuple(e.hash for e in stored)
        assert (await store.verify_stream(stream_id)).head_hash == result.head_hash
    transactions = {e.tx_id for s in streams for e in await store.read_stream(s)}
    assert len(transactions) == 2, "the 23 that waited were committed in one transaction"


async def test_appenders_answered_together_append_again_together(pg: Recording) -> None:
    """Each appends three times in a row, the next as soon as the last is answered: those
    answered by one commit all join the next, none goes ahead alone."""
    store = pg.store

    async def three(stream_id: str) -> None:
        for version in range(3):
            await store.append(stream_id, version, [new()])

    await asyncio.wait_for(asyncio.gather(*(three(stream()) for _ in range(4))), 30)

    assert pg.sizes == [1, 4, 4, 3]


async def test_a_conflicting_append_fails_alone_as_it_would_alone(pg: Recording) -> None:
    store = pg.store
    contested = stream()
    await store.append(contested, 0, [new(started())])
    with pytest.raises(ConcurrencyError) as alone:
        await store.append(contested, 0, [new(started())])
    pg.sizes.clear()
    others = [stream() for _ in range(6)]

    first, *batch = await outcomes(
        store.append(stream(), 0, [new()]),
        *(store.append(s, 0, [new()]) for s in others[:3]),
        store.append(contested, 0, [new(started())]),
        *(store.append(s, 0, [new()]) for s in others[3:]),
    )

    assert pg.sizes == [1, 7]
    assert isinstance(first, AppendResult)
    assert failure(batch[3]) == failure(alone.value)
    assert all(isinstance(r, AppendResult) for i, r in enumerate(batch) if i != 3)
    assert [await store.stream_version(s) for s in others] == [1] * 6
    assert await store.stream_version(contested) == 1


async def test_appends_to_one_stream_in_a_batch_keep_their_order_and_chain(
    pg: Recording,
) -> None:
    store = pg.store
    game = stream()
    ids = [uuid.uuid4() for _ in range(5)]
    before, after = "game:0" + "0" * 31, "game:f" + "f" * 31  # sorted around `game`

    results = await outcomes(
        store.append(stream(), 0, [new()]),
        store.append(game, 0, [NewEvent(ids[0], started()), NewEvent(ids[1], dealt(1))]),
        store.append(after, 0, [new()]),
        store.append(game, 2, [NewEvent(ids[2], dealt(2))]),
        store.append(before, 0, [new()]),
        store.append(game, 3, [NewEvent(ids[3], dealt(3)), NewEvent(ids[4], dealt(4))]),
    )

    assert pg.sizes == [1, 5]
    assert all(isinstance(r, AppendResult) for r in results), results
    ours = [r for r in results if isinstance(r, AppendResult) and r.stream_id == game]
    assert [(r.first_version, r.last_version) for r in ours] == [(1, 2), (3, 3), (4, 5)]
    stored = await store.read_stream(game)
    assert [e.event_id for e in stored] == ids
    assert (await store.verify_stream(game)).version == 5
    assert ours[-1].head_hash == stored[-1].hash


async def test_a_poison_append_in_a_batch_fails_alone_as_it_would_alone(pg: Recording) -> None:
    store = pg.store
    taken = uuid.uuid4()
    await store.append(stream(), 0, [NewEvent(taken, started())])
    poisoned, reused, others = stream(), stream(), [stream() for _ in range(4)]
    alone = []
    for stream_id, events in (
        (poisoned, [new(started()), new(dealt(POISON_HAND))]),
        (reused, [NewEvent(taken, started())]),
    ):
        with pytest.raises(StoreError) as caught:
            await store.append(stream_id, 0, events)
        alone.append(caught.value)
    assert [type(e) for e in alone] == [InvalidEvent, EventIdConflict]
    pg.sizes.clear()

    first, *batch = await outcomes(
        store.append(stream(), 0, [new()]),
        store.append(others[0], 0, [new()]),
        store.append(poisoned, 0, [new(started()), new(dealt(POISON_HAND))]),
        store.append(others[1], 0, [new()]),
        store.append(reused, 0, [NewEvent(taken, started())]),
        *(store.append(s, 0, [new()]) for s in others[2:]),
    )

    assert pg.sizes == [1, 6]
    assert isinstance(first, AppendResult)
    assert failure(batch[1]) == failure(alone[0])
    assert failure(batch[3]) == failure(alone[1])
    assert [await store.stream_version(s) for s in (poisoned, reused)] == [0, 0]
    assert [await store.stream_version(s) for s in others] == [1] * 4


async def test_a_retry_in_the_same_batch_lands_once(pg: Recording) -> None:
    store = pg.store
    game = stream()
    events = [new(started()), new(dealt())]

    results = await outcomes(
        store.append(stream(), 0, [new()]),
        store.append(game, 0, events),
        store.append(game, 0, events),  # the client's retry with the same ids
    )

    assert pg.sizes == [1, 2]
    assert results[1] == results[2]
    assert len(await store.read_stream(game)) == 2


async def test_an_append_whose_stream_is_locked_elsewhere_leaves_its_batch(
    pg: Recording, database_url: str
) -> None:
    """Another transaction holds one stream's lock: the rest of the batch is answered while it
    still does (before, the whole batch waited behind it); the appends to that stream then go
    alone, in their order, and land once the lock is released."""
    store = pg.store
    locked, others = stream(), [stream() for _ in range(3)]
    async with await psycopg.AsyncConnection.connect(database_url) as holder:
        await holder.execute("SELECT pg_advisory_xact_lock(hashtextextended(%s, 0))", (locked,))
        first = asyncio.ensure_future(store.append(stream(), 0, [new()]))
        waiting = [
            asyncio.ensure_future(store.append(locked, 0, [new(started()), new(dealt())])),
            asyncio.ensure_future(store.append(locked, 2, [new(dealt(2))])),
        ]
        answered = await outcomes(first, *(store.append(s, 0, [new()]) for s in others))
        assert all(isinstance(r, AppendResult) for r in answered), answered
        await waiting_for_a_lock(database_url)  # the first of the two, alone
        await holder.rollback()
    results = await outcomes(*waiting)

    assert pg.sizes == [1, 5, 1, 1]
    assert [(r.first_version, r.last_version) for r in results] == [(1, 2), (3, 3)]  # type: ignore[union-attr]
    assert (await store.verify_stream(locked)).version == 3
    assert [await store.stream_version(s) for s in others] == [1] * 3


async def test_an_append_waiting_past_the_timeout_fails_alone(database_url: str) -> None:
    """The lock stays held past the store's timeout: the append to that stream fails as it
    would alone (StoreUnavailable, its outcome unknown), the rest of its batch commits (before,
    every append in the batch failed). Each try may still commit once the lock is released:
    the client retries with the same event ids, which land once."""
    locked, others = stream(), [stream() for _ in range(3)]
    mine = [new(started())]
    async with await PostgresStore.open(database_url, timeout=2.0) as store:
        sizes: list[int] = []
        store.append_batches.append(sizes.append)
        alone: list[BaseException] = []
        async with await psycopg.AsyncConnection.connect(database_url) as holder:
            await holder.execute("SELECT pg_advisory_xact_lock(hashtextextended(%s, 0))", (locked,))
            with pytest.raises(StoreUnavailable) as caught:
                await store.append(locked, 0, mine)
            alone.append(caught.value)
            sizes.clear()
            first, stuck, *rest = await outcomes(
                store.append(stream(), 0, [new()]),
                store.append(locked, 0, mine),
                *(store.append(s, 0, [new()]) for s in others),
            )
            await holder.rollback()

        assert all(isinstance(r, AppendResult) for r in rest), rest
        assert isinstance(first, AppendResult)
        assert type(stuck) is type(alone[0]), stuck
        assert sizes == [1, 4, 1]
        assert [await store.stream_version(s) for s in others] == [1] * 3
        assert (await store.append(locked, 0, mine)).first_version == 1
        assert len(await store.read_stream(locked)) == 1


async def test_a_lost_connection_fails_the_whole_batch_unavailable_and_a_retry_lands_once(
    pg: Recording, database_url: str
) -> None:
    """The batch waits for a transaction elsewhere (which holds, uncommitted, an event id that
    one append of the batch uses: the unique index waits for its outcome); the batch's
    connection is then killed. Every append in it hears StoreUnavailable (as a lone append on
    a lost connection does: the caller cannot know whether it committed); their retries land
    once. (A stream's lock held elsewhere no longer holds a batch: that append leaves it.)"""
    store = pg.store
    contested, others = stream(), [stream() for _ in range(3)]
    taken = uuid.uuid4()
    appends = {s: [new(started())] for s in (contested, *others)}
    appends[contested] = [NewEvent(taken, started())]
    async with await psycopg.AsyncConnection.connect(database_url) as holder:
        elsewhere = stream()
        query, params = append_call(
            elsewhere, 0, store._prepare(elsewhere, 0, [NewEvent(taken, started())])
        )
        await holder.execute(query, params)  # in a transaction left open
        batch = asyncio.ensure_future(
            outcomes(
                store.append(stream(), 0, [new()]),
                *(store.append(s, 0, e) for s, e in appends.items()),
            )
        )
        backend = await waiting_for_a_lock(database_url)
        async with await psycopg.AsyncConnection.connect(database_url, autocommit=True) as admin:
            await admin.execute("SELECT pg_terminate_backend(%s)", (backend,))
        first, *failed = await batch
        await holder.rollback()

    assert pg.sizes == [1, 4]
    assert isinstance(first, AppendResult)
    assert all(isinstance(f, StoreUnavailable) for f in failed), failed
    for stream_id, events in appends.items():
        retried = await store.append(stream_id, 0, events)
        assert retried.first_version == 1
        assert len(await store.read_stream(stream_id)) == 1


async def waiting_for_a_lock(database_url: str) -> int:
    """The pid of a backend of this database waiting for a lock (polled, at most 10 s)."""
    async with await psycopg.AsyncConnection.connect(database_url, autocommit=True) as conn:
        for _ in range(200):
            row = await (
                await conn.execute(
                    "SELECT pid FROM pg_stat_activity WHERE wait_event_type = 'Lock'"
                    " AND datname = current_database()"
                )
            ).fetchone()
            if row is not None:
                return int(row[0])
            await asyncio.sleep(0.05)
    raise AssertionError("no append waited for a lock within 10 s")


async def test_the_app_role_appends_in_batches_through_fairway_append_only(
    database_url: str,
) -> None:
    as_app = conninfo.make_conninfo(database_url, options="-c role=fairway_app")
    streams = [stream() for _ in range(5)]
    async with await PostgresStore.open(as_app) as store:
        sizes: list[int] = []
        store.append_batches.append(sizes.append)
        results = await outcomes(*(store.append(s, 0, [new(), new(dealt())]) for s in streams))
        assert sizes == [1, 4]
        assert all(isinstance(r, AppendResult) for r in results), results
        for s in streams:
            assert (await store.verify_stream(s)).version == 2

    async with await psycopg.AsyncConnection.connect(database_url, autocommit=True) as conn:
        rows: list[Any] = await (
            await conn.execute(
                "SELECT p.prosecdef, p.proconfig,"
                " has_function_privilege('fairway_app', p.oid, 'EXECUTE'),"
                " coalesce(p.proacl::text[], '{}') FROM pg_proc p"
                " WHERE p.proname IN ('fairway_append_batch', 'fairway_append_together')"
            )
        ).fetchall()
    assert len(rows) == 2  # 0007's, kept for the previous release; 0008's, which the store calls
    for definer, config, app_may_run, acl in rows:
        assert definer is False, "it must run as its caller, who appends through fairway_append"
        assert config == ["search_path=pg_catalog, public, pg_temp"]
        assert app_may_run is True
        assert not any(item.startswith("=") for item in acl), "PUBLIC may execute it"
