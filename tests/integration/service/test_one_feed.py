"""The background consumers of one process read one feed (events/feed.py, service/ops/
follower.py): the referee, the bots, the round keeper and the projector, caught up at one
checkpoint, read the appends that woke them once between them, not once each per append;
and one that fails stops none of the others."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path

import pytest

from events.feed import SharedFeed
from events.migrate import migrate
from events.schema.common import GameOptions
from events.store import (
    START,
    Checkpoint,
    EmbeddedStore,
    EventStore,
    PostgresStore,
    RecordedEvent,
    StoreUnavailable,
)
from projections.catalog import fresh
from projections.memory import MemoryProjectionStore
from projections.projector import Projector
from service.bots.runner import BotRunner
from service.http.background import background
from service.ops.background import end
from service.ops.follower import Follower
from service.ops.leader import Consumer
from service.ops.metrics import Metrics
from service.ops.settings import Settings
from service.play.games import GameService
from service.play.loading import stream_id
from service.read.projections import ProjectionService
from service.referee.referee import Referee, utc_now
from service.tournaments.rounds import RoundKeeper
from service.tournaments.service import TournamentService
from tests.support.feed_wrappers import Through
from tests.support.services import throwaway_database

pytestmark = pytest.mark.integration


@pytest.fixture(params=["postgres", "embedded"])
async def store(
    request: pytest.FixtureRequest, tmp_path: Path, postgres_server_url: str
) -> AsyncIterator[EventStore]:
    """A store of this test's own. These consumers act on every game they find, and the
    session's database holds earlier tests' games (bot seats, clocks): a bot moving in one of
    those took the feed's head past the one awaited here, once in a whole-suite run."""
    with contextlib.ExitStack() as stack:
        if request.param == "postgres":
            url = stack.enter_context(throwaway_database(postgres_server_url, "fairway_feed"))
            migrate(url)
            opened: EventStore = await PostgresStore.open(url, poll_interval=0.2)
        else:
            opened = await EmbeddedStore.open(tmp_path, poll_interval=0.2)
        try:
            yield opened
        finally:
            await opened.close()


QUIET = 60.0
"""Every consumer's timeout: none of them looks again unless an append wakes it."""
WAIT = 30.0
"""Generous seconds for the consumers to catch up; nothing here times them."""


class Gated(Through):
    """The real store, counting the pages read from it; a wait that sees an append returns
    only once the gate opens (the test's appends all land before anyone wakes); and the
    next page read can be made to fail."""

    def __init__(self, store: EventStore) -> None:
        super().__init__(store)
        self.gate = asyncio.Event()
        self.fail_next_read = False

    async def read_feed(self, after: Checkpoint = START, limit: int = 1000) -> list[RecordedEvent]:
        if self.fail_next_read:
            self.fail_next_read = False
            self.reads += 1
            raise StoreUnavailable("the feed's read failed")
        return await super().read_feed(after, limit)

    async def wait_for_events(self, after: Checkpoint, timeout: float) -> bool:
        woke = await self.store.wait_for_events(after, timeout)
        if woke:
            await self.gate.wait()
        return woke


class Broken:
    """A consumer whose every fold fails."""

    def __init__(self) -> None:
        self.failures = 0

    async def fold(self, page: list[RecordedEvent]) -> None:
        self.failures += 1
        raise RuntimeError("this consumer cannot fold")

    async def act(self) -> float:
        return QUIET


class Consumers:
    """The background consumers of `fairway serve`'s leading process, on one shared feed."""

    def __init__(self, store: EventStore, feed: SharedFeed, pstore: MemoryProjectionStore):
        games = GameService(store, Metrics())
        self.referee = Referee(feed, games, tick=QUIET)
        self.bots = BotRunner(feed, games, tick=QUIET)
        self.keeper = RoundKeeper(feed, TournamentService(store, games, Metrics()), QUIET)
        self.projector = Projector(fresh(), pstore, feed, poll=QUIET, grace=0)
        self.pstore = pstore
        self.followers = [self.referee.follower, self.bots.follower, self.keeper.follower]

    async def at(self, head: Checkpoint) -> bool:
        """Whether every consumer has read the feed up to `head`."""
        if any(f.checkpoint != head for f in self.followers):
            return False
        for projection in self.projector.projections:
            number = await self.pstore.alias(projection.name)
            snapshot = (
                None
                if number is None
                else await self.pstore.snapshot(projection.name, number, (), ())
            )
            if snapshot is None or snapshot.checkpoint != head:
                return False
        return True


