"""Two projectors at once on real Redis, following a real PostgreSQL store while games and
tournaments are played into it: every read model they leave, ratings included, is equal
key for key to a rebuild from zero by a third projector.

The two follow with very different batch sizes, so one often commits several batches while
the other folds one: the slow one then finds the checkpoint moved and carries on from
there, never seeing the events in between. A projection that kept anything of those
events in its process (the ratings kept each game's seat names) drifts from the rebuild.
"""

from __future__ import annotations

import asyncio
import random
import secrets
import uuid
from collections.abc import AsyncIterator, Iterator
from typing import Any

import pytest

from events.migrate import migrate
from events.schema.common import GameEnded
from events.schema.lobby import SeatClaimed
from events.store import START, Checkpoint, NewEvent, PostgresStore
from projections.catalog import fresh
from projections.projector import Projector
from projections.redis_store import RedisProjectionStore
from projections.runner import Runner
from service.ops.background import end
from tests.integration.events.conftest import settled_checkpoint
from tests.support.played_games import append_interleaved, game_streams
from tests.support.projected import built_to, caught_up, differences, dumps
from tests.support.redis_keys import forget
from tests.support.services import throwaway_database
from tests.support.tournament_history import append_history, tournament_history

pytestmark = pytest.mark.integration

GAMES = 40
WAVE = 4
PIPES = 2


class Late:
    """A feed whose pages now and then arrive late (a busy process, a slow network), so the
    other projector, reading later, may commit past the page meanwhile. `hold`, when given,
    holds every page until it is set."""

    def __init__(self, feed: PostgresStore, seed: int, hold: asyncio.Event | None = None) -> None:
        self.feed = feed
        self.rng = random.Random(seed)
        self.hold = hold
        self.held = 0
        """Pages held so far."""

    async def read_feed(self, after: Checkpoint = START, limit: int = 1000) -> Any:
        page = await self.feed.read_feed(after, limit)
        if self.hold is not None:
            self.held += 1
            await self.hold.wait()
        elif self.rng.random() < 0.4:
            await asyncio.sleep(self.rng.uniform(0.02, 0.15))
        return page

    def __getattr__(self, name: str) -> Any:
        return getattr(self.feed, name)


@pytest.fixture
def own_database(postgres_server_url: str) -> Iterator[str]:
    """A database of this test alone: its feed holds only the games played here."""
    with throwaway_database(postgres_server_url, "fairway_two") as url:
        migrate(url)
        yield url


@pytest.fixture
async def redis14(redis_url: str) -> AsyncIterator[tuple[str, list[str]]]:
    """The projection tests' Redis database and the prefixes used (forgotten afterwards)."""
    url = redis_url
    prefixes: list[str] = []
    yield url, prefixes
    for prefix in prefixes:
        await forget(url, prefix)


async def play_everything(store: PostgresStore, seed: int) -> None:
    """Casual games a few events an append, a few games at a time taking turns, new ones
    opening while others play; and tournaments (with a casual game or two of their own): as
    a busy service appends them."""
    games = game_streams(GAMES, seed)
    rng = random.Random(seed)
    tournaments = [tournament_history(seed * 10 + i, finish=rng.random() < 0.5) for i in range(3)]

    async def waves(first: int) -> None:
        for at in range(first, len(games), PIPES * WAVE):
            await append_interleaved(store, games[at : at + WAVE], seed + at, 12, 1)

    async def tournament(history: Any) -> None:
        versions: dict[str, int] = {}
        for at in range(0, len(history), 9):
            await append_history(store, history[at : at + 9], versions)

    await asyncio.gather(
        *(waves(pipe * WAVE) for pipe in range(PIPES)),
        *(tournament(history) for history in tournaments),
    )


