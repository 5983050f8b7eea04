"""What only PostgreSQL can show: late commits and the feed, tampering, the app role."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any

import psycopg
import pytest
from psycopg import conninfo

from events.codec import GENESIS_HASH
from events.store import ChainBroken, PostgresStore, StoreUnavailable, open_store
from events.store.postgres_sql import CHANNEL, append_call
from tests.integration.events.conftest import read_feed_until, settled_checkpoint
from tests.support.event_samples import a_game, dealt, new, started, stream

pytestmark = pytest.mark.integration


@pytest.fixture
async def pg(database_url: str) -> AsyncIterator[PostgresStore]:
    async with await PostgresStore.open(database_url, poll_interval=0.2) as store:
        yield store


async def raw(database_url: str, autocommit: bool = True) -> psycopg.AsyncConnection[Any]:
    return await psycopg.AsyncConnection.connect(database_url, autocommit=autocommit)


async def append_in(
    conn: psycopg.AsyncConnection[Any], store: PostgresStore, stream_id: str
) -> int:
    """Append one event on `conn` (inside its open transaction) by the statement the store
    sends; returns its global position."""
    query, params = append_call(stream_id, 0, store._prepare(stream_id, 0, [new(started())]))
    rows = await (await conn.execute(query, params)).fetchall()
    return int(rows[0][1])


async def test_the_feed_never_skips_a_transaction_that_commits_late(
    pg: PostgresStore, database_url: str
) -> None:
    head = await pg.feed_head()
    held, later = stream(), stream()

    async with await raw(database_url, autocommit=False) as slow:
        # the same SQL path as the store, in a transaction held open
        held_position = await append_in(slow, pg, held)
        first = await pg.append(later, 0, [new(), new(dealt())])
        await pg.append(later, 2, [new(dealt(2))])

        assert held_position < min(first.positions), "reading by position would skip it"
        visible = [e.stream_id for e in await pg.read_feed(head)]
        assert held not in visible
        assert later not in visible, "the feed went past an open transaction"
        await slow.commit()

    events = await read_feed_until(pg, head, {held, later}, count=4)
    assert [(e.stream_id, e.version) for e in events] == [
        (held, 1),
        (later, 1),
        (later, 2),
        (later, 3),
    ]


async def test_the_feed_returns_a_late_transaction_that_started_writing_later(
    pg: PostgresStore, database_url: str
) -> None:
    """A transaction that opens first but writes after others commit comes after them."""
    head = await pg.feed_head()
    held, early = stream(), stream()
    async with await raw(database_url, autocommit=False) as slow:
        await slow.execute("SELECT 1")  # open, no transaction id yet
        await pg.append(early, 0, [new()])
        await append_in(slow, pg, held)
        await slow.commit()

    events = await read_feed_until(pg, head, {held, early}, count=2)
    assert [e.stream_id for e in events] == [early, held]


async def test_an_append_sends_a_notification_after_commit(
    pg: PostgresStore, database_url: str
) -> None:
    async with await raw(database_url) as listener:
        await listener.execute(f"LISTEN {CHANNEL}")
        await pg.append(stream(), 0, [new()])
        got = [n.channel async for n in listener.notifies(timeout=5.0, stop_after=1)]
    assert got == [CHANNEL]


async def test_the_notifications_come_from_a_connection_of_the_notifiers_own(
    database_url: str,
) -> None:
    """Each NOTIFY goes out on one connection kept for it, not a pooled one (which costs
    twice the client CPU, and there is a NOTIFY for nearly every append at a steady rate);
    when that connection is lost, the next NOTIFY opens another."""
    async with (
        await PostgresStore.open(database_url, min_size=1, max_size=1) as store,
        await raw(database_url) as listener,
    ):
        [(pooled,)] = await store._fetch("SELECT pg_backend_pid()", ())  # the pool's only one
        await listener.execute(f"LISTEN {CHANNEL}")

        async def notified() -> int:
            await store.append(stream(), 0, [new()])
            [got] = [n async for n in listener.notifies(timeout=10.0, stop_after=1)]
            return got.pid

        senders = {await notified() for _ in range(3)}
        assert len(senders) == 1
        [sender] = senders
        assert sender != pooled
        async with await raw(database_url) as admin:
            await admin.execute("SELECT pg_terminate_backend(%s)", (sender,))
        assert await notified() not in (sender, pooled)


async def test_a_reader_is_woken_by_notify_not_by_polling(database_url: str) -> None:
    async with (
        await PostgresStore.open(database_url, poll_interval=60) as reader,
        await PostgresStore.open(database_url) as writer,
    ):
        head = await settled_checkpoint(reader)
        waiting = asyncio.create_task(reader.wait_for_events(head, timeout=60))
        await asyncio.sleep(0.3)  # the listener is up
        await writer.append(stream(), 0, [new()])
        # the feed may lag while another transaction in the cluster is open; later appends
        # notify again, so keep appending until the reader wakes
        for _ in range(40):
            done, _ = await asyncio.wait({waiting}, timeout=0.25)
            if done:
                break
            await writer.append(stream(), 0, [new()])
        assert waiting.done(), "no NOTIFY woke the reader"
        assert waiting.result() is True


async def test_altered_rows_break_the_chain_at_their_version(
    pg: PostgresStore, database_url: str
) -> None:
    changed, removed = stream(), stream()
    await pg.append(changed, 0, a_game(hands=2))
    await pg.append(removed, 0, a_game(hands=2))
    assert (await pg.verify_stream(changed)).version == 4

    async with await raw(database_url) as superuser:
        with pytest.raises(psycopg.Error, match="immutable") as refused:
            await superuser.execute("UPDATE events SET type = type WHERE stream_id = %s", [changed])
        assert refused.value.sqlstate == "FW003"
        await superuser.execute("SET session_replication_role = replica")  # triggers off
        await superuser.execute(
            "UPDATE events SET data = replace(data::text, '\"hand\":2', '\"hand\":7')::json"
            " WHERE stream_id = %s AND stream_version = 3",
            (changed,),
        )
        await superuser.execute(
            "DELETE FROM events WHERE stream_id = %s AND stream_version = 2", (removed,)
        )

    with pytest.raises(ChainBroken) as caught:
        await pg.verify_stream(changed)
    assert (caught.value.stream_id, caught.value.version) == (changed, 3)
    assert changed in str(caught.value)
    with pytest.raises(ChainBroken) as caught:
        await pg.verify_stream(removed)
    assert (caught.value.stream_id, caught.value.version) == (removed, 2)


async def test_the_app_role_may_read_and_append_but_never_change(database_url: str) -> None:
    as_app = conninfo.make_conninfo(database_url, options="-c role=fairway_app")
    sid = stream()
    async with await PostgresStore.open(as_app) as store:
        await store.append(sid, 0, a_game())
        assert len(await store.read_stream(sid)) == 4
        assert (await store.verify_stream(sid)).version == 4
        assert isinstance(await store.read_feed(await store.feed_head()), list)

    async with await raw(database_url) as conn:
        await conn.execute("SET ROLE fairway_app")
        assert (await (await conn.execute("SELECT current_user")).fetchone()) == ("fairway_app",)
        for statement in (
            "UPDATE events SET type = type",
            "DELETE FROM events",
            "TRUNCATE events",
            "ALTER TABLE events DISABLE TRIGGER events_immutable",
            "SET session_replication_role = replica",
            "INSERT INTO events (tx_id, stream_id, stream_version, event_id, type,"
            " schema_version, data, metadata, hash) VALUES ('1', 'x', 1, gen_random_uuid(),"
            " 'game.started', 1, '{}', '{}', sha256(''))",
            FORGED_INSERT,
        ):
            with pytest.raises(psycopg.errors.InsufficientPrivilege):
                await conn.execute(statement)


FORGED_INSERT = (
    "INSERT INTO events (stream_id, stream_version, event_id, type, schema_version, data,"
    " metadata, hash) VALUES ('game:forged', 1, gen_random_uuid(), 'game.started', 1,"
    """ '{"type":"game.started","variant":"golf","players":2}', '{}', sha256(''))"""
)


async def test_the_app_role_appends_through_the_function_only(
    pg: PostgresStore, database_url: str
) -> None:
    """The probe of issue 7: the app role's own INSERT is refused (permission denied); the
    function, which runs as its owner, appends for it and chains the row."""
    sid = stream()
    async with await raw(database_url) as conn:
        await conn.execute("SET ROLE fairway_app")
        with pytest.raises(psycopg.errors.InsufficientPrivilege, match="permission denied"):
            await conn.execute(FORGED_INSERT)
        one = await append_in(conn, pg, sid)
        query, params = append_call(sid, 1, pg._prepare(sid, 1, [new(dealt()), new(dealt(2))]))
        returned = await (await conn.execute(query, params)).fetchall()

    stored = await pg.read_stream(sid, prev_hash=GENESIS_HASH)
    assert [e.global_position for e in stored] == [one, *(row[1] for row in returned)]
    assert [(row[0], row[2]) for row in returned] == [(e.version, e.hash) for e in stored[1:]]


async def test_a_temporary_table_cannot_stand_in_for_the_events_table(
    pg: PostgresStore, database_url: str
) -> None:
    """The function's search_path puts pg_temp last: a caller's temporary `events` (which
    the default search_path would find first) is never the one written."""
    sid = stream()
    async with await raw(database_url) as conn:
        await conn.execute("SET ROLE fairway_app")
        await conn.execute("CREATE TEMPORARY TABLE events (LIKE public.events INCLUDING ALL)")
        await append_in(conn, pg, sid)  # the one-event overload
        query, params = append_call(sid, 1, pg._prepare(sid, 1, [new(dealt()), new(dealt(2))]))
        await conn.execute(query, params)  # the array one
        temporary = await (await conn.execute("SELECT count(*) FROM pg_temp.events")).fetchone()
    assert temporary == (0,)
    assert len(await pg.read_stream(sid, prev_hash=GENESIS_HASH)) == 3


async def test_the_append_function_runs_as_its_owner_with_a_pinned_search_path(
    database_url: str,
) -> None:
    async with await raw(database_url) as conn:
        rows = await (
            await conn.execute(
                "SELECT p.prosecdef, p.proconfig, pg_get_userbyid(p.proowner),"
                " has_function_privilege('fairway_app', p.oid, 'EXECUTE'),"
                " coalesce(p.proacl::text[], '{}')"
                " FROM pg_proc p WHERE p.proname = 'fairway_append'"
            )
        ).fetchall()
        (owner,) = await (await conn.execute("SELECT current_user")).fetchone() or ("",)
    assert len(rows) == 2
    for definer, config, function_owner, app_may_run, acl in rows:
        assert definer is True
        assert config == ["search_path=pg_catalog, public, pg_temp"]
        assert function_owner == owner
        assert app_may_run is True
        assert not any(item.startswith("=") for item in acl), "PUBLIC may execute it"


async def test_an_unreachable_database_is_store_unavailable() -> None:
    with pytest.raises(StoreUnavailable):
        await open_store("postgresql://postgres@127.0.0.1:1/nothing?connect_timeout=1", ".")


async def test_a_connection_the_server_closed_while_idle_is_replaced(database_url: str) -> None:
    # (lost during an operation: StoreUnavailable, tests/integration/events/test_postgres_faults.py)
    name = "fairway-test-lost-connection"
    url = conninfo.make_conninfo(database_url, application_name=name)
    store = await PostgresStore.open(url, min_size=1, max_size=1, timeout=2)
    async with await raw(database_url) as admin:
        await admin.execute(
            "SELECT pg_terminate_backend(pid, 5000) FROM pg_stat_activity"
            " WHERE application_name = %s AND datname = current_database()",  # not another run's
            (name,),
        )
    try:
        assert (await store.append(stream(), 0, [new()])).first_version == 1
    finally:
        await store.close()
