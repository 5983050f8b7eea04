"""A feed that goes back under a running projector: the database recreated under the same
Redis prefix (another store: another installation id), or restored to an earlier point (the
same store, its head behind the checkpoints). The projections notice by themselves, rebuild
from zero, log why and count it, and then serve the store's games as a rebuild from zero
into an empty Redis does, key for key.

Each test has databases of its own on the test server, swapped under the projector's
connection pool the way an operator would: the old one dropped (or renamed away) and the
new one renamed into its place, so the pool finds the new one at the same address."""

from __future__ import annotations

import asyncio
import contextlib
import secrets
import time
from collections.abc import AsyncIterator, Iterator

import psycopg
import pytest
from psycopg import conninfo, sql

from events.migrate import migrate
from events.store import Checkpoint, PostgresStore, StoreUnavailable
from projections import projector as projector_module
from projections.base import ProjectionsUnavailable
from projections.catalog import PROJECTIONS, fresh
from projections.lobby import listing_key
from projections.projector import Projector
from projections.redis_store import RedisProjectionStore
from projections.status import rebuild_counts, render_metrics
from projections.store import ProjectionStore
from service.ops.background import end
from tests.integration.events.conftest import settled_checkpoint
from tests.support.logs import captured_logs
from tests.support.played_games import append_interleaved, game_streams
from tests.support.projected import built_to, caught_up, dumps
from tests.support.redis_keys import forget

pytestmark = pytest.mark.integration
WITHIN = 120.0
"""Seconds a wait here may take at most: a bound for a broken build, never timed as such."""


class Databases:
    """Databases made on the test server, each dropped at the end whatever its name then."""

    def __init__(self, server: str) -> None:
        self.server = server
        self.names: list[str] = []

    def url(self, name: str) -> str:
        return conninfo.make_conninfo(self.server, dbname=name)

    def run(self, *statements: sql.Composed | sql.SQL) -> None:
        with psycopg.connect(self.server, autocommit=True) as conn:
            for statement in statements:
                conn.execute(statement)

    def create(self, template: str | None = None) -> str:
        name = f"fairway_back_{secrets.token_hex(5)}"
        self.names.append(name)
        statement = sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name))
        if template is not None:  # a copy of it as it stands: a restore to this point
            statement += sql.SQL(" TEMPLATE {}").format(sql.Identifier(template))
        for _ in range(50):  # a template's last connections take a moment to end
            try:
                self.run(statement)
                break
            except psycopg.errors.ObjectInUse:
                time.sleep(0.1)
        if template is None:
            migrate(self.url(name))
        return name

    def put_in_place(self, name: str, place: str, *, drop: bool) -> None:
        """`name` becomes `place` under the clients connected there: they lose their
        connections and find `name` when they connect again."""
        moved = f"{place}_was"
        for _ in range(50):  # a pool that reconnects between the two steps: again
            with contextlib.suppress(psycopg.errors.ObjectInUse):
                if drop:
                    self.run(sql.SQL("DROP DATABASE {} WITH (FORCE)").format(sql.Identifier(place)))
                else:
                    self.run(
                        sql.SQL(
                            "SELECT pg_terminate_backend(pid) FROM pg_stat_activity"
                            " WHERE datname = {}"
                        ).format(sql.Literal(place)),
                        sql.SQL("ALTER DATABASE {} RENAME TO {}").format(
                            sql.Identifier(place), sql.Identifier(moved)
                        ),
                    )
                    self.names.append(moved)
                break
        else:
            raise AssertionError(f"{place} stayed in use")
        self.run(
            sql.SQL("ALTER DATABASE {} RENAME TO {}").format(
                sql.Identifier(name), sql.Identifier(place)
            )
        )

    def drop_all(self) -> None:
        for name in self.names:
            self.run(
                sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(sql.Identifier(name))
            )


@pytest.fixture
def databases(postgres_server_url: str) -> Iterator[Databases]:
    made = Databases(postgres_server_url)
    try:
        yield made
    finally:
        made.drop_all()


@pytest.fixture
async def pstore(redis_url: str) -> AsyncIterator[RedisProjectionStore]:
    url, prefix = redis_url, f"back{secrets.token_hex(4)}"
    store = RedisProjectionStore.from_url(url, prefix)
    yield store
    await store.close()
    await forget(url, prefix)


async def append_games(url: str, count: int, seed: int) -> list[str]:
    """Games appended to the database at `url`; their ids."""
    games = game_streams(count, seed)
    async with await PostgresStore.open(url) as store:
        await append_interleaved(store, games, seed)
    return [stream.removeprefix("game:") for stream, _ in games]


async def serving(pstore: ProjectionStore, feed: PostgresStore, game: str) -> Checkpoint:
    """Until every projection's live generation has applied the whole feed (through a
    marker appended now) and the lobby lists `game`; the marker's checkpoint."""
    async with asyncio.timeout(WITHIN):
        while True:
            try:
                mark = await settled_checkpoint(feed)
                break
            except StoreUnavailable:  # its pool's connections went with the database
                await asyncio.sleep(0.1)
    await caught_up(pstore, mark)
    async with asyncio.timeout(WITHIN):
        while await pstore.get("lobby", listing_key(game)) is None:
            await asyncio.sleep(0.05)
    return mark


