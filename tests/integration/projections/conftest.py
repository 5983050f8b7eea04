"""Projection tests run against both stores: Redis (real, the worker's database, a key prefix
of the test's own) and in memory. The event feed is a fresh embedded store per test, so that a
read model can be compared with the whole feed it was built from."""

from __future__ import annotations

import contextlib
import secrets
from collections.abc import AsyncIterator, Callable
from pathlib import Path

import pytest

from events.store import EmbeddedStore
from projections.memory import MemoryProjectionStore
from projections.redis_store import RedisProjectionStore
from projections.store import ProjectionStore
from tests.support.redis_keys import forget


@pytest.fixture
def prefix() -> str:
    return f"t{secrets.token_hex(5)}"


@pytest.fixture(params=["memory", "redis"])
def store_kind(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@contextlib.asynccontextmanager
async def projection_stores(
    kind: str, redis_url: str, prefix: str
) -> AsyncIterator[Callable[[], ProjectionStore]]:
    """A maker of projection stores of `kind` sharing one key space (a second store stands
    for a second process); on leaving, the Redis ones are closed and their keys forgotten."""
    opened: list[ProjectionStore] = []
    shared = MemoryProjectionStore()

    def make() -> ProjectionStore:
        if kind == "memory":
            return shared
        store = RedisProjectionStore.from_url(redis_url, prefix)
        opened.append(store)
        return store

    try:
        yield make
    finally:
        for store in opened:
            await store.close()
        if kind == "redis":
            await forget(redis_url, prefix)


@pytest.fixture
async def make_pstore(
    store_kind: str, redis_url: str, prefix: str
) -> AsyncIterator[Callable[[], ProjectionStore]]:
    async with projection_stores(store_kind, redis_url, prefix) as make:
        yield make


@pytest.fixture
def pstore(make_pstore: Callable[[], ProjectionStore]) -> ProjectionStore:
    return make_pstore()


@pytest.fixture
async def feed(tmp_path: Path) -> AsyncIterator[EmbeddedStore]:
    store = await EmbeddedStore.open(tmp_path / "events", poll_interval=0.05)
    yield store
    await store.close()
