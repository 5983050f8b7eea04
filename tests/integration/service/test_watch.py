"""The watcher on real stores: it hears of appends to the games watched, whoever made them,
and a crowd asking for a game's record at once costs the store a shared catch-up."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from events.schema.common import GameOptions
from events.store import Checkpoint, EventStore
from service.live.watch import Watcher
from service.ops.metrics import Metrics
from service.play.games import GameService

pytestmark = pytest.mark.integration

WAIT = 30.0
"""Generous seconds for a notification; nothing here times the watcher."""


class CountingReads:
    """Counts the stream reads a store serves (wraps the real store's method)."""

    def __init__(self, store: EventStore) -> None:
        self.reads = 0
        original = store.read_stream

        async def read_stream(*args: Any, **kwargs: Any) -> Any:
            self.reads += 1
            return await original(*args, **kwargs)

        store.read_stream = read_stream  # type: ignore[method-assign]


class HeadRead:
    """Set once the store has answered a first `feed_head()` (wraps the real method)."""

    def __init__(self, store: EventStore) -> None:
        self.done = asyncio.Event()
        original = store.feed_head

        async def feed_head() -> Checkpoint:
            head = await original()
            self.done.set()
            return head

        store.feed_head = feed_head  # type: ignore[method-assign]


async def test_the_watcher_hears_of_an_append_by_another_writer_to_a_watched_game(
    store: EventStore,
) -> None:
    here, elsewhere = GameService(store, Metrics()), GameService(store, Metrics())
    record, _ = await here.create("golf", 2, GameOptions(hands=1), "")
    watcher = Watcher(store, here, idle_check=0.5)
    head_read = HeadRead(store)
    watcher.start()
    try:
        with watcher.subscribe(record.game_id) as news:
            # it tails the feed from its head, taken once someone subscribes: an append
            # before that it would never hear of
            await asyncio.wait_for(watcher.ready(), WAIT)
            assert head_read.done.is_set()
            changed = news.changed
            await elsewhere.claim(record.game_id, None, "ann")
            await asyncio.wait_for(changed.wait(), WAIT)
            assert news.version == 2
            fresh = await watcher.record(record.game_id, news.version)
            assert fresh.version == 2, "the record caught up with the other writer's append"
        assert record.game_id not in watcher._news, "no subscriber, no news kept"
    finally:
        await watcher.stop()


async def test_a_crowd_asking_for_a_record_at_once_shares_one_catch_up(
    store: EventStore,
) -> None:
    games = GameService(store, Metrics())
    record, _ = await games.create("golf", 2, GameOptions(hands=1), "")
    await GameService(store, Metrics()).claim(record.game_id, None, "ann")  # another writer
    counting = CountingReads(store)
    watcher = Watcher(store, games)
    records = await asyncio.gather(*(watcher.fresh(record.game_id) for _ in range(300)))
    assert {r.version for r in records} == {2}
    assert 1 <= counting.reads <= 2, f"{counting.reads} reads for 300 callers"
    assert watcher._loads == {}, "nothing left behind"


async def test_a_shared_catch_up_reports_a_missing_game_to_every_caller(
    store: EventStore,
) -> None:
    watcher = Watcher(store, GameService(store, Metrics()))
    results = await asyncio.gather(
        *(watcher.fresh("0123456789abcdef") for _ in range(5)), return_exceptions=True
    )
    assert all(getattr(r, "code", None) == "game_not_found" for r in results)


class CountingFeed:
    """Counts the feed reads (pages and heads) a store serves (wraps the real methods)."""

    def __init__(self, store: EventStore) -> None:
        self.reads = 0
        read_feed, feed_head = store.read_feed, store.feed_head

        async def counted_read_feed(*args: Any, **kwargs: Any) -> Any:
            self.reads += 1
            return await read_feed(*args, **kwargs)

        async def counted_feed_head() -> Checkpoint:
            self.reads += 1
            return await feed_head()

        store.read_feed = counted_read_feed  # type: ignore[method-assign]
        store.feed_head = counted_feed_head  # type: ignore[method-assign]


async def test_the_watcher_reads_nothing_while_no_one_subscribes(store: EventStore) -> None:
    games = GameService(store, Metrics())
    counting = CountingFeed(store)
    watcher = Watcher(store, games, idle_check=0.05)
    watcher.start()
    try:
        record, _ = await games.create("golf", 2, GameOptions(hands=1), "")
        await games.claim(record.game_id, None, "ann")
        await asyncio.sleep(0.5)  # time enough to read the feed many times over
        assert counting.reads == 0, "no subscriber: the feed is not read"
        with watcher.subscribe(record.game_id) as news:
            await asyncio.wait_for(watcher.ready(), WAIT)
            changed = news.changed
            await GameService(store, Metrics()).claim(record.game_id, None, "bob")
            await asyncio.wait_for(changed.wait(), WAIT)
            assert news.version == 3
        assert counting.reads > 0
        await asyncio.sleep(0.3)  # the watcher sees no one is left, and goes idle
        idle_at = counting.reads
        await games.create("golf", 2, GameOptions(hands=1), "")
        await asyncio.sleep(0.3)
        assert counting.reads == idle_at, "no subscriber left: the feed is not read"
    finally:
        await watcher.stop()