@contextlib.asynccontextmanager
async def running(consumers: Consumers, *more: Follower) -> AsyncIterator[None]:
    projecting = asyncio.create_task(consumers.projector.run())
    started: list[Consumer] = [consumers.referee, consumers.bots, consumers.keeper, *more]
    for each in started:
        each.start()
    try:
        yield
    finally:
        for each in started:
            await each.stop()
        await end(projecting)


async def until(holds: Callable[[], bool | Awaitable[bool]]) -> None:
    async with asyncio.timeout(WAIT):
        while True:
            held = holds()
            if held if isinstance(held, bool) else await held:
                return
            await asyncio.sleep(0.01)


async def appended(store: EventStore, games: int) -> Checkpoint:
    """One append for each of `games` new games (their creation); the feed's head once it
    shows them. The feed shows an append only once every older transaction on the server
    has ended (docs/EVENT_STORE.md), and another test's, in another database, may still be
    open: a head read at once could stand before the appends the consumers go on to read."""
    service = GameService(store, Metrics())
    last = START
    for _ in range(games):
        record, _ = await service.create("golf", 2, GameOptions(hands=1), "one feed")
        [*_, created] = await store.read_stream(stream_id(record.game_id))
        last = max(last, created.checkpoint)

    async def shown() -> bool:
        return await store.feed_head() >= last

    await until(shown)
    return await store.feed_head()


async def test_appends_that_arrive_together_are_read_once_for_every_consumer(
    store: EventStore,
) -> None:
    """Given the referee, the bots, the round keeper and the projector caught up at one
    checkpoint in one process, when eight appends arrive before any of them wakes, then the
    feed is read once after the wake-up for all of them (each reading on its own read it
    four times at least, or once per append), and every one of them has read all eight."""
    gated = Gated(store)
    feed = SharedFeed(gated)
    consumers = Consumers(store, feed, MemoryProjectionStore())
    head = await appended(store, 1)
    async with running(consumers):
        await until(lambda: consumers.at(head))
        # All of them back in their wait: the three followers and the projector's runners.
        waiters = 3 + len(consumers.projector.projections)
        await until(lambda: feed.waiting(head) == waiters)
        head = await appended(store, 8)
        before = gated.reads
        gated.gate.set()
        await until(lambda: consumers.at(head))
        assert gated.reads - before == 1


async def test_a_consumer_that_fails_stops_none_of_the_others(store: EventStore) -> None:
    """Given a follower whose every fold fails, and a read of the shared feed that fails
    under all of them at once, then each consumer backs off and reads again on its own,
    and the referee, the bots, the round keeper and the projector all read the feed to its
    head while the broken one stays where it failed."""
    gated = Gated(store)
    gated.gate.set()
    feed = SharedFeed(gated)
    consumers = Consumers(store, feed, MemoryProjectionStore())
    broken = Broken()
    follower = Follower("broken", feed, broken)
    head = await appended(store, 1)
    async with running(consumers, follower):
        await until(lambda: consumers.at(head))
        await until(lambda: broken.failures > 0)
        gated.fail_next_read = True
        head = await appended(store, 3)
        await until(lambda: consumers.at(head))
        head = await appended(store, 2)
        await until(lambda: consumers.at(head))
        assert follower.checkpoint == START  # it never got past its first page


async def test_serve_hands_its_one_feed_to_every_background_consumer(store: EventStore) -> None:
    """As `fairway serve` wires them (service/http/app.py): the projector and the consumers
    run under the lead all read through the process's one shared feed."""
    settings = Settings(referee=True, bots=True, round_keeper=True)
    feed = SharedFeed(store)
    games = GameService(store, Metrics())
    tournaments = TournamentService(store, games, Metrics())
    projections = ProjectionService(settings, store, store, feed)
    try:
        leaders = background(
            settings, store, feed, games, tournaments, projections, Metrics(), utc_now
        )
        consumers = leaders[0].consumers
        assert len(consumers) == 3
        assert all(c.follower.feed is feed for c in consumers)  # type: ignore[attr-defined]
        assert projections.projector is not None
        assert projections.projector.feed is feed
    finally:
        await projections.close()
