"""The rate limit's buckets in Redis (service/http/ratelimit.py): two processes' limiters draw
on one bucket per client, and a Redis that does not answer leaves each to its own bucket."""

from __future__ import annotations

import secrets
from collections.abc import AsyncIterator

import pytest
import redis.asyncio as aioredis

from service.http.ratelimit import SharedBuckets, TokenBuckets
from service.ops.metrics import Metrics
from tests.support.redis_keys import forget

pytestmark = pytest.mark.integration


@pytest.fixture
async def prefix(redis_url: str) -> AsyncIterator[str]:
    chosen = f"rl{secrets.token_hex(4)}"
    yield chosen
    await forget(redis_url, chosen)


async def test_two_limiters_share_each_clients_bucket(redis_url: str, prefix: str) -> None:
    metrics = Metrics()
    one, other = (
        SharedBuckets.from_url(redis_url, prefix, TokenBuckets(0.5, 3), metrics) for _ in "ab"
    )
    try:
        takes = [await (one if n % 2 else other).take("10.0.0.1") for n in range(4)]
        assert takes[:3] == [0.0, 0.0, 0.0], "a burst of 3, whichever limiter takes it"
        assert 0.0 < takes[3] <= 2.0, "then a wait of at most one token's refill"
        assert await one.take("2001:db8::/64") == 0.0, "another client has its own bucket"
        client = aioredis.Redis.from_url(redis_url)
        try:
            kept = await client.pttl(f"{prefix}:rate:10.0.0.1")
        finally:
            await client.aclose()
        assert 0 < kept <= 7000, "a bucket is kept until it would be full again, then some"
        assert metrics.counters["rate_limit_fallbacks"] == 0
        assert one.fallback.buckets == {}, "the process's own buckets were never used"
    finally:
        await one.close()
        await other.close()


async def test_a_redis_that_refuses_leaves_the_limit_to_the_process(prefix: str) -> None:
    metrics = Metrics()
    limiter = SharedBuckets.from_url("redis://127.0.0.1:1/0", prefix, TokenBuckets(0.5, 2), metrics)
    try:
        takes = [await limiter.take("10.0.0.1") for _ in range(3)]
    finally:
        await limiter.close()
    assert takes[:2] == [0.0, 0.0]
    assert takes[2] > 0, "the process's own bucket still limits"
    assert metrics.counters["rate_limit_fallbacks"] == 3
