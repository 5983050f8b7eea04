"""Fairway on a real Redis Cluster (three masters started here, tests/support/redis_cluster.py):
the projector builds every read model from a real PostgreSQL event store into the cluster,
key for key what a rebuild into the in-memory store holds; the read models answer through
the cluster as from memory, over HTTP as from one Redis; and the rate limit's buckets are
shared through it.

What is proved is what a cluster asks: every multi-key command, transaction and script of
the projection store stays in one hash slot (a generation's hash tag), or redis-py would
refuse it (`CROSSSLOT`, or "all keys must map to the same key slot") and the projector
would never catch up. The generations land on more than one node, so the test is not one
node's in disguise.
"""

from __future__ import annotations

import asyncio
import random
import secrets
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import httpx
import msgspec
import pytest
import redis.asyncio as aioredis

from events.migrate import migrate
from events.store import PostgresStore
from projections.catalog import PROJECTIONS, fresh
from projections.memory import MemoryProjectionStore
from projections.projector import Projector
from projections.redis_client import is_cluster, redis_client
from projections.redis_store import RedisProjectionStore
from service.http.ratelimit import SharedBuckets, TokenBuckets
from service.ops.metrics import Metrics
from tests.api.server import instance_settings, running_server
from tests.integration.events.conftest import settled_checkpoint
from tests.support.played_games import NAMES, append_interleaved, game_streams
from tests.support.projected import built_to, caught_up, differences, dumps
from tests.support.redis_cluster import RedisCluster, redis_cluster
from tests.support.redis_keys import forget
from tests.support.services import throwaway_database
from tests.support.tournament_history import append_history, tournament_history

pytestmark = pytest.mark.integration

GAMES = 30


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RedisCluster]:
    with redis_cluster(tmp_path_factory.mktemp("redis-cluster")) as started:
        yield started


@pytest.fixture
def own_database(postgres_server_url: str) -> Iterator[str]:
    """A database of this test alone: its feed holds only the games played here."""
    with throwaway_database(postgres_server_url, "fairway_cluster") as url:
        migrate(url)
        yield url


@pytest.fixture
async def feed(own_database: str) -> AsyncIterator[PostgresStore]:
    store = await PostgresStore.open(own_database, poll_interval=0.05)
    yield store
    await store.close()


async def play(feed: PostgresStore, seed: int) -> list[str]:
    """Casual games, a few events an append, taking turns; and two tournaments. The ids of
    the streams played."""
    games = game_streams(GAMES, seed)
    await append_interleaved(feed, games, seed, 12, 1)
    rng = random.Random(seed)
    streams = [stream for stream, _ in games]
    for i in range(2):
        history = tournament_history(seed * 10 + i, finish=rng.random() < 0.5)
        await append_history(feed, history)
        streams += dict.fromkeys(stream for stream, _ in history)
    return streams


async def keys_per_node(cluster: RedisCluster) -> list[int]:
    counts = []
    for port in cluster.ports:
        node = aioredis.Redis.from_url(cluster.node_url(port))
        try:
            counts.append(int(await node.dbsize()))
        finally:
            await node.aclose()
    return counts


async def test_the_read_models_built_into_a_cluster_equal_a_rebuild_and_answer_through_it(
    cluster: RedisCluster, feed: PostgresStore
) -> None:
    assert is_cluster(cluster.url)
    await play(feed, seed=31)
    mark = await settled_checkpoint(feed)
    writer = RedisProjectionStore.from_url(cluster.url, "fw", timeout=10)
    reader = RedisProjectionStore.from_url(cluster.url, "fw", timeout=10)  # an API process
    memory = MemoryProjectionStore()
    try:
        await built_to(Projector(fresh(), writer, feed, grace=0), mark)
        await built_to(Projector(fresh(), memory, feed, grace=0), mark)
        in_cluster, in_memory = await dumps(writer), await dumps(memory)
        for name, expected in in_memory.items():
            assert len(expected) > 1, f"{name}: nothing was played into it"
            assert differences(in_cluster[name], expected) == [], name

        spread = await keys_per_node(cluster)
        assert sum(1 for count in spread if count) >= 2, spread

        for projection in PROJECTIONS:
            name = projection.name
            number = await memory.alias(name)
            assert number is not None
            space = memory._spaces[(name, number)]
            docs = sorted(space.docs)
            assert await reader.get_many(name, docs) == await memory.get_many(name, docs), name
            for key in docs[:5]:
                assert await reader.get(name, key) == await memory.get(name, key), key
            for key in space.counters:
                assert await reader.counters(name, key) == await memory.counters(name, key), key
            for index, held in space.indexes.items():
                page = await reader.page(name, index, limit=len(held) + 1)
                assert page == await memory.page(name, index, limit=len(held) + 1), index
                if len(held) > 2:  # a cursor's second page, through the cluster too
                    first = await reader.page(name, index, limit=2, descending=True)
                    assert first.next_cursor is not None
                    rest = await reader.page(name, index, limit=1000, cursor=first.next_cursor,
                                             descending=True)  # fmt: skip
                    assert [e.member for e in first.entries + rest.entries] == [
                        e.member for e in reversed(page.entries)
                    ], index
    finally:
        await writer.close()
        await reader.close()