async def rebuilt(pstore: ProjectionStore, reason: str) -> None:
    """Until every projection was rebuilt for `reason` (fails after `WITHIN` seconds)."""
    async with asyncio.timeout(WITHIN):
        while True:
            with contextlib.suppress(ProjectionsUnavailable):
                counts = [await pstore.rebuilds(p.name) for p in PROJECTIONS]
                if all(reason in count for count in counts):
                    return
            await asyncio.sleep(0.05)


async def from_zero(url: str, redis_url: str, mark: Checkpoint) -> dict[str, dict[str, object]]:
    """Every read model built from zero from the database at `url`, through `mark`, into an
    empty prefix."""
    prefix = f"zero{secrets.token_hex(4)}"
    store = RedisProjectionStore.from_url(redis_url, prefix)
    try:
        async with await PostgresStore.open(url) as feed:
            await built_to(Projector(fresh(), store, feed, grace=0), mark)
        return await dumps(store)
    finally:
        await store.close()
        await forget(redis_url, prefix)


@contextlib.asynccontextmanager
async def projector_on(url: str, pstore: ProjectionStore) -> AsyncIterator[PostgresStore]:
    """A projector running on the database at `url` (its own pool), and a store on it for
    the test to look with."""
    async with (
        await PostgresStore.open(url, poll_interval=0.1) as feed,
        await PostgresStore.open(url) as looking,
    ):
        # Looking at the feed at the poll's pace (not every CHECK_FEED), so that every
        # projection has noticed by the time the lobby shows the new store's game.
        projector = Projector(fresh(), pstore, feed, poll=0.1, grace=0, check_feed=0.1)
        task = asyncio.create_task(projector.run())
        try:
            yield looking
        finally:
            await end(task)


async def test_a_database_created_again_under_a_running_projector_is_projected_from_zero(
    databases: Databases,
    pstore: RedisProjectionStore,
    redis_url: str,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Given the projections built from a database, when it is dropped and another one
    (migrated, with other games, fewer events) takes its name under the running projector,
    then each projection notices it follows another store, rebuilds from zero, says why in
    its log and its metrics, and serves the new store's games and none of the old."""
    place = databases.create()
    url = databases.url(place)
    old = await append_games(url, 10, seed=31)
    with captured_logs(monkeypatch, projector_module) as logs:
        async with projector_on(url, pstore) as looking:
            await asyncio.wait_for(serving(pstore, looking, old[0]), 120)
            was = await looking.installation()

            again = databases.create()
            new = await append_games(databases.url(again), 3, seed=32)
            databases.put_in_place(again, place, drop=True)
            mark = await asyncio.wait_for(serving(pstore, looking, new[0]), 120)
            assert await looking.installation() != was

    assert await dumps(pstore) == await from_zero(url, redis_url, mark)
    assert await pstore.get("lobby", listing_key(old[0])) is None
    for projection in PROJECTIONS:
        assert await pstore.rebuilds(projection.name) == {"missing": 1, "another_store": 1}
    changed = [e for e in logs if e["event"] == "projection_feed_changed"]
    assert {e["projection"] for e in changed} == {p.name for p in PROJECTIONS}
    assert all(e["reason"] == "another_store" and was in e["detail"] for e in changed)
    metrics = render_metrics([], await rebuild_counts(PROJECTIONS, pstore))
    assert 'fairway_projection_rebuilds_total{projection="ratings",reason="another_store"} 1' in (
        metrics
    )


async def test_a_database_restored_to_an_earlier_point_is_projected_from_zero(
    databases: Databases, pstore: RedisProjectionStore, redis_url: str
) -> None:
    """Given the projections built from a database, when a copy of it taken earlier (the
    same store: the same installation id, fewer events) is put in its place under the
    running projector, then each projection finds the feed's head behind its checkpoint,
    rebuilds from zero, and serves what the restored store holds, games played since too."""
    place = databases.create()
    url = databases.url(place)
    kept = await append_games(url, 6, seed=41)
    earlier = databases.create(template=place)
    lost = await append_games(url, 6, seed=42)
    async with projector_on(url, pstore) as looking:
        await asyncio.wait_for(serving(pstore, looking, lost[0]), 120)
        was = await looking.installation()

        databases.put_in_place(earlier, place, drop=False)
        # Nothing appended until it noticed: on this cluster a new append draws a higher
        # transaction id than the checkpoint's, and the feed's head would pass it (after a
        # real restore the cluster's counter goes back too).
        await asyncio.wait_for(rebuilt(pstore, "feed_went_back"), 120)
        await asyncio.wait_for(serving(pstore, looking, kept[0]), 120)
        since = await append_games(url, 2, seed=43)
        mark = await asyncio.wait_for(serving(pstore, looking, since[0]), 120)
        assert await looking.installation() == was

    assert await dumps(pstore) == await from_zero(url, redis_url, mark)
    assert await pstore.get("lobby", listing_key(lost[0])) is None
    for projection in PROJECTIONS:
        assert await pstore.rebuilds(projection.name) == {"missing": 1, "feed_went_back": 1}
