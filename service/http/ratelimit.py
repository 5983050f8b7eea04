"""The rate limit: a token bucket per client (`rate` tokens a second, at most `burst` saved
up), the client named by the rules of service/http/middleware.py `ClientAddresses`.

With REDIS_URL the buckets live in Redis, one hash per client, so that every worker of every
instance draws on the same bucket: a burst of N lets N requests through, not N per process.
Each take is one atomic Lua script (`SharedBuckets`), run through redis-py, the client the
service already has. Not the `limits` library: its strategies are fixed and moving windows,
which would change what FAIRWAY_RATE_LIMIT_PER_SECOND and _BURST mean (a refill rate and a
saved-up burst) and how Retry-After is computed, and its asyncio Redis storage brings a
second Redis client (coredis) with its own pools and timeouts beside ours. The script reads
the time from Redis itself (TIME), so instances whose clocks disagree still agree on a bucket.

Without REDIS_URL each process keeps its own buckets (`TokenBuckets`); the service says so
in one log line at start (`rate_limit_per_process`).

When Redis does not answer, the limit fails open, never closed: the request is limited by
this process's own bucket instead (a client gets up to a burst per worker rather than one in
all), counted in `fairway_rate_limit_fallbacks_total`, with a warning at most once a
minute; for a second after a failure the process does not ask Redis again, so a silent
Redis costs one request in a second its timeout, not every request. Never a 500.
"""

from __future__ import annotations

import time
from collections import OrderedDict
from typing import Any, Protocol

from projections.redis_client import REDIS_ERRORS, redis_client
from service.ops.logging import log
from service.ops.metrics import Metrics

_UNANSWERED: tuple[type[BaseException], ...] = (TimeoutError, ValueError, *REDIS_ERRORS)
"""How asking Redis may fail: the process's own buckets decide until it answers again."""

REDIS_TIMEOUT = 1.0
"""Seconds one take waits for Redis before the process's own bucket decides: the projection
store's bound (projections/redis_store.py), far above a Redis that answers at all."""
PAUSE = 1.0
"""Seconds after a failed take during which Redis is not asked again."""
WARN_EVERY = 60.0

# KEYS[1]: the client's bucket; ARGV: rate, burst. Returns the seconds to wait, as text
# (a Lua number would come back truncated to an integer), "0" when the request may go on.
_TAKE = """
local rate = tonumber(ARGV[1])
local burst = tonumber(ARGV[2])
local clock = redis.call('TIME')
local now = tonumber(clock[1]) + tonumber(clock[2]) / 1000000
local held = redis.call('HMGET', KEYS[1], 'tokens', 'at')
local tokens = tonumber(held[1]) or burst
local at = tonumber(held[2]) or now
tokens = math.min(burst, tokens + math.max(0, now - at) * rate)
local wait = 0
if tokens >= 1 then
  tokens = tokens - 1
else
  wait = (1 - tokens) / rate
end
redis.call('HSET', KEYS[1], 'tokens', tostring(tokens), 'at', tostring(now))
redis.call('PEXPIRE', KEYS[1], math.ceil(burst / rate * 1000) + 1000)
return tostring(wait)
"""


class RateLimit(Protocol):
    async def take(self, client: str) -> float:
        """0 if the request may go on, else the seconds until a token is available."""
        ...

    async def close(self) -> None: ...


class TokenBuckets:
    """This process's buckets. At most `capacity` are kept. When a new client would pass
    that, the bucket used least recently goes: usually it has refilled and holds nothing
    worth keeping, and a busy client's bucket, used on each of its requests, stays.
    """

    def __init__(
        self, rate: float, burst: int, capacity: int = 100_000, clock: Any = time.monotonic
    ) -> None:
        self.rate, self.burst, self.capacity, self.clock = rate, burst, capacity, clock
        self.buckets: OrderedDict[str, tuple[float, float]] = OrderedDict()

    def take_now(self, client: str) -> float:
        now = self.clock()
        tokens, last = self.buckets.pop(client, (float(self.burst), now))
        tokens = min(float(self.burst), tokens + (now - last) * self.rate)
        wait = 0.0 if tokens >= 1 else (1 - tokens) / self.rate
        self.buckets[client] = (tokens - 1 if tokens >= 1 else tokens, now)
        if len(self.buckets) > self.capacity:
            self.buckets.popitem(last=False)
        return wait

    async def take(self, client: str) -> float:
        return self.take_now(client)

    async def close(self) -> None:
        pass


class SharedBuckets:
    """The buckets in Redis, under `{prefix}:rate:{client}`; `fallback` decides while Redis
    does not answer."""

    def __init__(self, client: Any, prefix: str, fallback: TokenBuckets, metrics: Metrics) -> None:
        self.client, self.prefix, self.fallback, self.metrics = client, prefix, fallback, metrics
        self.rate, self.burst = fallback.rate, fallback.burst
        self._script = client.register_script(_TAKE)
        self._asked_again_at = 0.0
        self._warned_at = -WARN_EVERY

    @classmethod
    def from_url(
        cls, url: str, prefix: str, fallback: TokenBuckets, metrics: Metrics
    ) -> SharedBuckets:
        # One Redis or a cluster (`redis+cluster://`, projections/redis_client.py): the bucket
        # is one key and the script touches only it, so any slot will do. A pooled
        # connection that died with a restarted Redis is replaced at once, without failing
        # the take; a timeout is not retried.
        client = redis_client(url, REDIS_TIMEOUT)
        return cls(client, prefix, fallback, metrics)

    async def take(self, client: str) -> float:
        now = time.monotonic()
        if now >= self._asked_again_at:
            try:
                answer = await self._script(
                    keys=[f"{self.prefix}:rate:{client}"], args=[repr(self.rate), self.burst]
                )
                return float(answer)
            except _UNANSWERED as error:
                self._asked_again_at = now + PAUSE
                if now - self._warned_at >= WARN_EVERY:
                    self._warned_at = now
                    log.warning(
                        "rate_limit_redis_failed",
                        error=repr(error),
                        fallback="this process's own buckets until Redis answers",
                    )
        self.metrics.count("rate_limit_fallbacks")
        return self.fallback.take_now(client)

    async def close(self) -> None:
        await self.client.aclose()


def rate_limit(
    redis_url: str | None, prefix: str, rate: float, burst: int, metrics: Metrics
) -> RateLimit:
    """The shared buckets with REDIS_URL, else this process's own (said once, at start)."""
    buckets = TokenBuckets(rate, burst)
    if redis_url:
        return SharedBuckets.from_url(redis_url, prefix, buckets, metrics)
    log.info(
        "rate_limit_per_process",
        advice="without REDIS_URL each worker and each instance keeps its own buckets: a "
        "client may send a burst to each",
    )
    return buckets
