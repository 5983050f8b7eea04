"""The catalog built in one pass (one projector: each page of the feed looked through once
for all six runners, projections/batch.py) holds exactly what each projection holds when a
projector of its own builds it alone, with pages cut elsewhere: key for key, value for
value, in Redis and in memory."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

import pytest

from events.store import EmbeddedStore
from projections.catalog import fresh
from projections.memory import MemoryProjectionStore
from projections.projector import Projector
from projections.redis_store import RedisProjectionStore
from projections.store import ProjectionStore
from tests.support.played_games import append_interleaved, game_streams
from tests.support.redis_keys import forget
from tests.support.tournament_history import append_history, tournament_history

pytestmark = pytest.mark.integration


@pytest.fixture
async def two_stores(
    store_kind: str, redis_url: str, prefix: str
) -> AsyncIterator[tuple[ProjectionStore, ProjectionStore]]:
    """Two projection stores of `store_kind`, each a key space of its own."""
    if store_kind == "memory":
        yield MemoryProjectionStore(), MemoryProjectionStore()
        return
    stores = [RedisProjectionStore.from_url(redis_url, f"{prefix}{side}") for side in "ab"]
    try:
        yield stores[0], stores[1]
    finally:
        for side, store in zip("ab", stores, strict=True):
            await store.close()
            await forget(redis_url, f"{prefix}{side}")


async def test_the_catalog_in_one_pass_is_each_projection_built_alone(
    two_stores: tuple[ProjectionStore, ProjectionStore], feed: EmbeddedStore
) -> None:
    await append_interleaved(feed, game_streams(16, 4), 4)
    for i in range(2):
        await append_history(feed, tournament_history(40 + i, finish=i == 0))
    together, alone = two_stores
    projector = Projector(fresh(), together, feed, batch=97, grace=0)
    await asyncio.gather(*(projector.build(p, None, "requested") for p in projector.projections))
    for projection in fresh():
        await Projector([projection], alone, feed, batch=37, grace=0).build(
            projection, None, "requested"
        )
    for projection in fresh():
        name = projection.name
        built, apart = await together.alias(name), await alone.alias(name)
        assert built is not None
        assert apart is not None
        dumped = await together.dump(name, built)
        assert dumped, name
        assert dumped == await alone.dump(name, apart), name
