"""The feed's readers on a PostgreSQL streaming replica (FAIRWAY_FEED_DATABASE_URL), against a
primary and a hot standby of the test's own (tests/support/pg_replica.py): appends go to the
primary, the projector and the live streams' watcher read the standby.

- Games appended by concurrent writers through the primary, while a projector follows the
  standby: every read model equals a rebuild from the primary, key for key, and the standby's
  feed, read as it grew, is the primary's feed, each event once, in the same order.
- The standby's feed holds back behind a transaction still open on the primary, though the
  standby has replayed the later commits: the gap-safety argument holds on a hot standby.
- A projector whose standby stops falls behind (logged, the lag shown against the primary,
  `fairway_feed_replica_up 0`) and, once the standby is back, catches up losing nothing.
- An API started with the setting serves a game's live stream, the actions posted to it
  (the primary): the news comes from the standby (replay paused, nothing arrives; resumed,
  it does), and `/ready` says `degraded` while the standby is down.
"""

from __future__ import annotations

import asyncio
import os
import random
import secrets
import signal
import subprocess
import sys
import time
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import httpx
import msgspec
import psycopg
import pytest

from events.store import START, Checkpoint, PostgresStore, RecordedEvent, ReplicaStore, StoreError
from projections import projector as projector_module
from projections.catalog import PROJECTIONS, fresh
from projections.memory import MemoryProjectionStore
from projections.projector import Projector
from projections.redis_store import RedisProjectionStore
from projections.status import statuses
from service.ops.background import end
from service.read.projections import replica_metrics
from tests.api.players import open_table, play_step
from tests.api.server import instance_settings, running_server
from tests.api.sse import Stream
from tests.integration.events.conftest import settled_checkpoint
from tests.integration.events.test_postgres_event_store import append_in
from tests.support import pg_replica
from tests.support.children import dies_with_us
from tests.support.event_samples import dealt, new, stream
from tests.support.logs import captured_logs
from tests.support.pg_replica import ReplicaPair, replica_pair
from tests.support.played_games import append_interleaved, game_streams
from tests.support.projected import built_to, caught_up, differences, dumps
from tests.support.redis_keys import forget
from tests.support.tournament_history import append_history, tournament_history

pytestmark = pytest.mark.integration

BOUND = 45.0
"""Seconds any wait here may take on a loaded machine; never the subject of an assertion."""


@pytest.fixture(scope="module")
def pair() -> Iterator[ReplicaPair]:
    with replica_pair() as made:
        yield made


@pytest.fixture
async def primary(pair: ReplicaPair) -> AsyncIterator[PostgresStore]:
    async with await PostgresStore.open(pair.primary.url(), poll_interval=0.1) as store:
        yield store


@pytest.fixture
async def replica(pair: ReplicaPair, primary: PostgresStore) -> AsyncIterator[ReplicaStore]:
    store = await ReplicaStore.open_replica(pair.standby.url(), primary, poll_interval=0.1)
    try:
        yield store
    finally:
        await store.close()


@pytest.fixture
async def redis_pstore(redis_url: str) -> AsyncIterator[RedisProjectionStore]:
    prefix = f"rep{secrets.token_hex(4)}"
    store = RedisProjectionStore.from_url(redis_url, prefix)
    try:
        yield store
    finally:
        await store.close()
        await forget(redis_url, prefix)


async def append_games(store: PostgresStore, count: int, seed: int, writers: int = 4) -> None:
    """`count` games, from `writers` concurrent appenders (their transactions interleave),
    and a tournament beside them."""
    games = game_streams(count, seed)
    shares = [games[i::writers] for i in range(writers)]
    await asyncio.gather(
        append_history(store, tournament_history(seed, finish=True)),
        *(append_interleaved(store, share, seed + i, 8, 2) for i, share in enumerate(shares)),
    )


async def follow(feed: ReplicaStore, until: Checkpoint, into: list[RecordedEvent]) -> None:
    """Read the feed from the start, as it grows, until `until` has been read."""
    checkpoint = START
    while checkpoint < until:
        page = await feed.read_feed(checkpoint, limit=200)
        if page:
            into.extend(page)
            checkpoint = page[-1].checkpoint
        else:
            await feed.wait_for_events(checkpoint, 1.0)


async def whole_feed(store: PostgresStore, until: Checkpoint) -> list[RecordedEvent]:
    out: list[RecordedEvent] = []
    checkpoint = START
    while checkpoint < until:
        page = await store.read_feed(checkpoint, limit=1000)
        assert page, "the primary's feed ends before the mark"
        out += page
        checkpoint = page[-1].checkpoint
    return [e for e in out if e.checkpoint <= until]


