"""The receipt keys' registry: every public key that signs receipts for the store's games,
kept for good. The contract part runs against PostgreSQL and the embedded store alike; then
what only each shows (the app role's rights, the file's triggers, the migration run again)."""

from __future__ import annotations

import hashlib
import secrets
import sqlite3
from pathlib import Path
from typing import Any

import psycopg
import pytest
from psycopg import conninfo

from events.migrate import MIGRATIONS_DIR
from events.store import EmbeddedStore, EventStore, PostgresStore, RegisteredKey
from events.store.embedded import FILE_NAME
from tests.integration.events.conftest import MakeStore

pytestmark = pytest.mark.integration


def a_key() -> tuple[str, bytes]:
    """A fresh 32-byte public key (any 32 bytes will do: the store verifies no signature)
    and its id as receipts name it."""
    public_key = secrets.token_bytes(32)
    return hashlib.sha256(public_key).hexdigest()[:16], public_key


def ours(listed: list[RegisteredKey], *keys: tuple[str, bytes]) -> list[RegisteredKey]:
    """The rows of these keys (the PostgreSQL session database holds other tests' keys)."""
    wanted = {public_key for _, public_key in keys}
    return [key for key in listed if key.public_key in wanted]


# ---- the contract ---------------------------------------------------------------------------


async def test_a_key_registered_again_is_listed_once_as_first_seen(store: EventStore) -> None:
    first, second = a_key(), a_key()
    await store.register_receipt_key(*first)
    (before,) = ours(await store.receipt_keys(), first)
    await store.register_receipt_key(*second)
    await store.register_receipt_key(*first)

    listed = await store.receipt_keys()
    assert [key.first_seen for key in listed] == sorted(key.first_seen for key in listed)
    mine = ours(listed, first, second)
    assert sorted((key.key_id, key.public_key) for key in mine) == sorted([first, second])
    assert before in mine, "registering again changed nothing, first_seen included"
    assert before.first_seen.tzinfo is not None


async def test_another_store_on_the_same_database_sees_the_keys_also_after_reopening(
    make_store: MakeStore,
) -> None:
    key = a_key()
    one = await make_store()
    await one.register_receipt_key(*key)
    two = await make_store()
    assert [(k.key_id, k.public_key) for k in ours(await two.receipt_keys(), key)] == [key]
    await one.close()
    again = await make_store()
    assert len(ours(await again.receipt_keys(), key)) == 1


UPPER = a_key()


@pytest.mark.parametrize(
    ("key_id", "public_key", "says"),
    [
        pytest.param(a_key()[0], b"\x01" * 31, "32-byte", id="31 bytes"),
        pytest.param(a_key()[0], b"\x01" * 33, "32-byte", id="33 bytes"),
        pytest.param("0123456789abcdef", a_key()[1], "not the id", id="an id not its own"),
        pytest.param(UPPER[0].upper(), UPPER[1], "not the id", id="upper-case id"),
        pytest.param(a_key()[0], "not bytes", "32-byte", id="text for a key"),
    ],
)
async def test_a_malformed_key_or_an_id_not_its_own_is_refused_and_nothing_kept(
    store: EventStore, key_id: str, public_key: Any, says: str
) -> None:
    before = await store.receipt_keys()
    with pytest.raises(ValueError, match=says):
        await store.register_receipt_key(key_id, public_key)
    assert await store.receipt_keys() == before


# ---- PostgreSQL: the app role may add and read, nothing else -------------------------------


async def test_the_app_role_registers_and_reads_keys_but_never_changes_one(
    database_url: str,
) -> None:
    as_app = conninfo.make_conninfo(database_url, options="-c role=fairway_app")
    key = a_key()
    async with await PostgresStore.open(as_app) as store:
        await store.register_receipt_key(*key)
        await store.register_receipt_key(*key)  # ON CONFLICT DO NOTHING needs no UPDATE
        assert len(ours(await store.receipt_keys(), key)) == 1

    async with await psycopg.AsyncConnection.connect(database_url, autocommit=True) as conn:
        await conn.execute("SET ROLE fairway_app")
        for statement in (
            "UPDATE receipt_keys SET first_seen = now()",
            "DELETE FROM receipt_keys",
            "TRUNCATE receipt_keys",
            "ALTER TABLE receipt_keys DISABLE TRIGGER receipt_keys_kept",
            "INSERT INTO receipt_keys (key_id, public_key, first_seen)"
            " VALUES ('0123456789abcdef', sha256('x'), now() - interval '1 year')",
        ):
            with pytest.raises(psycopg.errors.InsufficientPrivilege):
                await conn.execute(statement.encode())
        with pytest.raises(psycopg.errors.CheckViolation):  # an id that names another key
            await conn.execute(
                "INSERT INTO receipt_keys (key_id, public_key) VALUES (%s, %s)",
                (a_key()[0], a_key()[1]),
            )


async def test_the_owner_cannot_change_or_remove_a_key_either(database_url: str) -> None:
    key = a_key()
    async with await PostgresStore.open(database_url) as store:
        await store.register_receipt_key(*key)
    async with await psycopg.AsyncConnection.connect(database_url, autocommit=True) as conn:
        for statement in (
            f"UPDATE receipt_keys SET first_seen = now() WHERE key_id = '{key[0]}'",
            f"DELETE FROM receipt_keys WHERE key_id = '{key[0]}'",
            "TRUNCATE receipt_keys",
        ):
            with pytest.raises(psycopg.Error, match="kept for good") as refused:
                await conn.execute(statement.encode())
            assert refused.value.sqlstate == "FW003"
    async with await PostgresStore.open(database_url) as store:
        assert len(ours(await store.receipt_keys(), key)) == 1


def test_the_receipt_keys_migration_runs_again_on_a_database_that_has_it(
    database_url: str,
) -> None:
    (path,) = MIGRATIONS_DIR.glob("*_receipt_keys.sql")
    with psycopg.connect(database_url, autocommit=True) as conn:
        before = conn.execute("SELECT count(*) FROM receipt_keys").fetchone()
        with conn.transaction():
            conn.execute(path.read_bytes())
        assert conn.execute("SELECT count(*) FROM receipt_keys").fetchone() == before
        rights = conn.execute(
            "SELECT has_table_privilege('fairway_app', 'receipt_keys', 'SELECT'),"
            " has_table_privilege('fairway_app', 'receipt_keys', 'UPDATE'),"
            " has_table_privilege('fairway_app', 'receipt_keys', 'DELETE'),"
            " has_column_privilege('fairway_app', 'receipt_keys', 'key_id', 'INSERT'),"
            " has_column_privilege('fairway_app', 'receipt_keys', 'first_seen', 'INSERT')"
        ).fetchone()
    assert rights == (True, False, False, True, False)


# ---- the embedded file ----------------------------------------------------------------------


async def test_the_files_keys_are_kept_for_good(tmp_path: Path) -> None:
    key = a_key()
    async with await EmbeddedStore.open(tmp_path) as store:
        await store.register_receipt_key(*key)
    db = sqlite3.connect(tmp_path / FILE_NAME, isolation_level=None)
    try:
        with pytest.raises(sqlite3.IntegrityError, match="kept for good"):
            db.execute("UPDATE receipt_keys SET first_seen = 0")
        with pytest.raises(sqlite3.IntegrityError, match="kept for good"):
            db.execute("DELETE FROM receipt_keys")
    finally:
        db.close()
