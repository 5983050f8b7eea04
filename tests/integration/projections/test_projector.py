"""The runner and the projector on a real feed: exactly once under redelivery and races,
gaps stop a projection, rebuilds switch readers without a pause, a flushed or outdated
projection rebuilds itself, and the projector follows new events."""

from __future__ import annotations

import asyncio
import contextlib
import sqlite3
import uuid
from collections.abc import AsyncIterator, Callable
from pathlib import Path

import pytest

from events.schema.common import GameOptions
from events.schema.lobby import GameCreated
from events.store import START, EmbeddedStore, NewEvent
from events.store.embedded import FILE_NAME
from projections import projector as projector_module
from projections.base import ProjectionsUnavailable
from projections.catalog import PROJECTIONS, fresh
from projections.lobby import LobbyProjection
from projections.memory import MemoryProjectionStore
from projections.projector import NewerVersion, Projector
from projections.redis_store import RedisProjectionStore
from projections.runner import Runner, VersionGap
from projections.status import statuses
from projections.store import ProjectionStore
from service.ops.background import end
from tests.support.lobby_oracle import expected_listings
from tests.support.logs import captured_logs
from tests.support.played_games import append_interleaved, game_streams
from tests.support.redis_keys import address, forget, through
from tests.support.tcp_proxy import TcpProxy

pytestmark = pytest.mark.integration

MakeStore = Callable[[], ProjectionStore]


class LobbyV2(LobbyProjection):
    version = LobbyProjection.version + 1


async def run_to_end(runner: Runner, number: int) -> None:
    while await runner.step(number):
        pass


@contextlib.asynccontextmanager
async def running(projector: Projector) -> AsyncIterator[asyncio.Task[None]]:
    task = asyncio.create_task(projector.run())
    try:
        yield task
    finally:
        await end(task)


