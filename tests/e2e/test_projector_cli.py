"""The real `fairway projector` in subprocesses, on real PostgreSQL and Redis: killed with
SIGKILL mid-stream and restarted, or two at once, it builds exactly what one uninterrupted
run builds, and what the events say; started before its database can be reached, it waits
for it."""

from __future__ import annotations

import asyncio
import os
import secrets
import signal
import subprocess
import sys
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest
from psycopg import conninfo

from events.migrate import migrate
from events.store import START, PostgresStore
from projections.catalog import PROJECTIONS
from projections.redis_store import RedisProjectionStore
from projections.status import statuses
from tests.support.children import dies_with_us
from tests.support.lobby_oracle import expected_listings
from tests.support.played_games import append_interleaved, game_streams
from tests.support.redis_keys import forget
from tests.support.services import database_made_later, throwaway_database

pytestmark = pytest.mark.e2e

ROOT = Path(__file__).resolve().parents[2]
FAIRWAY = [sys.executable, "-m", "service.cli"]


@pytest.fixture(scope="module")
def events_url(postgres_server_url: str) -> Iterator[str]:
    with throwaway_database(postgres_server_url, "fairway_proj") as url:
        migrate(url)
        yield url


@pytest.fixture
async def feed(events_url: str) -> AsyncIterator[PostgresStore]:
    store = await PostgresStore.open(events_url, poll_interval=0.1)
    yield store
    await store.close()


