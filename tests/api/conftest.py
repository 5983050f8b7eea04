"""The API tests talk to a real Fairway server over HTTP, backed by real PostgreSQL."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import httpx
import msgspec
import psycopg
import pytest

from events.migrate import migrate
from service.ops.settings import Settings
from tests.api.server import serving_process
from tests.support.services import throwaway_database


@pytest.fixture(scope="session")
def database_url(postgres_server_url: str) -> Iterator[str]:
    """The API tests' own database: their server's round keeper and referee act on every
    tournament and clocked game they find, so they must not see the streams the
    integration tests write by hand."""
    with throwaway_database(postgres_server_url, "fairway_api") as url:
        migrate(url)
        yield url


@pytest.fixture(scope="session")
def api_settings(database_url: str, tmp_path_factory: pytest.TempPathFactory) -> Settings:
    return Settings(
        database_url=database_url,
        data_dir=Path(tmp_path_factory.mktemp("fairway-api")),
        log_level="warning",
        log_format="json",
        rate_limit_per_second=100_000.0,
        rate_limit_burst=100_000,
        bot_think=0.0,
    )


@pytest.fixture(scope="session")
def api_base(api_settings: Settings, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """The session's shared server: `fairway serve` in a process of its own, as in
    production. In a thread of this process it would share the GIL with the tests' own
    client code (the test, and a reader thread for each event stream), which on a busy
    machine kept its event loop waiting for a second and more: long enough for the store's
    `db_timeout` to answer 503, a delay of the harness's making, not the service's. Its log
    is in the session's `fairway-api-serve*` directory."""
    with serving_process(api_settings, tmp_path_factory.mktemp("fairway-api-serve")) as base:
        yield base


@pytest.fixture(scope="module")
def keeperless_database(postgres_server_url: str) -> Iterator[str]:
    """A module's own database for tests that append tournaments' histories by hand, in the
    tournament service's place: the server on it (`keeperless_settings`) runs no round
    keeper, which would otherwise close a round before the test's own `round.closed`, and
    no bot runner, which would otherwise play the bot seats of a game the test writes."""
    with throwaway_database(postgres_server_url, "fairway_by_hand") as url:
        migrate(url)
        yield url


@pytest.fixture(scope="module")
def keeperless_settings(api_settings: Settings, keeperless_database: str) -> Settings:
    return msgspec.structs.replace(
        api_settings, database_url=keeperless_database, round_keeper=False, bots=False
    )


@pytest.fixture
def http(api_base: str) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=api_base, timeout=20) as client:
        yield client


@pytest.fixture
def stored(database_url: str) -> Callable[[str], list[tuple[Any, ...]]]:
    """Read a game's stored events straight from PostgreSQL, bypassing the service."""

    def read(game_id: str) -> list[tuple[Any, ...]]:
        with psycopg.connect(database_url, autocommit=True) as conn:
            return conn.execute(
                "SELECT stream_version, event_id, type, data::text, hash FROM events "
                "WHERE stream_id = %s ORDER BY stream_version",
                (f"game:{game_id}",),
            ).fetchall()

    return read
