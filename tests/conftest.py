"""Fixtures for the whole suite: real PostgreSQL and Redis, found or started once per session
(tests/support/services.py), a fresh migrated database per session and a Redis database per
worker. Under xdist each worker is a session of its own: no two workers share a PostgreSQL
database; in Redis each test keeps to a key prefix of its own (tests/support/redis_keys.py)."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import ExitStack

import pytest

from events.migrate import migrate
from tests.support.redis_keys import on_db, worker_database
from tests.support.services import find_postgres, find_redis, throwaway_database


@pytest.fixture(scope="session")
def _services() -> Iterator[ExitStack]:
    """Owns any container started for the session."""
    with ExitStack() as stack:
        yield stack


@pytest.fixture(scope="session")
def postgres_server_url(_services: ExitStack) -> str:
    """A PostgreSQL server where the tests may create databases and roles."""
    return find_postgres(_services)


@pytest.fixture(scope="session")
def database_url(postgres_server_url: str) -> Iterator[str]:
    """A throw-away database (`fairway_test_<hex>`), migrated, dropped after the session."""
    with throwaway_database(postgres_server_url) as url:
        migrate(url)
        yield url


@pytest.fixture(scope="session")
def redis_url(_services: ExitStack) -> str:
    """This worker's database on the Redis server."""
    return on_db(find_redis(_services), worker_database())
