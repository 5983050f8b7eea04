"""Finding PostgreSQL and Redis for the tests, and throw-away databases on the server.

Order, for each: the environment (`FAIRWAY_TEST_DATABASE_URL`, then `DATABASE_URL`;
`FAIRWAY_TEST_REDIS_URL`, then `REDIS_URL`), then the usual local port, then a container
(testcontainers, Docker). When none answers the tests fail, loudly: a storage test that
skips proves nothing.
"""

from __future__ import annotations

import contextlib
import os
import secrets
from collections.abc import Callable, Iterator
from contextlib import ExitStack

import psycopg
import redis
from psycopg import conninfo, sql

LOCAL_POSTGRES = "postgresql://postgres@127.0.0.1:5432/test"
LOCAL_REDIS = "redis://127.0.0.1:6379/0"


class NoService(RuntimeError):
    """Nothing answered; the message says what was tried."""


def postgres_answers(url: str) -> bool:
    try:
        with psycopg.connect(url, connect_timeout=2, autocommit=True) as conn:
            conn.execute("SELECT 1")
        return True
    except psycopg.Error:
        return False


def redis_answers(url: str) -> bool:
    client = redis.Redis.from_url(url, socket_connect_timeout=1, socket_timeout=2)
    try:
        return bool(client.ping())
    except (redis.RedisError, OSError):
        return False
    finally:
        client.close()


def _from_env(*names: str) -> str | None:
    for name in names:
        if value := os.environ.get(name):
            return value
    return None


def find_postgres(stack: ExitStack) -> str:
    """A URL of a PostgreSQL server where the tests may create databases."""
    if url := _from_env("FAIRWAY_TEST_DATABASE_URL", "DATABASE_URL"):
        if not postgres_answers(url):
            raise NoService(f"PostgreSQL at the configured URL does not answer: {url}")
        return url
    if postgres_answers(LOCAL_POSTGRES):
        return LOCAL_POSTGRES
    try:
        from testcontainers.postgres import PostgresContainer

        container = stack.enter_context(PostgresContainer("postgres:15-alpine", driver=None))
        return str(container.get_connection_url())
    except Exception as exc:
        raise NoService(
            "no PostgreSQL for the tests: set FAIRWAY_TEST_DATABASE_URL, run one on "
            f"127.0.0.1:5432 (user postgres), or make Docker available ({exc})"
        ) from exc


def find_redis(stack: ExitStack) -> str:
    if url := _from_env("FAIRWAY_TEST_REDIS_URL", "REDIS_URL"):
        if not redis_answers(url):
            raise NoService(f"Redis at the configured URL does not answer: {url}")
        return url
    if redis_answers(LOCAL_REDIS):
        return LOCAL_REDIS
    try:
        from testcontainers.redis import RedisContainer

        container = stack.enter_context(RedisContainer("redis:7-alpine"))
        host = container.get_container_host_ip()
        return f"redis://{host}:{container.get_exposed_port(6379)}/0"
    except Exception as exc:
        raise NoService(
            "no Redis for the tests: set FAIRWAY_TEST_REDIS_URL, run one on 127.0.0.1:6379, "
            f"or make Docker available ({exc})"
        ) from exc


@contextlib.contextmanager
def throwaway_database(server_url: str, prefix: str = "fairway_test") -> Iterator[str]:
    """A new empty database on the server of `server_url` (its URL), dropped afterwards."""
    with database_made_later(server_url, prefix) as (url, make):
        make()
        yield url


@contextlib.contextmanager
def database_made_later(
    server_url: str, prefix: str = "fairway_test"
) -> Iterator[tuple[str, Callable[[], None]]]:
    """The URL of a database that does not exist yet on the server of `server_url`, and the
    call that makes it (empty); dropped afterwards if it was made."""
    name = f"{prefix}_{secrets.token_hex(6)}"

    def make() -> None:
        with psycopg.connect(server_url, autocommit=True) as conn:
            conn.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name)))

    try:
        yield conninfo.make_conninfo(server_url, dbname=name), make
    finally:
        with psycopg.connect(server_url, autocommit=True) as conn:
            conn.execute(
                sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(sql.Identifier(name))
            )