async def rebuilt_from(primary: PostgresStore, mark: Checkpoint) -> MemoryProjectionStore:
    memory = MemoryProjectionStore()
    await asyncio.wait_for(built_to(Projector(fresh(), memory, primary, grace=0), mark), BOUND)
    return memory


async def assert_equal_read_models(
    built: RedisProjectionStore, rebuilt: MemoryProjectionStore
) -> None:
    mine, theirs = await dumps(built), await dumps(rebuilt)
    for name, expected in theirs.items():
        assert len(expected) > 1, f"{name}: nothing was played into it"
        assert differences(mine[name], expected) == [], name


async def sample_lag(pair: ReplicaPair, seen: dict[str, float]) -> None:
    """The standby's replication lag as the primary reports it, largest seen."""
    async with await psycopg.AsyncConnection.connect(pair.primary.url(), autocommit=True) as conn:
        while True:
            row = await (
                await conn.execute(
                    "SELECT pg_wal_lsn_diff(pg_current_wal_lsn(), replay_lsn)::float8,"
                    " coalesce(extract(epoch FROM replay_lag), 0)::float8"
                    " FROM pg_stat_replication"
                )
            ).fetchone()
            if row is not None:
                seen["bytes"] = max(seen.get("bytes", 0.0), row[0] or 0.0)
                seen["seconds"] = max(seen.get("seconds", 0.0), row[1] or 0.0)
            await asyncio.sleep(0.02)


async def test_a_projector_on_the_standby_builds_what_a_rebuild_from_the_primary_holds(
    pair: ReplicaPair,
    primary: PostgresStore,
    replica: ReplicaStore,
    redis_pstore: RedisProjectionStore,
) -> None:
    assert (await replica.replication_lag_row())[0], "the feed is read from a hot standby"
    with pytest.raises(StoreError, match="read-only"):
        await replica.append(stream("probe"), 0, [new()])
    read_on_standby: list[int] = []
    projector = Projector(
        fresh(),
        redis_pstore,
        replica,
        grace=0,
        observe=lambda events: read_on_standby.append(len(events)),
    )
    lag: dict[str, float] = {}
    tasks = [asyncio.create_task(projector.run()), asyncio.create_task(sample_lag(pair, lag))]
    streamed: list[RecordedEvent] = []
    try:
        started = time.monotonic()
        await append_games(primary, 48, seed=71)
        mark = await settled_checkpoint(primary)
        appended_in = time.monotonic() - started
        await asyncio.wait_for(follow(replica, mark, streamed), BOUND)
        await asyncio.wait_for(caught_up(redis_pstore, mark), BOUND)
    finally:
        for task in tasks:
            await end(task)
    expected = await whole_feed(primary, mark)
    got = [e for e in streamed if e.checkpoint <= mark]
    assert [(e.checkpoint, e.event_id) for e in got] == [
        (e.checkpoint, e.event_id) for e in expected
    ], "the standby's feed is the primary's: every event once, in one order"
    await assert_equal_read_models(redis_pstore, await rebuilt_from(primary, mark))
    assert sum(read_on_standby) >= len(expected)
    print(
        f"\nreplica: {len(expected)} events appended by 4 writers in {appended_in:.2f} s; "
        f"the projector read {sum(read_on_standby)} events from the standby; largest "
        f"replication lag seen {lag.get('bytes', 0):.0f} bytes, {lag.get('seconds', 0):.4f} s"
    )


async def test_the_standby_feed_holds_back_behind_a_transaction_open_on_the_primary(
    pair: ReplicaPair, primary: PostgresStore, replica: ReplicaStore
) -> None:
    head = await settled_checkpoint(primary)
    await asyncio.wait_for(asyncio.to_thread(pair.wait_replayed), BOUND)
    held, later = stream("probe"), stream("probe")  # not games: the projections pass them
    conn = await psycopg.AsyncConnection.connect(pair.primary.url(), autocommit=False)
    async with conn:
        held_position = await append_in(conn, primary, held)  # its xid is taken, not committed
        first = await primary.append(later, 0, [new(), new(dealt())])
        assert held_position < min(first.positions)
        await asyncio.to_thread(pair.wait_replayed)  # the standby has replayed `later`'s commit
        shown = [e.stream_id for e in await replica.read_feed(head)]
        assert later not in shown, "the standby's feed went past a transaction still open"
        await conn.commit()
    await asyncio.to_thread(pair.wait_replayed)
    events: list[RecordedEvent] = []
    deadline = time.monotonic() + BOUND
    while len(events) < 3 and time.monotonic() < deadline:
        events = [e for e in await replica.read_feed(head) if e.stream_id in (held, later)]
        await asyncio.sleep(0.05)
    assert [(e.stream_id, e.version) for e in events] == [(held, 1), (later, 1), (later, 2)]


