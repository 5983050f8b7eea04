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
import contextlib
import random
import secrets
from collections.abc import AsyncIterator, Iterator
from typing import Any

import pytest

from events.migrate import migrate
from events.store import START, PostgresStore
from projections.catalog import PROJECTIONS, fresh
from projections.projector import Projector
from projections.redis_store import RedisProjectionStore
from projections.store import ProjectionStore
from tests.support.played_games import append_interleaved, game_streams
from tests.support.redis_keys import REDIS_DB, forget, on_db
from tests.support.services import throwaway_database
from tests.support.tournament_history import append_history, tournament_history

pytestmark = pytest.mark.integration

GAMES = 40
WAVE = 4


class Pausing:
    """A feed whose reads now and then take a while to arrive (a busy process, a slow
    network): the batch read is then older than the feed, and the other projector may
    commit past it meanwhile."""

    def __init__(self, feed: PostgresStore, seed: int) -> None:
        self.feed = feed
        self.rng = random.Random(seed)

    async def read_feed(self, after: Any = START, limit: int = 1000) -> Any:
        page = await self.feed.read_feed(after, limit)
        if self.rng.random() < 0.4:
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
    url = on_db(redis_url, REDIS_DB)
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
        for at in range(first, len(games), 2 * WAVE):
            await append_interleaved(store, games[at : at + WAVE], seed + at, most=3)

    async def tournament(history: Any) -> None:
        versions: dict[str, int] = {}
        for at in range(0, len(history), 9):
            await append_history(store, history[at : at + 9], versions)

    await asyncio.gather(waves(0), waves(WAVE), *(tournament(history) for history in tournaments))


async def caught_up(pstore: ProjectionStore, feed: PostgresStore) -> None:
    """Until every projection's live generation has applied the whole feed."""
    head = await feed.feed_head()
    while True:
        behind = []
        for projection in PROJECTIONS:
            number = await pstore.alias(projection.name)
            meta = None if number is None else await pstore.generation(projection.name, number)
            if meta is None or meta.checkpoint < head:
                behind.append(projection.name)
        if not behind:
            return
        await asyncio.sleep(0.05)


async def dumps(pstore: ProjectionStore) -> dict[str, dict[str, object]]:
    out = {}
    for projection in PROJECTIONS:
        number = await pstore.alias(projection.name)
        assert number is not None, projection.name
        out[projection.name] = dict(await pstore.dump(projection.name, number))
    return out


def differences(found: dict[str, object], expected: dict[str, object]) -> list[object]:
    """The keys whose values differ, each with what differs (for an index: the entries
    only one side holds)."""
    out: list[object] = []
    for key in sorted(found.keys() | expected.keys()):
        mine, theirs = found.get(key), expected.get(key)
        if mine == theirs:
            continue
        if isinstance(mine, list) and isinstance(theirs, list):
            ours, zero = {tuple(e) for e in mine}, {tuple(e) for e in theirs}
            out.append((key, sorted(ours - zero)[:3], sorted(zero - ours)[:3]))
        else:
            out.append((key, mine, theirs))
    return out[:5]


async def test_two_projectors_at_once_leave_what_a_rebuild_from_zero_builds(
    own_database: str, redis14: tuple[str, list[str]]
) -> None:
    url, prefixes = redis14
    shared, rebuilt = f"two{secrets.token_hex(4)}", f"zero{secrets.token_hex(4)}"
    prefixes += [shared, rebuilt]
    feeds = [await PostgresStore.open(own_database, poll_interval=0.05) for _ in range(3)]
    stores = [RedisProjectionStore.from_url(url, p) for p in (shared, shared, rebuilt)]
    try:
        one = Projector(fresh(), stores[0], Pausing(feeds[0], 5), poll=0.05, grace=0)
        other = Projector(fresh(), stores[1], Pausing(feeds[1], 6), poll=0.05, grace=0)
        running = [asyncio.create_task(p.run()) for p in (one, other)]
        await play_everything(feeds[2], seed=71)
        await asyncio.wait_for(caught_up(stores[0], feeds[2]), 120)
        for task in running:
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task
        both = await dumps(stores[0])
        assert all(both.values())

        zero = Projector(fresh(), stores[2], feeds[2], grace=0)
        for projection in zero.projections:
            await zero.ensure(projection)
        from_zero = await dumps(stores[2])
        for name, docs in from_zero.items():
            assert differences(both[name], docs) == [], name
    finally:
        for each in stores:
            await each.close()
        for feed in feeds:
            await feed.close()