def projector(events_url: str, redis_url: str, prefix: str, *args: str) -> subprocess.Popen[str]:
    env = {
        **os.environ,
        "DATABASE_URL": events_url,
        "REDIS_URL": redis_url,
        "FAIRWAY_REDIS_PREFIX": prefix,
        "FAIRWAY_LOG_LEVEL": "warning",
        "FAIRWAY_LOG_FORMAT": "json",
    }
    return subprocess.Popen(
        [*FAIRWAY, "projector", *args],
        cwd=ROOT,
        env=env,
        preexec_fn=dies_with_us(),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


async def caught_up(store: RedisProjectionStore, feed: PostgresStore, seconds: float = 60) -> None:
    loop = asyncio.get_running_loop()
    deadline = loop.time() + seconds
    while loop.time() < deadline:
        found = await statuses(PROJECTIONS, store, feed)
        if all(s.state == "running" and s.lag is not None and s.lag.events == 0 for s in found):
            return
        await asyncio.sleep(0.1)
    raise AssertionError(f"the projector did not catch up: {found}")


async def dumps(store: RedisProjectionStore) -> dict[str, object]:
    out: dict[str, object] = {}
    for projection in PROJECTIONS:
        number = await store.alias(projection.name)
        assert number is not None
        out[projection.name] = await store.dump(projection.name, number)
    return out


def first_line_with(process: subprocess.Popen[str], word: str) -> str:
    """The first line of the process's stderr holding `word` (or its last, at its end)."""
    assert process.stderr is not None
    line = ""
    for line in process.stderr:
        if word in line:
            break
    return line


def stop(process: subprocess.Popen[str]) -> None:
    if process.poll() is None:
        process.send_signal(signal.SIGTERM)
        try:
            process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


async def test_killed_mid_stream_restarted_or_doubled_the_projector_builds_the_same(
    events_url: str, feed: PostgresStore, redis_url: str
) -> None:
    prefixes = {run: f"e2e{run}{secrets.token_hex(4)}" for run in ("killed", "alone", "two")}
    stores = {run: RedisProjectionStore.from_url(redis_url, p) for run, p in prefixes.items()}
    games = game_streams(120, 31)
    processes: list[subprocess.Popen[str]] = []
    try:
        await append_interleaved(feed, games[:20], 31)
        killed = projector(events_url, redis_url, prefixes["killed"])
        processes.append(killed)
        await caught_up(stores["killed"], feed)

        streaming = asyncio.create_task(append_interleaved(feed, games[20:], 32, most=4))
        await asyncio.sleep(1.0)
        assert not streaming.done(), "the stream ended before the kill"
        killed.send_signal(signal.SIGKILL)
        killed.wait(timeout=10)
        assert killed.returncode == -signal.SIGKILL
        await asyncio.sleep(0.5)  # appends carry on while it is down
        restarted = projector(events_url, redis_url, prefixes["killed"])
        processes.append(restarted)
        await streaming
        await caught_up(stores["killed"], feed)

        alone = projector(events_url, redis_url, prefixes["alone"])
        first, second = (projector(events_url, redis_url, prefixes["two"]) for _ in range(2))
        processes += [alone, first, second]
        await caught_up(stores["alone"], feed)
        await caught_up(stores["two"], feed)

        uninterrupted = await dumps(stores["alone"])
        assert await dumps(stores["killed"]) == uninterrupted
        assert await dumps(stores["two"]) == uninterrupted

        events = await feed.read_feed(START, limit=1_000_000)
        listings = expected_listings(events)
        assert len(listings) == 120
        lobby = uninterrupted["lobby"]
        assert isinstance(lobby, dict)
        assert {k: v for k, v in lobby.items() if k.startswith("k:game:")} == {
            f"k:game:{game}": listing for game, listing in listings.items()
        }
        for process in processes[1:]:
            assert process.poll() is None, process.stderr.read() if process.stderr else ""
        for process in processes[1:]:  # SIGTERM stops a projector, cleanly, whatever it did
            process.send_signal(signal.SIGTERM)
            assert process.wait(timeout=30) == 0
    finally:
        for process in processes:
            stop(process)
        for run, store in stores.items():
            await store.close()
            await forget(redis_url, prefixes[run])


async def test_rebuild_by_name_switches_to_a_new_generation_and_exits(
    events_url: str, feed: PostgresStore, redis_url: str
) -> None:
    prefix = f"e2erb{secrets.token_hex(4)}"
    store = RedisProjectionStore.from_url(redis_url, prefix)
    try:
        await append_interleaved(feed, game_streams(5, 40), 40)
        first = projector(events_url, redis_url, prefix, "--rebuild", "lobby")
        out, err = first.communicate(timeout=60)
        assert first.returncode == 0, err
        before = await store.alias("lobby")
        assert out.strip() == f"rebuilt lobby: generation {before}"
        again = projector(events_url, redis_url, prefix, "--rebuild", "lobby")
        out, err = again.communicate(timeout=60)
        assert again.returncode == 0, err
        after = await store.alias("lobby")
        assert after is not None
        assert before is not None
        assert after > before
        assert await store.generations("lobby") == [after]
        unknown = projector(events_url, redis_url, prefix, "--rebuild", "nope")
        out, err = unknown.communicate(timeout=60)
        assert unknown.returncode == 2
        assert "no projection is called 'nope'" in err
    finally:
        await store.close()
        await forget(redis_url, prefix)


def test_without_redis_the_projector_says_why_it_cannot_run() -> None:
    env = {k: v for k, v in os.environ.items() if k != "REDIS_URL"}
    done = subprocess.run(
        [*FAIRWAY, "projector"], cwd=ROOT, env=env, capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 2
    assert "REDIS_URL is not set" in done.stderr


async def test_a_projector_started_before_its_database_exists_waits_for_it_and_builds(
    postgres_server_url: str, redis_url: str
) -> None:
    """A database a migration job has not made yet (or one down for a failover): the
    projector says so and tries again, instead of exiting (it did, with status 1); once the
    database is there it builds every projection."""
    prefix = f"late{secrets.token_hex(4)}"
    with database_made_later(postgres_server_url, "fairway_late") as (url, make):
        process = projector(url, redis_url, prefix)
        store = RedisProjectionStore.from_url(redis_url, prefix)
        try:
            said = await asyncio.wait_for(
                asyncio.to_thread(first_line_with, process, "unreachable"), 60
            )
            assert "projector_store_unreachable" in said, said
            assert conninfo.conninfo_to_dict(url)["dbname"] in said  # the store's own reason
            assert process.poll() is None  # still there, waiting
            make()
            migrate(url)
            feed = await PostgresStore.open(url, poll_interval=0.1)
            try:
                await append_interleaved(feed, game_streams(2, seed=5), seed=5)
                await caught_up(store, feed)
            finally:
                await feed.close()
            assert process.poll() is None
        finally:
            stop(process)
            await store.close()
            await forget(redis_url, prefix)
