"""A Redis client from a URL: one server, or a Redis Cluster when the URL's scheme says so.

    redis://host:port/db            one Redis server (or a proxy in front of one)
    redis+cluster://host:port       a Redis Cluster; host:port is any node of it, the client
                                    learns the others and their slots from it
    rediss+cluster://host:port      the same over TLS

The scheme, not a second setting, so that REDIS_URL alone says everything and the API,
the projector and the rate limit cannot disagree on what they talk to. A cluster has only
database 0; a cluster URL naming another is refused at start rather than quietly ignored.

What a cluster asks of the callers, and why they already comply: every multi-key command,
transaction and Lua script must touch keys of one hash slot. The projection store keeps each
generation under one hash tag (projections/redis_store.py), so a batch's script, a snapshot's
MULTI and a read's pipeline stay in one slot; its other keys (alias, generation counter,
rebuild counts) and the rate limit's bucket are each used alone. SCAN runs on every primary.

A MOVED reply only moves its slot (`reinitialize_steps=0`). By default redis-py closes the
whole client at every fifth MOVED, connections in use by other tasks included, and those
tasks fail with an `AttributeError` from deep inside redis-py. A fresh client meets MOVED
without any change in the cluster: it sends its first commands to one node before it knows
the slots, so a projector whose projections start together used to close the client under
itself (CI, December 2026). A failover still refreshes the whole map: it arrives as a
connection error, which re-reads the slots.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import urlsplit, urlunsplit

import redis.asyncio as aioredis
from redis.asyncio.cluster import RedisCluster
from redis.asyncio.retry import Retry
from redis.backoff import NoBackoff
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import RedisClusterException, RedisError

CLUSTER_SCHEMES = {"redis+cluster": "redis", "rediss+cluster": "rediss"}

REDIS_ERRORS: tuple[type[BaseException], ...] = (RedisError, RedisClusterException, OSError)
"""What a Redis call may raise when Redis is unreachable, down or (a cluster) without a
node for a slot: `RedisClusterException` is not a `RedisError`."""


def is_cluster(url: str) -> bool:
    return urlsplit(url).scheme in CLUSTER_SCHEMES


def redis_client(url: str, timeout: float) -> Any:
    """A client on `url` whose calls give up after `timeout` seconds. A connection error is
    retried once, at once (a pooled connection that died with a restarted Redis is replaced
    without failing the call); a timeout is not (a silent Redis costs `timeout`, not a
    multiple). Typed loosely: `Redis` and `RedisCluster` share their commands, not a type."""
    options: dict[str, Any] = {
        "socket_timeout": timeout,
        "socket_connect_timeout": timeout,
        "retry": Retry(NoBackoff(), 1, supported_errors=(RedisConnectionError,)),
    }
    parts = urlsplit(url)
    plain = CLUSTER_SCHEMES.get(parts.scheme)
    if plain is None:
        return aioredis.Redis.from_url(url, **options)
    if parts.path.strip("/") not in ("", "0"):
        raise ValueError(f"a Redis Cluster has only database 0, not {parts.path!r}: {url}")
    return RedisCluster.from_url(
        urlunsplit(parts._replace(scheme=plain, path="")), reinitialize_steps=0, **options
    )
