"""A database of their own for the tests that serve on PostgreSQL with the real command."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from events.migrate import migrate
from tests.support.services import throwaway_database


@pytest.fixture(scope="module")
def served_database(postgres_server_url: str) -> Iterator[str]:
    """The served instance's own database: its referee and round keeper see no one else's."""
    with throwaway_database(postgres_server_url, "fairway_served") as url:
        migrate(url)
        yield url
