"""The in-memory read models of `fairway serve` are caught up when read (projections/
demand.py, service/read/projections.py): the projector reads nothing from the feed while
nobody reads, and a read sees every append the feed showed when it came."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator

import pytest

from events.feed import SharedFeed
from events.schema.common import GameOptions
from events.store import Checkpoint, EmbeddedStore
from projections import lobby, scoreboard
from service.ops.metrics import Metrics
from service.ops.settings import Settings
from service.play.games import GameService
from service.read.projections import ProjectionService
from tests.support.feed_wrappers import Through

pytestmark = pytest.mark.integration

QUIET = 3600.0
"""The background's look at the feed here: none comes while the test runs."""


class Counted(Through):
    """The real store, counting the pages the projector reads from it."""


@contextlib.asynccontextmanager
async def serving(
    store: EmbeddedStore, counted: Counted, watch: float = 0.0
) -> AsyncIterator[ProjectionService]:
    """The read side as `fairway serve` runs it without REDIS_URL; a read model read within
    `watch` seconds follows every append (none here unless asked)."""
    shared = SharedFeed(counted)
    # no bound on a reader's wait: a read here must see what came before it, however slow
    # the machine (in service, a reader waits `LONGEST` at most)
    service = ProjectionService(
        Settings(), store, store, shared, quiet=QUIET, watch=watch, longest=3600.0
    )
    service.start()
    try:
        yield service
    finally:
        await service.close()


async def test_a_read_right_after_an_append_sees_it(feed: EmbeddedStore) -> None:
    """Given the in-memory read models not read lately (no watch here), when a game is
    created and its scoreboard and the lobby are read at once after the append returns,
    then both show it (no wait, no retry: the read caught the projector up first), and so
    does the next game's."""
    games = GameService(feed, Metrics())
    async with serving(feed, Counted(feed)) as service:
        for _ in range(2):
            record, _ = await games.create("golf", 2, GameOptions(hands=1), "on demand")
            board = await service.reader.get(
                scoreboard.Scoreboard.name, scoreboard.key(record.game_id)
            )
            assert board is not None
            page = await service.reader.page(lobby.NAME, lobby.index_name(), limit=100)
            assert record.game_id in [entry.member for entry in page.entries]


async def test_the_projector_reads_nothing_while_nobody_reads(feed: EmbeddedStore) -> None:
    """Given the in-memory read models caught up, when games are created and the feed has
    woken its followers, then the projector has read no page of the feed (following every
    append, it read them at once); the next read catches it up and sees them all."""
    counted = Counted(feed)
    games = GameService(feed, Metrics())
    async with serving(feed, counted) as service:
        await service.caught_up()
        head = await feed.feed_head()
        before = counted.reads
        created = [
            (await games.create("golf", 2, GameOptions(hands=1), "quiet"))[0].game_id
            for _ in range(3)
        ]
        assert await feed.wait_for_events(head, 30.0)  # the wake-up the projector once followed
        await asyncio.sleep(0.5)  # its reads, had it followed, came within milliseconds
        assert counted.reads == before
        page = await service.reader.page(lobby.NAME, lobby.index_name(), limit=100)
        assert set(created) <= {entry.member for entry in page.entries}
        assert counted.reads > before


async def test_concurrent_readers_share_a_round(feed: EmbeddedStore) -> None:
    """Given many readers of the lobby at once, then they are answered by one or two rounds
    of its catch-up between them (one under way may predate some of them: they share the
    next), not one round each; and the other read models are not folded for them."""
    games = GameService(feed, Metrics())
    async with serving(feed, Counted(feed)) as service:
        await service.caught_up()
        assert service.demand is not None
        lanes = service.demand.lanes
        before = {name: lane.rounds for name, lane in lanes.items()}
        await games.create("golf", 2, GameOptions(hands=1), "crowd")
        pages = await asyncio.gather(
            *(service.reader.page(lobby.NAME, lobby.index_name(), limit=10) for _ in range(50))
        )
        assert all(page.entries for page in pages)
        assert lanes[lobby.NAME].rounds - before[lobby.NAME] <= 2
        assert lanes[scoreboard.Scoreboard.name].rounds == before[scoreboard.Scoreboard.name]


async def test_a_read_model_read_lately_follows_every_append(feed: EmbeddedStore) -> None:
    """Given the lobby read a moment ago (within the watch), when a game is created, then
    the lobby's projector reads it without another read asking (so that a reader polling
    the lobby finds little to fold), while the scoreboard, not read, stays where it was."""
    games = GameService(feed, Metrics())
    async with serving(feed, Counted(feed), watch=QUIET) as service:
        await service.reader.page(lobby.NAME, lobby.index_name(), limit=10)
        assert service.demand is not None
        rounds = service.demand.rounds
        await games.create("golf", 2, GameOptions(hands=1), "watched")
        head = await feed.feed_head()
        async with asyncio.timeout(30):
            while not await at(service, head, [lobby.NAME]):
                await asyncio.sleep(0.02)
        assert not await at(service, head, [scoreboard.Scoreboard.name])
        await service.reader.page(lobby.NAME, lobby.index_name(), limit=10)
        assert service.demand.rounds == rounds  # answered at once, as far as it followed


async def test_at_rest_the_read_models_catch_up_by_themselves(feed: EmbeddedStore) -> None:
    """Given the in-memory read models and no reader, when games are created and then the
    feed stays quiet, then every read model reaches the feed's head by itself (the round
    the background asks once the head has stood still), and that round is not a read: no
    read model then follows every append (were it one, a server at rest would follow for
    good)."""
    games = GameService(feed, Metrics())
    shared = SharedFeed(feed)
    service = ProjectionService(Settings(), feed, feed, shared, quiet=0.05, watch=QUIET)
    service.start()
    try:
        assert service.demand is not None
        await service.demand.catch_up(watch=False)  # built, and waiting for a round
        for _ in range(3):
            await games.create("golf", 2, GameOptions(hands=1), "at rest")
        head = await feed.feed_head()
        async with asyncio.timeout(30):
            while not await at(service, head):
                await asyncio.sleep(0.02)
        assert not any(lane.watched() for lane in service.demand.lanes.values())
    finally:
        await service.close()


async def at(service: ProjectionService, head: Checkpoint, names: list[str] | None = None) -> bool:
    """Whether every read model's (of `names`) live generation stands at `head`."""
    assert service.demand is not None
    for name in names or service.demand.lanes:
        number = await service.store.alias(name)
        snapshot = None if number is None else await service.store.snapshot(name, number, (), ())
        if snapshot is None or snapshot.checkpoint != head:
            return False
    return True
