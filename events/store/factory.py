"""Choosing the store: PostgreSQL when a database URL is configured, else the embedded file."""

from __future__ import annotations

import os
from pathlib import Path

from events.codec import Codec
from events.store.contract import EventStore
from events.store.embedded import EmbeddedStore
from events.store.postgres import PostgresStore


async def open_store(
    database_url: str | None,
    data_dir: str | os.PathLike[str],
    *,
    codec: Codec | None = None,
    pool_min_size: int = 2,
    pool_max_size: int = 10,
    poll_interval: float = 0.5,
    db_timeout: float = 2.0,
    group_commit: bool = True,
) -> EventStore:
    """An open store; `await store.close()` (or `async with`) when done. `data_dir` holds
    the embedded store's file and is not used with PostgreSQL. `db_timeout`: the longest
    one PostgreSQL operation may take, the wait for a pooled connection included, before it
    raises `StoreUnavailable` (a database that goes silent holds no request longer).
    `group_commit`: PostgreSQL appends that arrive while another commits go together in the
    next transaction (events/store/postgres_group.py)."""
    if database_url:
        return await PostgresStore.open(
            database_url,
            codec=codec,
            min_size=pool_min_size,
            max_size=pool_max_size,
            poll_interval=poll_interval,
            timeout=db_timeout,
            group_commit=group_commit,
        )
    return await EmbeddedStore.open(Path(data_dir), codec=codec, poll_interval=poll_interval)
