"""Redis for the tests: a database per xdist worker (the session's `redis_url`), and in it a
key prefix per test, whose keys the test removes when it ends.

No test flushes a database. Tests on the other workers, and another checkout's run on the same
server, have keys in databases a FLUSHDB could reach; a test that must show what a flush does
removes every key of its own prefix in one step (`forget`): a projection store keeps nothing
outside its prefix, so to the store that is a flush.
"""

from __future__ import annotations

import os
from urllib.parse import urlsplit, urlunsplit

import redis.asyncio as aioredis

DATABASES = 15
"""Databases 1 to 15 are the workers' (a Redis server has 16); 0 is left to anything else."""


def worker_database() -> int:
    """This worker's database: gw0 has 1, gw1 has 2 ... (gw15 has 1 again: the prefixes keep
    workers apart even then); a run without xdist has 1."""
    worker = os.environ.get("PYTEST_XDIST_WORKER", "gw0")
    return 1 + int(worker.removeprefix("gw")) % DATABASES


def on_db(url: str, db: int) -> str:
    return urlunsplit(urlsplit(url)._replace(path=f"/{db}"))


def address(url: str) -> tuple[str, int]:
    """The host and port of a Redis URL (to point a TCP proxy at)."""
    parts = urlsplit(url)
    return parts.hostname or "127.0.0.1", parts.port or 6379


def through(url: str, port: int) -> str:
    """The same Redis URL through a proxy listening on 127.0.0.1:`port`."""
    parts = urlsplit(url)
    credentials = parts.netloc.rpartition("@")[0]
    netloc = f"{credentials}@127.0.0.1:{port}" if credentials else f"127.0.0.1:{port}"
    return urlunsplit(parts._replace(netloc=netloc))


# KEYS in a script: one atomic step, so a projector writing meanwhile finds every key of the
# prefix gone at once, as after a FLUSHDB, never half of them.
_FORGET = """
local removed = 0
for _, pattern in ipairs(ARGV) do
    for _, key in ipairs(redis.call('KEYS', pattern)) do
        removed = removed + redis.call('UNLINK', key)
    end
end
return removed
"""


async def forget(url: str, prefix: str) -> int:
    """Remove every key under `prefix` (aliases, counters and generations) in one atomic
    step; returns how many there were."""
    client = aioredis.Redis.from_url(url)
    try:
        return int(await client.eval(_FORGET, 0, f"{prefix}:*", f"{{{prefix}:*"))  # type: ignore[misc]
    finally:
        await client.aclose()