async def until(check: Callable[[], object], seconds: float = 20.0) -> None:
    """Wait until the coroutine `check()` returns something true."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + seconds
    while True:
        try:
            if await check():  # type: ignore[misc]
                return
        except ProjectionsUnavailable:
            pass
        if loop.time() > deadline:
            raise AssertionError("not reached in time")
        await asyncio.sleep(0.05)


async def test_two_runners_racing_on_one_generation_build_what_one_alone_builds(
    make_pstore: MakeStore, feed: EmbeddedStore
) -> None:
    await append_interleaved(feed, game_streams(30, 11), 11)
    store_a, store_b = make_pstore(), make_pstore()
    alone = await store_a.begin("lobby", 1)
    await run_to_end(Runner(LobbyProjection(), store_a, feed, batch=50), alone.number)
    raced = await store_a.begin("lobby", 1)
    racers = [Runner(LobbyProjection(), s, feed, batch=50) for s in (store_a, store_b)]
    await asyncio.gather(*(run_to_end(r, raced.number) for r in racers))
    assert await store_a.dump("lobby", raced.number) == await store_a.dump("lobby", alone.number)
    total = len(await feed.read_feed(START, limit=100_000))
    assert sum(r.applied for r in racers) == total  # each event applied once in all


async def test_a_redelivered_event_changes_nothing(
    pstore: ProjectionStore, feed: EmbeddedStore
) -> None:
    await append_interleaved(feed, game_streams(10, 3), 3)
    generation = await pstore.begin("lobby", 1)
    runner = Runner(LobbyProjection(), pstore, feed)
    await run_to_end(runner, generation.number)
    events = await feed.read_feed(START, limit=100_000)
    streams = sorted({e.stream_id for e in events})
    snapshot = await pstore.snapshot("lobby", generation.number, [], streams)
    assert snapshot is not None
    changes, applied = runner.fold(events, {}, dict(snapshot.versions))
    assert applied == 0
    assert not changes


async def test_a_gap_in_a_stream_stops_the_projection_and_shows_in_its_status(
    pstore: ProjectionStore, feed: EmbeddedStore, tmp_path: Path
) -> None:
    await append_interleaved(feed, game_streams(4, 8), 8)
    events = await feed.read_feed(START, limit=100_000)
    victim = events[len(events) // 2]
    assert victim.version > 1
    with contextlib.closing(sqlite3.connect(tmp_path / "events" / FILE_NAME)) as db, db:
        db.execute("DROP TRIGGER events_no_delete")
        db.execute("DELETE FROM events WHERE global_position = ?", (victim.global_position,))
    runner = Runner(LobbyProjection(), pstore, feed)
    generation = await pstore.begin("lobby", 1, await feed.installation())
    with pytest.raises(VersionGap) as gap:
        await run_to_end(runner, generation.number)
    assert gap.value.stream_id == victim.stream_id
    assert (gap.value.applied, gap.value.found) == (victim.version - 1, victim.version + 1)

    projector = Projector([LobbyProjection()], pstore, feed, poll=0.05, grace=0)
    await pstore.switch("lobby", generation.number, None)
    following = asyncio.create_task(projector.follow(LobbyProjection()))

    async def stopped() -> bool:
        return projector.progress["lobby"].state == "failed"

    await until(stopped)
    [status] = await statuses([LobbyProjection()], pstore, feed)
    assert status.state == "failed"
    assert victim.stream_id in (status.error or "")
    assert status.lag is not None
    assert status.lag.events > 0
    assert not following.done()  # stopped, not gone: it waits for a rebuild
    await end(following)


async def test_the_projector_follows_new_events_as_they_are_appended(
    pstore: ProjectionStore, feed: EmbeddedStore
) -> None:
    games = game_streams(12, 21)
    await append_interleaved(feed, games[:6], 21)
    projector = Projector([LobbyProjection()], pstore, feed, poll=0.2, grace=0)
    async with running(projector):
        await append_interleaved(feed, games[6:], 22)
        total = len(await feed.read_feed(START, limit=100_000))

        async def caught_up() -> bool:
            [status] = await statuses([LobbyProjection()], pstore, feed)
            return status.lag is not None and status.lag.events == 0 and total > 0

        await until(caught_up)
    events = await feed.read_feed(START, limit=100_000)
    for game, listing in expected_listings(events).items():
        assert await pstore.get("lobby", f"game:{game}") == listing


class CountingHeads:
    """The store, counting how often its head is asked (the projector's look at the feed)."""

    def __init__(self, store: EmbeddedStore) -> None:
        self.store = store
        self.heads = 0

    def __getattr__(self, name: str) -> object:
        return getattr(self.store, name)

    async def source_head(self) -> object:
        self.heads += 1
        return await self.store.source_head()


async def test_a_running_projection_looks_at_the_feed_itself_once_per_check_not_per_poll(
    pstore: ProjectionStore, feed: EmbeddedStore
) -> None:
    """Between appends a running projection checks its alias every `poll`, but asks the
    store's head (is the feed another, or restored behind it?) only every `check_feed`: at
    the poll's pace those looks were most of an idle service's work. The count is an upper
    bound that a slow machine only lowers."""
    await append_interleaved(feed, game_streams(2, 23), 23)
    counting = CountingHeads(feed)
    projector = Projector(
        fresh(),
        pstore,
        counting,
        poll=0.05,
        grace=0,
        check_feed=1.0,
    )
    async with running(projector):

        async def built() -> bool:
            return all(p.state == "running" for p in projector.progress.values())

        await until(built)
        before = counting.heads
        await asyncio.sleep(1.5)  # 30 polls of each projection, at most 2 feed checks each
        asked = counting.heads - before
    assert 0 < asked <= 2 * len(projector.projections), asked


async def test_a_rebuild_switches_readers_to_an_equal_generation_and_drops_the_old(
    pstore: ProjectionStore, feed: EmbeddedStore
) -> None:
    await append_interleaved(feed, game_streams(15, 4), 4)
    projector = Projector([LobbyProjection()], pstore, feed, grace=0.2)
    old = await projector.ensure(LobbyProjection())
    before = await pstore.dump("lobby", old)
    one = next(k for k in before if k.startswith("k:game:"))[2:]
    served = await pstore.get("lobby", one)

    rebuilding = asyncio.create_task(projector.rebuild("lobby"))
    while not rebuilding.done():  # readers are served all along
        assert await pstore.get("lobby", one) == served
        await asyncio.sleep(0.01)
    new = await rebuilding
    assert new > old
    assert await pstore.alias("lobby") == new
    assert await pstore.dump("lobby", new) == before
    assert await pstore.generation("lobby", old) is None
    assert await pstore.dump("lobby", old) == {}


async def test_a_projection_whose_code_version_changed_rebuilds_at_start(
    pstore: ProjectionStore, feed: EmbeddedStore
) -> None:
    await append_interleaved(feed, game_streams(5, 6), 6)
    old = await Projector([LobbyProjection()], pstore, feed, grace=0).ensure(LobbyProjection())
    new = await Projector([LobbyV2()], pstore, feed, grace=0).ensure(LobbyV2())
    assert new != old
    generation = await pstore.generation("lobby", new)
    assert generation is not None
    assert generation.version == LobbyV2.version
    assert await pstore.dump("lobby", new) != {}
    assert await pstore.generation("lobby", old) is None


async def flush(store: ProjectionStore, redis_url: str, prefix: str) -> None:
    """Everything the store keeps is gone at once, as after a FLUSHDB (redis_keys.py)."""
    if isinstance(store, MemoryProjectionStore):
        store.flush()
        return
    assert await forget(redis_url, prefix) > 0


async def test_after_a_flush_the_projections_rebuild_themselves_key_for_key(
    pstore: ProjectionStore, feed: EmbeddedStore, redis_url: str, prefix: str
) -> None:
    """Every projection of the catalog: each read model is what it was, key for key."""
    await append_interleaved(feed, game_streams(20, 9), 9)
    projector = Projector(PROJECTIONS, pstore, feed, poll=0.1, grace=0)

    async def dumps() -> dict[str, object]:
        found = {}
        for projection in PROJECTIONS:
            number = await pstore.alias(projection.name)
            assert number is not None
            found[projection.name] = await pstore.dump(projection.name, number)
        return found

    async with running(projector):
        await until(caught_up_check(pstore, feed))
        before = await dumps()
        assert all(before.values())
        assert (await pstore.page("lobby", "all", limit=1)).entries  # the alias is cached
        await flush(pstore, redis_url, prefix)
        # Until it is back: 503, never an empty lobby read from the flushed generation.
        with pytest.raises(ProjectionsUnavailable):
            await pstore.page("lobby", "all", limit=1)
        with pytest.raises(ProjectionsUnavailable):
            await pstore.get("lobby", "game:0000000000000000")
        await until(caught_up_check(pstore, feed))
        assert await dumps() == before


def caught_up_check(store: ProjectionStore, feed: EmbeddedStore) -> Callable[[], object]:
    async def check() -> bool:
        found = await statuses(PROJECTIONS, store, feed)
        return all(s.state == "running" and s.lag is not None and s.lag.events == 0 for s in found)

    return check


async def test_a_silent_redis_fails_a_read_within_its_timeout_not_later(
    redis_url: str, prefix: str
) -> None:
    with TcpProxy.to_address(*address(redis_url)) as proxy:
        url = through(redis_url, proxy.port)
        store = RedisProjectionStore.from_url(url, prefix, timeout=0.5)
        try:
            live = await store.begin("demo", 1)
            assert await store.switch("demo", live.number, None)
            assert await store.get("demo", "a") is None
            proxy.blackhole()
            loop = asyncio.get_running_loop()
            started = loop.time()
            with pytest.raises(ProjectionsUnavailable):
                await store.get("demo", "a")
            assert loop.time() - started < 2.0
            proxy.restore()
            await until(lambda: _answers(store))
        finally:
            await store.close()
            await forget(redis_url, prefix)


async def _answers(store: ProjectionStore) -> bool:
    return await store.get("demo", "a") is None


async def test_while_redis_is_down_readers_get_unavailable_and_the_projector_catches_up_after(
    feed: EmbeddedStore, redis_url: str, prefix: str
) -> None:
    await append_interleaved(feed, game_streams(6, 12), 12)
    with TcpProxy.to_address(*address(redis_url)) as proxy:
        url = through(redis_url, proxy.port)
        store = RedisProjectionStore.from_url(url, prefix, timeout=0.5)
        projector = Projector(PROJECTIONS, store, feed, poll=0.1, grace=0)
        try:
            async with running(projector):
                await until(caught_up_check(store, feed))
                proxy.cut()
                with pytest.raises(ProjectionsUnavailable):
                    await store.get("lobby", "game:x")
                await feed.append(
                    "game:0123456789abcdef",
                    0,
                    [NewEvent(uuid.uuid4(), GameCreated("golf", 2, GameOptions(), "c" * 64))],
                )

                async def waiting() -> bool:
                    return projector.progress["lobby"].state == "waiting"

                await until(waiting)
                proxy.restore()
                await until(lambda: store.get("lobby", "game:0123456789abcdef"))
                await until(caught_up_check(store, feed))
        finally:
            await store.close()
            await forget(redis_url, prefix)


async def test_a_build_abandoned_half_way_is_dropped_by_the_next_one(
    pstore: ProjectionStore, feed: EmbeddedStore
) -> None:
    await append_interleaved(feed, game_streams(8, 14), 14)
    abandoned = await pstore.begin("lobby", 1)
    await Runner(LobbyProjection(), pstore, feed, batch=20).step(abandoned.number)
    assert await pstore.dump("lobby", abandoned.number) != {}
    live = await Projector([LobbyProjection()], pstore, feed, grace=0).ensure(LobbyProjection())
    assert await pstore.generations("lobby") == [live]
    assert await pstore.dump("lobby", abandoned.number) == {}


async def test_an_older_projector_leaves_a_newer_version_live_and_waits(
    pstore: ProjectionStore, feed: EmbeddedStore
) -> None:
    await append_interleaved(feed, game_streams(3, 15), 15)
    newer = await Projector([LobbyV2()], pstore, feed, grace=0).ensure(LobbyV2())
    older = Projector([LobbyProjection()], pstore, feed, poll=0.05, grace=0)
    with pytest.raises(NewerVersion):
        await older.ensure(LobbyProjection())
    following = asyncio.create_task(older.follow(LobbyProjection()))

    async def outdated() -> bool:
        return older.progress["lobby"].state == "outdated"

    await until(outdated)
    await end(following)
    assert await pstore.alias("lobby") == newer
    assert await pstore.generations("lobby") == [newer]


async def test_a_runner_whose_remembered_docs_went_stale_reads_them_again(
    make_pstore: MakeStore, feed: EmbeddedStore
) -> None:
    """Runner A remembers the docs of its last batch; B then applies the next batch; A must
    not fold on what it remembers: its commit finds the checkpoint moved and it re-reads."""
    await append_interleaved(feed, game_streams(12, 16), 16)
    store_a, store_b = make_pstore(), make_pstore()
    shared = await store_a.begin("lobby", 1)
    a = Runner(LobbyProjection(), store_a, feed, batch=40)
    b = Runner(LobbyProjection(), store_b, feed, batch=40)
    turn = 0
    while await (a if turn % 3 else b).step(shared.number):  # B takes every third batch
        turn += 1
    while await a.step(shared.number) or await b.step(shared.number):
        pass
    alone = await store_a.begin("lobby", 1)
    await run_to_end(Runner(LobbyProjection(), store_a, feed, batch=40), alone.number)
    assert await store_a.dump("lobby", shared.number) == await store_a.dump("lobby", alone.number)


class Stumbling(MemoryProjectionStore):
    """A projection store whose first alias lookup fails as no store error would: as the
    redis-py cluster client did once, racing two first connections to one node
    (AttributeError: 'NoneType' object has no attribute 'writelines')."""

    def __init__(self) -> None:
        super().__init__()
        self.stumbled = 0

    async def alias(self, name: str) -> int | None:
        if not self.stumbled:
            self.stumbled += 1
            raise AttributeError("'NoneType' object has no attribute 'writelines'")
        return await super().alias(name)


async def test_an_unexpected_error_is_logged_and_the_projection_goes_on(
    feed: EmbeddedStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A projection whose task ended on an error no one expected would stay missing for ever
    while the others run (the task's exception unread): the projector logs it and tries
    again, and the projection is built."""
    await append_interleaved(feed, game_streams(4, 17), 17)
    pstore = Stumbling()
    projector = Projector([LobbyProjection()], pstore, feed, poll=0.05, grace=0)
    with captured_logs(monkeypatch, projector_module) as logs:
        async with running(projector):

            async def built() -> bool:  # looked up past the stumble: the projector's to meet
                return await MemoryProjectionStore.alias(pstore, "lobby") is not None

            await until(built)
    assert pstore.stumbled == 1
    crashed = [line for line in logs if line["event"] == "projection_crashed"]
    assert [line["projection"] for line in crashed] == ["lobby"]
    assert "writelines" in crashed[0]["error"]
    events = await feed.read_feed(START, limit=100_000)
    for game, listing in expected_listings(events).items():
        assert await pstore.get("lobby", f"game:{game}") == listing
