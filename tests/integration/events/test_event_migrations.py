"""Migrations: versioned, applied once, safe to run twice or at the same time."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

import psycopg
import pytest

from events.migrate import MigrationError, migrate, migrations
from events.store import StoreUnavailable
from tests.support.services import throwaway_database

pytestmark = pytest.mark.integration

ALL = [f"{m.version:04d}_{m.name}" for m in migrations()]


def test_migrations_are_numbered_in_order() -> None:
    assert [m.version for m in migrations()] == list(range(1, len(ALL) + 1))


def test_migrating_twice_is_a_no_op(postgres_server_url: str) -> None:
    with throwaway_database(postgres_server_url, "fairway_migrate") as url:
        assert migrate(url) == ALL
        with psycopg.connect(url) as conn:
            before = conn.execute("SELECT * FROM schema_migrations ORDER BY version").fetchall()

        assert migrate(url) == []

        with psycopg.connect(url) as conn:
            after = conn.execute("SELECT * FROM schema_migrations ORDER BY version").fetchall()
            assert after == before
            assert [row[0] for row in after] == list(range(1, len(ALL) + 1))


def test_the_session_database_is_migrated(database_url: str) -> None:
    assert migrate(database_url) == []


def test_two_migrators_at_once_apply_each_migration_once(postgres_server_url: str) -> None:
    with throwaway_database(postgres_server_url, "fairway_migrate") as url:
        with ThreadPoolExecutor(2) as pool:
            results = list(pool.map(migrate, [url, url]))
        assert sorted(results, key=len) == [[], ALL]


def test_a_changed_migration_file_is_refused(postgres_server_url: str) -> None:
    with throwaway_database(postgres_server_url, "fairway_migrate") as url:
        migrate(url)
        with psycopg.connect(url, autocommit=True) as conn:
            conn.execute("UPDATE schema_migrations SET checksum = 'x' WHERE version = 2")
        with pytest.raises(MigrationError, match="0002_append_function"):
            migrate(url)


def test_an_unreachable_database_is_store_unavailable() -> None:
    with pytest.raises(StoreUnavailable):
        migrate("postgresql://postgres@127.0.0.1:1/nothing?connect_timeout=1")