async def test_a_projector_on_a_stopped_standby_falls_behind_then_catches_up_losing_nothing(
    pair: ReplicaPair,
    primary: PostgresStore,
    replica: ReplicaStore,
    redis_pstore: RedisProjectionStore,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    projector = Projector(fresh(), redis_pstore, replica, grace=0)
    with captured_logs(monkeypatch, projector_module) as logs:
        task = asyncio.create_task(projector.run())
        try:
            mark = await settled_checkpoint(primary)
            await asyncio.wait_for(caught_up(redis_pstore, mark), BOUND)
            await asyncio.to_thread(pair.stop_standby)
            try:
                await append_games(primary, 12, seed=83, writers=2)
                mark = await settled_checkpoint(primary)
                behind = await statuses(PROJECTIONS, redis_pstore, primary)  # lag vs. primary
                assert all(s.lag is not None and s.lag.events > 0 for s in behind), behind
                assert "fairway_feed_replica_up 0" in await replica_metrics(replica)
                deadline = time.monotonic() + BOUND
                while not any(line["event"] == "projection_waiting" for line in logs):
                    assert time.monotonic() < deadline, (
                        "no log line for the lost standby",
                        [line["event"] for line in logs][-12:],
                        {name: (p.state, p.error) for name, p in projector.progress.items()},
                    )
                    await asyncio.sleep(0.05)
            finally:
                await asyncio.to_thread(pair.start_standby)
            await asyncio.wait_for(caught_up(redis_pstore, mark), BOUND)
            assert "fairway_feed_replica_up 1" in await replica_metrics(replica)
        finally:
            await end(task)
    after = await statuses(PROJECTIONS, redis_pstore, primary)
    assert {s.state for s in after} == {"running"}
    await assert_equal_read_models(redis_pstore, await rebuilt_from(primary, mark))


def set_replay(pair: ReplicaPair, paused: bool) -> None:
    with psycopg.connect(pair.standby.url(), autocommit=True) as conn:
        conn.execute("SELECT pg_wal_replay_pause()" if paused else "SELECT pg_wal_replay_resume()")


async def test_a_projector_moved_to_a_lagging_standby_takes_it_for_lag_not_a_restore(
    pair: ReplicaPair,
    primary: PostgresStore,
    replica: ReplicaStore,
    redis_pstore: RedisProjectionStore,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The read models were built from the primary up to a checkpoint the standby has not
    replayed yet (the setting turned on during a deploy, or a second projector nearer the
    primary): the standby's head stands behind the checkpoint, as after a restore, but the
    primary's does not, so the projector waits for the standby instead of rebuilding."""
    await asyncio.to_thread(set_replay, pair, True)
    try:
        await append_games(primary, 6, seed=97, writers=2)
        mark = await settled_checkpoint(primary)
        await asyncio.wait_for(built_to(Projector(fresh(), redis_pstore, primary), mark), BOUND)
        live = {p.name: await redis_pstore.alias(p.name) for p in PROJECTIONS}
        assert await replica.feed_head() < mark, "the standby lags behind the read models"
        with captured_logs(monkeypatch, projector_module) as logs:
            projector = Projector(fresh(), redis_pstore, replica, grace=0)
            task = asyncio.create_task(projector.run())
            try:
                deadline = time.monotonic() + BOUND
                while any(p.state != "running" for p in projector.progress.values()):
                    assert time.monotonic() < deadline, projector.progress
                    await asyncio.sleep(0.05)
                await asyncio.to_thread(set_replay, pair, False)
                await append_games(primary, 4, seed=98, writers=2)
                mark = await settled_checkpoint(primary)
                await asyncio.wait_for(caught_up(redis_pstore, mark), BOUND)
            finally:
                await end(task)
        assert not [line for line in logs if line["event"] == "projection_feed_changed"]
        assert {p.name: await redis_pstore.alias(p.name) for p in PROJECTIONS} == live
    finally:
        await asyncio.to_thread(set_replay, pair, False)
    await assert_equal_read_models(redis_pstore, await rebuilt_from(primary, mark))


async def test_fairway_projector_with_the_setting_reads_the_standby(
    pair: ReplicaPair, primary: PostgresStore, replica: ReplicaStore, redis_url: str
) -> None:
    """The real `fairway projector` process: with the standby's replay paused, it builds the
    read models up to what the standby shows and no further, though the primary holds more;
    replay resumed, it catches up to a rebuild from the primary."""
    prefix = f"cli{secrets.token_hex(4)}"
    env = {
        **os.environ,
        "DATABASE_URL": pair.primary.url(),
        "FAIRWAY_FEED_DATABASE_URL": pair.standby.url(),
        "REDIS_URL": redis_url,
        "FAIRWAY_REDIS_PREFIX": prefix,
        "FAIRWAY_LOG_LEVEL": "warning",
    }
    pstore = RedisProjectionStore.from_url(redis_url, prefix)
    await asyncio.to_thread(set_replay, pair, True)
    shown = await replica.feed_head()
    process = subprocess.Popen(
        [sys.executable, "-m", "service.cli", "projector"],
        env=env,
        preexec_fn=dies_with_us(),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    try:
        await append_games(primary, 4, seed=101, writers=2)
        mark = await settled_checkpoint(primary)
        await asyncio.wait_for(caught_up(pstore, shown), BOUND)
        await asyncio.sleep(1.0)  # time enough to read on from the primary (it must not)
        for projection in PROJECTIONS:
            number = await pstore.alias(projection.name)
            assert number is not None
            meta = await pstore.generation(projection.name, number)
            assert meta is not None
            assert meta.checkpoint < mark, "it read past what the standby shows"
        await asyncio.to_thread(set_replay, pair, False)
        await asyncio.wait_for(caught_up(pstore, mark), BOUND)
        await assert_equal_read_models(pstore, await rebuilt_from(primary, mark))
    finally:
        await asyncio.to_thread(set_replay, pair, False)
        process.send_signal(signal.SIGTERM)
        try:
            _, errors = process.communicate(timeout=BOUND)
        except subprocess.TimeoutExpired:
            process.kill()
            _, errors = process.communicate()
        await pstore.close()
        await forget(redis_url, prefix)
    assert process.returncode == 0, errors


def wait_ready(http: httpx.Client, status: str) -> dict[str, str]:
    deadline = time.monotonic() + BOUND
    while True:
        body: dict[str, str] = http.get("/ready").json()
        if body["status"] == status:
            return body
        assert time.monotonic() < deadline, f"/ready stayed {body}"
        time.sleep(0.1)


def test_an_api_with_the_setting_streams_a_game_played_on_the_primary_from_the_standby(
    pair: ReplicaPair, tmp_path: Path
) -> None:
    settings = msgspec.structs.replace(
        instance_settings(pair.primary.url(), tmp_path),
        feed_database_url=pair.standby.url(),
        sse_heartbeat=120.0,  # every event on the stream below comes by the watcher's news
    )
    rng = random.Random(19)
    with (
        running_server(settings) as base,
        httpx.Client(base_url=base, timeout=20) as http,
    ):
        assert wait_ready(http, "ok")["store"] == "PostgresStore"
        table = open_table(http, "golf", 2, {"hands": 3})
        with Stream(base, f"/games/{table.game_id}/stream") as live:
            assert live.status == 200, live.body
            for _ in range(4):
                play_step(table, rng)
                live.wait_for(int(table.public()["version"]), BOUND)
            set_replay(pair, paused=True)
            try:
                play_step(table, rng)
                version = int(table.public()["version"])  # read on the primary: the write
                time.sleep(1.0)  # time enough for news through the primary (none came)
                assert int(live.messages[-1].id or 0) < version, "news came not from the standby"
                assert "fairway_feed_replica_lag_seconds" in http.get("/metrics").text
            finally:
                set_replay(pair, paused=False)
            live.wait_for(version, BOUND)
        metrics = http.get("/metrics").text
        assert "fairway_feed_replica_up 1" in metrics
        pair.stop_standby()
        try:
            degraded = wait_ready(http, "degraded")
            assert "feed replica" in degraded["detail"]
            assert "fairway_feed_replica_up 0" in http.get("/metrics").text
            assert play_step(table, rng), "commands go on while the standby is down"
        finally:
            pair.start_standby()
        wait_ready(http, "ok")


def test_a_machine_without_postgresql_binaries_fails_naming_them(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Docker alone (testcontainers) cannot stand in for the pair: the fixture fails, loudly,
    naming what is missing; it never skips."""

    def no_pg_config(*args: object, **kwargs: object) -> object:
        raise FileNotFoundError("pg_config")

    monkeypatch.setattr(pg_replica.subprocess, "run", no_pg_config)
    monkeypatch.setattr(pg_replica.glob, "glob", lambda pattern: [])
    with pytest.raises(pg_replica.MissingPostgres, match="initdb, pg_ctl, pg_basebackup"):
        pg_replica.bindir()
