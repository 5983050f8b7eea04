"""A finished game stored as the service stores it, under a chosen rules version: for the
tests that a verifier judges the versions it implements and refuses the others by name."""

from __future__ import annotations

import uuid
from pathlib import Path
from typing import Any

import msgspec

from events.schema.lobby import GameCreated
from events.store import NewEvent, open_store
from tests.support.histories import played


def versioned(version: str, seed: int = 7) -> list[tuple[Any, dict[str, Any]]]:
    """A two-seat golf game's (event, metadata) pairs, its `game.created` naming `version`."""
    stored, _ = played("golf", 2, seed=seed)
    created, metadata = stored[0]
    assert isinstance(created, GameCreated)
    return [(msgspec.structs.replace(created, rules_version=version), metadata), *stored[1:]]


async def store_versioned(database_url: str | None, data_dir: Path, version: str) -> str:
    """Append such a game to the store (PostgreSQL, or the embedded one at `data_dir`);
    its id."""
    game_id = uuid.uuid4().hex[:16]
    store = await open_store(database_url, data_dir)
    try:
        new = [NewEvent(uuid.uuid4(), event, meta) for event, meta in versioned(version)]
        await store.append(f"game:{game_id}", 0, new)
    finally:
        await store.close()
    return game_id