async def test_two_projectors_at_once_leave_what_a_rebuild_from_zero_builds(
    own_database: str, redis14: tuple[str, list[str]]
) -> None:
    url, prefixes = redis14
    shared, rebuilt = f"two{secrets.token_hex(4)}", f"zero{secrets.token_hex(4)}"
    prefixes += [shared, rebuilt]
    feeds = [await PostgresStore.open(own_database, poll_interval=0.05) for _ in range(3)]
    stores = [RedisProjectionStore.from_url(url, p, timeout=10) for p in (shared, shared, rebuilt)]
    try:
        one = Projector(fresh(), stores[0], Late(feeds[0], 5), poll=0.05, grace=0)
        other = Projector(fresh(), stores[1], Late(feeds[1], 6), poll=0.05, grace=0)
        running = [asyncio.create_task(p.run()) for p in (one, other)]
        await play_everything(feeds[2], seed=71)
        mark = await settled_checkpoint(feeds[2])  # every append visible through it
        await asyncio.wait_for(caught_up(stores[0], mark), 300)
        for task in running:
            await end(task)
        both = await dumps(stores[0])
        assert all(both.values())

        await built_to(Projector(fresh(), stores[2], feeds[2], grace=0), mark)
        from_zero = await dumps(stores[2])
        for name, docs in from_zero.items():
            assert differences(both[name], docs) == [], name
    finally:
        for each in stores:
            await each.close()
        for feed in feeds:
            await feed.close()


async def test_what_the_other_projector_committed_is_read_from_the_documents(
    own_database: str, redis14: tuple[str, list[str]]
) -> None:
    """The same, step by step, for every projection. Given projector A holding its page of
    a game's first events while projector B commits past them (the other seats claimed, the
    game played), when A carries on from B's checkpoint and commits the game's end, then
    every read model is what a rebuild from zero makes: A never read the events B applied,
    and needed nothing of them but the documents."""
    url, prefixes = redis14
    shared, rebuilt = f"step{secrets.token_hex(4)}", f"zero{secrets.token_hex(4)}"
    prefixes += [shared, rebuilt]
    stream, events = next(
        (s, e)
        for s, e in game_streams(30, seed=5)
        if isinstance(e[-1], GameEnded) and sum(isinstance(x, SeatClaimed) for x in e) >= 2
    )
    hold = asyncio.Event()
    async with await PostgresStore.open(own_database) as feed:
        stores = [RedisProjectionStore.from_url(url, p, timeout=10) for p in (shared, shared)]
        try:
            a_side, b_side = fresh(), fresh()
            numbers = []
            for projection in a_side:
                number = (await stores[0].begin(projection.name, projection.version)).number
                assert await stores[0].switch(projection.name, number, None)
                numbers.append(number)
            late = Late(feed, 0, hold)
            a = [Runner(p, stores[0], late) for p in a_side]
            b = [Runner(p, stores[1], feed) for p in b_side]

            await feed.append(stream, 0, [NewEvent(uuid.uuid4(), e) for e in events[:2]])
            await settled_checkpoint(feed)
            held = [asyncio.create_task(r.step(n)) for r, n in zip(a, numbers, strict=True)]
            while late.held < len(a):  # each holds the page it read
                await asyncio.sleep(0.01)
            await feed.append(stream, 2, [NewEvent(uuid.uuid4(), e) for e in events[2:-1]])
            await settled_checkpoint(feed)
            for runner, number in zip(b, numbers, strict=True):
                while await runner.step(number):
                    pass
            hold.set()
            await asyncio.gather(*held)
            await feed.append(stream, len(events) - 1, [NewEvent(uuid.uuid4(), events[-1])])
            mark = await settled_checkpoint(feed)
            for runner, number in zip(a, numbers, strict=True):
                while await runner.step(number):
                    pass
            assert sum(r.applied for r in a) > 0  # A committed the game's end

            zero = RedisProjectionStore.from_url(url, rebuilt, timeout=10)
            stores.append(zero)
            await built_to(Projector(fresh(), zero, feed, grace=0), mark)
            steps, from_zero = await dumps(stores[0]), await dumps(zero)
            for name, docs in from_zero.items():
                assert differences(steps[name], docs) == [], name
        finally:
            for each in stores:
                await each.close()
