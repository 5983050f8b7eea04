"""Versioned migrations of the PostgreSQL event store.

`events/migrations/NNNN_name.sql` run in number order, each in its own transaction together
with its row in `schema_migrations` (version, name, checksum). A session advisory lock keeps
two migrators from racing; a migration already applied is skipped, so running twice is a
no-op, and one whose file changed after it was applied is an error.
"""

from __future__ import annotations

import hashlib
import re
from pathlib import Path
from typing import Final, NamedTuple

import psycopg

from events.store.base import StoreError, StoreUnavailable

MIGRATIONS_DIR: Final = Path(__file__).parent / "migrations"
_FILE_NAME: Final = re.compile(r"^(\d{4})_([a-z0-9_]+)\.sql$")
_LOCK_KEY: Final = "fairway:migrate"

_CREATE_TABLE: Final = """
CREATE TABLE IF NOT EXISTS schema_migrations (
    version    integer     PRIMARY KEY,
    name       text        NOT NULL,
    checksum   text        NOT NULL,
    applied_at timestamptz NOT NULL DEFAULT now()
)
"""


class MigrationError(StoreError):
    """A migration failed, or an applied migration's file has changed since."""


class Migration(NamedTuple):
    version: int
    name: str
    sql: str

    @property
    def checksum(self) -> str:
        return hashlib.sha256(self.sql.encode()).hexdigest()


def migrations(directory: Path = MIGRATIONS_DIR) -> list[Migration]:
    found = []
    for path in sorted(directory.glob("*.sql")):
        match = _FILE_NAME.match(path.name)
        if not match:
            raise MigrationError(f"migration file {path.name} is not named NNNN_name.sql")
        found.append(Migration(int(match[1]), match[2], path.read_text(encoding="utf-8")))
    versions = [m.version for m in found]
    if len(set(versions)) != len(versions):
        raise MigrationError("two migrations share a number")
    return found


def migrate(database_url: str, through: int | None = None) -> list[str]:
    """Bring the database to the latest schema (or to migration `through`, to test an
    upgrade from it); returns the names applied (empty: none due). The role running it must
    own the schema (and have CREATEROLE unless `fairway_app` exists already)."""
    due = [m for m in migrations() if through is None or m.version <= through]
    applied_now: list[str] = []
    current = "schema_migrations"
    try:
        with psycopg.connect(database_url, autocommit=True) as conn:
            conn.execute("SELECT pg_advisory_lock(hashtextextended(%s, 0))", (_LOCK_KEY,))
            conn.execute(_CREATE_TABLE)
            rows = conn.execute("SELECT version, name, checksum FROM schema_migrations").fetchall()
            applied = {version: (name, checksum) for version, name, checksum in rows}
            for migration in due:
                if migration.version in applied:
                    if applied[migration.version][1] != migration.checksum:
                        raise MigrationError(
                            f"migration {migration.version:04d}_{migration.name} was applied "
                            "and its file has changed since; add a new migration instead"
                        )
                    continue
                current = f"{migration.version:04d}_{migration.name}"
                with conn.transaction():
                    conn.execute(migration.sql.encode())
                    conn.execute(
                        "INSERT INTO schema_migrations (version, name, checksum) "
                        "VALUES (%s, %s, %s)",
                        (migration.version, migration.name, migration.checksum),
                    )
                applied_now.append(current)
            conn.execute("SELECT pg_advisory_unlock(hashtextextended(%s, 0))", (_LOCK_KEY,))
    except psycopg.OperationalError as exc:
        raise StoreUnavailable(f"cannot migrate: {exc}") from None
    except psycopg.Error as exc:
        raise MigrationError(f"migration {current} failed: {exc}") from None
    return applied_now
