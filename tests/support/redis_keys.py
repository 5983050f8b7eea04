"""Redis for the projection tests: their own database (14, flushed by them alone) and a key
prefix per test, removed afterwards."""

from __future__ import annotations

from urllib.parse import urlsplit, urlunsplit

import redis.asyncio as aioredis

REDIS_DB = 14
"""The Redis database the projection tests own: the flush tests run FLUSHDB on it only."""


def on_db(url: str, db: int = REDIS_DB) -> str:
    return urlunsplit(urlsplit(url)._replace(path=f"/{db}"))


async def forget(url: str, prefix: str) -> None:
    """Remove every key under `prefix` (aliases, counters and generations)."""
    client = aioredis.Redis.from_url(url)
    try:
        for pattern in (f"{prefix}:*", f"{{{prefix}:*"):
            keys = [k async for k in client.scan_iter(match=pattern, count=1000)]
            if keys:
                await client.unlink(*keys)
    finally:
        await client.aclose()
