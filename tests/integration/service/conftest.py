"""The service's integration tests run on both event stores: PostgreSQL (the session's
database) and the embedded one (a fresh folder per test)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from events.store import EmbeddedStore, EventStore, PostgresStore


@pytest.fixture(params=["postgres", "embedded"])
async def store(
    request: pytest.FixtureRequest, tmp_path: Path, database_url: str
) -> AsyncIterator[EventStore]:
    if request.param == "postgres":
        opened: EventStore = await PostgresStore.open(database_url, poll_interval=0.2)
    else:
        opened = await EmbeddedStore.open(tmp_path, poll_interval=0.2)
    try:
        yield opened
    finally:
        await opened.close()
