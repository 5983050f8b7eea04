"""A database that goes silent or away: every operation gives up within the store's deadline
with StoreUnavailable, and the store heals by itself when the database returns.

The store reaches PostgreSQL through a TCP proxy the tests control (tests/support/tcp_proxy.py).
Each operation is awaited under a generous bound, five times the deadline: no speed is
measured, but an operation that waits for the partition (or for the pool's old 10 s) fails.
"""

from __future__ import annotations

import asyncio
import logging
import uuid
from collections.abc import AsyncIterator, Awaitable, Iterator

import pytest

from events.store import NewEvent, PostgresStore, StoreUnavailable, postgres
from tests.support.event_samples import dealt, new, started, stream
from tests.support.tcp_proxy import TcpProxy

pytestmark = [pytest.mark.integration, pytest.mark.slow]

DEADLINE = 1.0
HANG_GUARD = 5 * DEADLINE


@pytest.fixture
def proxy(database_url: str) -> Iterator[TcpProxy]:
    with TcpProxy.to(database_url) as running:
        yield running


@pytest.fixture
async def store(proxy: TcpProxy) -> AsyncIterator[PostgresStore]:
    async with await PostgresStore.open(
        proxy.url, timeout=DEADLINE, poll_interval=0.2, max_size=4
    ) as opened:
        yield opened


async def unavailable(operation: Awaitable[object]) -> None:
    with pytest.raises(StoreUnavailable):
        await asyncio.wait_for(operation, HANG_GUARD)


async def recovered(store: PostgresStore, stream_id: str, within: float = 30.0) -> None:
    """Waits until the store reads again, with no help from the test but time."""
    loop = asyncio.get_running_loop()
    give_up = loop.time() + within
    while True:
        try:
            await asyncio.wait_for(store.read_stream(stream_id), HANG_GUARD)
            return
        except StoreUnavailable:
            if loop.time() > give_up:
                raise
            await asyncio.sleep(0.1)


async def test_a_silent_database_makes_every_operation_unavailable_then_heals(
    store: PostgresStore, proxy: TcpProxy
) -> None:
    held = stream()
    acknowledged = await store.append(held, 0, [new(started()), new(dealt())])

    proxy.blackhole()
    await unavailable(store.read_stream(held))
    await unavailable(store.stream_version(held))
    await unavailable(store.feed_head())
    await unavailable(store.append(held, 2, [new(dealt(2))]))
    await unavailable(store.read_stream(held))  # the pool has no answering connection left

    proxy.restore()
    await recovered(store, held)
    events = await store.read_stream(held)
    assert [e.version for e in events][:2] == [1, 2]
    assert acknowledged.last_version == 2


async def test_an_append_whose_outcome_is_unknown_is_unavailable_and_its_retry_lands_once(
    store: PostgresStore, proxy: TcpProxy
) -> None:
    game = stream()
    await store.append(game, 0, [new(started())])
    retried = [NewEvent(uuid.uuid4(), dealt()), NewEvent(uuid.uuid4(), dealt(2))]

    proxy.blackhole()
    # Sent, never answered: it may commit once the network heals. Never reported as done.
    await unavailable(store.append(game, 1, retried))
    proxy.restore()
    await recovered(store, game)

    result = await store.append(game, 1, retried)  # the client's retry: the same event ids
    assert (result.first_version, result.last_version) == (2, 3)
    stored = await store.read_stream(game)
    assert [e.event_id for e in stored[1:]] == [e.event_id for e in retried]


async def test_a_database_that_went_away_makes_every_operation_unavailable_then_heals(
    store: PostgresStore, proxy: TcpProxy
) -> None:
    game = stream()
    await store.append(game, 0, [new(started())])

    proxy.cut()
    await unavailable(store.read_stream(game))  # the pooled connections were reset
    await unavailable(store.append(game, 1, [new(dealt())]))
    await unavailable(store.feed_head())
    await asyncio.sleep(DEADLINE * 3)  # long enough for the pool to back off reconnecting
    await unavailable(store.list_streams())

    proxy.restore()
    await recovered(store, game)
    result = await store.append(game, 1, [new(dealt())])
    assert result.first_version == 2
    assert [e.version for e in await store.read_stream(game)] == [1, 2]


async def test_the_feed_listener_notices_a_silent_connection_and_listens_again(
    proxy: TcpProxy, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    monkeypatch.setattr(postgres, "_LISTEN_CHECK", 0.3)
    # polling once a minute: only a notification on a live listener wakes a waiter in time
    async with (
        await PostgresStore.open(proxy.url, timeout=DEADLINE, poll_interval=60) as reader,
        await PostgresStore.open(proxy.url, timeout=DEADLINE) as writer,
    ):
        game = stream()
        await writer.append(game, 0, [new(started())])
        head = await reader.feed_head()
        await reader.wait_for_events(head, timeout=0.01)  # starts the listener

        proxy.blackhole()
        with caplog.at_level(logging.WARNING, logger=postgres.__name__):
            # it notices within _LISTEN_CHECK + DEADLINE; generous seconds for a busy machine
            async with asyncio.timeout(30):
                while "listener lost its connection" not in caplog.text:
                    await asyncio.sleep(0.1)
            proxy.restore()
            # back on a fresh connection after its back-off (seconds on a busy machine): the
            # notification below must reach it there, not the wake-up of its return
            async with asyncio.timeout(30):
                while "listener is listening again" not in caplog.text:
                    await asyncio.sleep(0.1)
        await recovered(reader, game)
        head = await reader.feed_head()

        await writer.append(game, 1, [new(dealt())])
        # woken by the notification well inside the minute of the next poll (generous
        # seconds: the proxy's thread shares this process with the test under load)
        assert await asyncio.wait_for(reader.wait_for_events(head, timeout=20.0), 30.0)
