"""Migrations: versioned, applied once, safe to run twice or at the same time."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

import psycopg
import pytest
from psycopg import conninfo

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


def test_the_app_role_may_read_but_not_insert(database_url: str) -> None:
    with psycopg.connect(database_url) as conn:
        rights = conn.execute(
            "SELECT has_table_privilege('fairway_app', 'events', 'SELECT'),"
            " has_table_privilege('fairway_app', 'events', 'INSERT'),"
            " has_any_column_privilege('fairway_app', 'events', 'INSERT')"
        ).fetchone()
    assert rights == (True, False, False)


def test_the_append_function_pins_the_schema_it_was_migrated_in(postgres_server_url: str) -> None:
    with throwaway_database(postgres_server_url, "fairway_migrate") as url:
        with psycopg.connect(url, autocommit=True) as conn:
            conn.execute("CREATE SCHEMA fairway_events")
        migrate(conninfo.make_conninfo(url, options="-c search_path=fairway_events"))

        with psycopg.connect(url, autocommit=True) as conn:
            config = conn.execute(
                "SELECT DISTINCT proconfig FROM pg_proc WHERE proname = 'fairway_append'"
            ).fetchall()
            assert config == [(["search_path=pg_catalog, fairway_events, pg_temp"],)]
            conn.execute("SET ROLE fairway_app")  # its search_path holds no events table
            row = conn.execute(
                "SELECT stream_version, octet_length(hash) FROM fairway_events.fairway_append("
                "'game:1', 0, gen_random_uuid(), 'game.started', 1, '{}', '{}')"
            ).fetchone()
            assert row == (1, 32)


def test_a_schema_the_app_role_may_create_in_is_refused(postgres_server_url: str) -> None:
    """The pinned search_path protects only if fairway_app cannot add its own operators or
    functions to the schema."""
    with throwaway_database(postgres_server_url, "fairway_migrate") as url:
        with psycopg.connect(url, autocommit=True) as conn:
            conn.execute("GRANT CREATE ON SCHEMA public TO PUBLIC")
        with pytest.raises(MigrationError, match="fairway_app may create objects"):
            migrate(url)
        with psycopg.connect(url, autocommit=True) as conn:
            conn.execute("REVOKE CREATE ON SCHEMA public FROM PUBLIC")
        assert migrate(url) == ALL[3:]  # from 0004 on


def test_an_unreachable_database_is_store_unavailable() -> None:
    with pytest.raises(StoreUnavailable):
        migrate("postgresql://postgres@127.0.0.1:1/nothing?connect_timeout=1")