async def test_a_fresh_client_answers_many_first_commands_at_once(cluster: RedisCluster) -> None:
    """Thirty commands sent together by a client that has not yet learned the slots, as a
    projector's projections start together: most first reach a node that does not hold their
    key and are MOVED. Each is answered. (redis-py's default closed the whole client at the
    fifth MOVED, under the commands still in flight: every round here failed so.)"""
    for round_ in range(5):
        client = redis_client(cluster.url, timeout=10)
        try:
            keys = [f"first{round_}:{n}" for n in range(30)]
            got = await asyncio.gather(*(client.get(key) for key in keys), return_exceptions=True)
            assert got == [None] * len(keys), [g for g in got if g is not None][:3]
        finally:
            await client.aclose()


async def test_a_rebuild_on_the_cluster_switches_and_drops_the_old_generation(
    cluster: RedisCluster, feed: PostgresStore
) -> None:
    """A rebuild asked for (`fairway projector --rebuild`): a new generation, in its own slot,
    switched in by the alias's compare-and-set; the old one dropped from whichever node holds
    it (SCAN over every primary); the new one equal to what was there."""
    await play(feed, seed=32)
    mark = await settled_checkpoint(feed)
    store = RedisProjectionStore.from_url(cluster.url, "again", timeout=10)
    try:
        projector = Projector(fresh(), store, feed, grace=0)
        await built_to(projector, mark)
        before = await dumps(store)
        name = PROJECTIONS[0].name
        old = await store.alias(name)
        assert old is not None
        new = await projector.rebuild(name)
        assert new != old
        assert await store.alias(name) == new
        assert await store.generations(name) == [new]
        assert differences((await dumps(store))[name], before[name]) == []
    finally:
        await store.close()


async def test_the_rate_limit_shares_each_clients_bucket_through_the_cluster(
    cluster: RedisCluster,
) -> None:
    metrics = Metrics()
    one, other = (
        SharedBuckets.from_url(cluster.url, "rl", TokenBuckets(0.5, 3), metrics) for _ in "ab"
    )
    try:
        for client in ("10.0.0.1", "10.0.0.2", "2001:db8::/64"):  # buckets in several slots
            takes = [await (one if n % 2 else other).take(client) for n in range(4)]
            assert takes[:3] == [0.0, 0.0, 0.0], "a burst of 3, whichever limiter takes it"
            assert 0.0 < takes[3] <= 2.0, "then a wait of at most one token's refill"
        assert metrics.counters["rate_limit_fallbacks"] == 0
        assert one.fallback.buckets == {}
        assert other.fallback.buckets == {}
    finally:
        await one.close()
        await other.close()


async def test_the_api_on_a_cluster_answers_as_the_api_on_one_redis(
    cluster: RedisCluster, feed: PostgresStore, own_database: str, redis_url: str,
    tmp_path: Path,
) -> None:  # fmt: skip
    """Two instances on one database, each projecting inline: one with
    `REDIS_URL=redis+cluster://...`, one on a single Redis. Over HTTP, every read model
    (lobby, scoreboards, players, standings) answers the same on both."""
    streams = await play(feed, seed=33)
    mark = await settled_checkpoint(feed)
    plain_prefix = f"one{secrets.token_hex(4)}"
    base = instance_settings(own_database, tmp_path)
    quiet = {"projector_inline": True, "referee": False, "bots": False, "round_keeper": False}
    on_cluster = msgspec.structs.replace(
        base, redis_url=cluster.url, redis_prefix="api", data_dir=tmp_path / "a", **quiet
    )
    on_one = msgspec.structs.replace(
        base, redis_url=redis_url, redis_prefix=plain_prefix, data_dir=tmp_path / "b", **quiet
    )
    watch = [
        RedisProjectionStore.from_url(cluster.url, "api", timeout=10),
        RedisProjectionStore.from_url(redis_url, plain_prefix, timeout=10),
    ]
    paths = ["/games?limit=200", "/games?status=finished&limit=200", "/games?open=true"]
    paths += [f"/games/{s.split(':', 1)[1]}/scoreboard" for s in streams if s.startswith("game:")]
    paths += [f"/players/{name}" for name in NAMES]
    paths += [f"/tournaments/{s.split(':', 1)[1]}/standings" for s in streams
              if s.startswith("tournament:")]  # fmt: skip
    try:
        with running_server(on_cluster) as one, running_server(on_one) as other:
            for store in watch:
                await caught_up(store, mark)
            async with httpx.AsyncClient(timeout=30) as client:
                answered = 0
                for path in paths:
                    mine, theirs = await client.get(one + path), await client.get(other + path)
                    assert mine.status_code == theirs.status_code, path
                    assert mine.json() == theirs.json(), path
                    answered += mine.status_code == 200
                assert answered >= len(paths) // 2, answered
    finally:
        for store in watch:
            await store.close()
        await forget(redis_url, plain_prefix)


def test_a_cluster_url_naming_a_database_is_refused() -> None:
    with pytest.raises(ValueError, match="only database 0"):
        RedisProjectionStore.from_url("redis+cluster://127.0.0.1:7000/3")
