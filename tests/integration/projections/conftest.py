"""Projection tests run against both stores: Redis (real, database 14, a key prefix of the
test's own) and in memory. The event feed is a fresh embedded store per test, so that a
read model can be compared with the whole feed it was built from."""

from __future__ import annotations

import secrets
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from events.store import EmbeddedStore
from projections.memory import MemoryProjectionStore
from projections.redis_store import RedisProjectionStore
from projections.store import ProjectionStore
from tests.support.redis_keys import REDIS_DB, forget, on_db


@pytest.fixture(scope="session")
def redis14_url(redis_url: str) -> str:
    return on_db(redis_url, REDIS_DB)


@pytest.fixture
def prefix() -> str:
    return f"t{secrets.token_hex(5)}"


@pytest.fixture(params=["memory", "redis"])
def store_kind(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@pytest.fixture
async def make_pstore(store_kind: str, redis14_url: str, prefix: str) -> AsyncIterator[object]:
    """Opens projection stores of this test's kind that share one key space (a second
    store stands for a second process)."""
    opened: list[ProjectionStore] = []
    shared = MemoryProjectionStore()

    def make() -> ProjectionStore:
        if store_kind == "memory":
            return shared
        store = RedisProjectionStore.from_url(redis14_url, prefix)
        opened.append(store)
        return store

    yield make
    for store in opened:
        await store.close()
    if store_kind == "redis":
        await forget(redis14_url, prefix)


@pytest.fixture
def pstore(make_pstore: object) -> ProjectionStore:
    return make_pstore()  # type: ignore[operator,no-any-return]


@pytest.fixture
async def feed(tmp_path: Path) -> AsyncIterator[EmbeddedStore]:
    store = await EmbeddedStore.open(tmp_path / "events", poll_interval=0.05)
    yield store
    await store.close()
