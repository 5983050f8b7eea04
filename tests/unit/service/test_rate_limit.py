"""The rate limit: a bucket per client address, a bounded table that forgets the idle first."""

from __future__ import annotations

from typing import Any

import pytest

from service.http.middleware import ClientAddresses
from service.http.ratelimit import TokenBuckets
from service.ops.settings import Settings

pytestmark = pytest.mark.unit


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def test_a_client_gets_its_burst_then_waits_for_the_rate() -> None:
    clock = Clock()
    buckets = TokenBuckets(rate=2.0, burst=3, clock=clock)
    assert [buckets.take_now("a") for _ in range(3)] == [0.0, 0.0, 0.0]
    assert buckets.take_now("a") == pytest.approx(0.5)
    assert buckets.take_now("b") == 0.0, "another client has its own bucket"
    clock.now = 0.5
    assert buckets.take_now("a") == 0.0


def test_the_table_stays_bounded_and_a_busy_client_keeps_its_limit() -> None:
    buckets = TokenBuckets(rate=1.0, burst=5, capacity=100, clock=Clock())
    for _ in range(5):
        buckets.take_now("heavy")
    for other in range(100_000):
        buckets.take_now(f"other-{other}")
        if other % 50 == 0:
            assert buckets.take_now("heavy") > 0, f"forgotten after {other} others"
        assert len(buckets.buckets) <= 100


def test_only_the_least_recently_used_bucket_is_forgotten() -> None:
    buckets = TokenBuckets(rate=1.0, burst=1, capacity=3, clock=Clock())
    for client in ("a", "b", "c"):
        buckets.take_now(client)
    buckets.take_now("a")  # refused, and now the most recently used
    buckets.take_now("d")  # "b" goes
    assert list(buckets.buckets) == ["c", "a", "d"]
    assert buckets.take_now("a") > 0
    assert buckets.take_now("c") > 0


def scope(peer: str | None, *forwarded: str, authorization: str | None = None) -> dict[str, Any]:
    headers = [(b"x-forwarded-for", value.encode()) for value in forwarded]
    if authorization:
        headers.append((b"authorization", authorization.encode()))
    return {"client": (peer, 50_000) if peer else None, "headers": headers}


def test_without_trusted_proxies_the_client_is_the_peer_whatever_the_headers_say() -> None:
    client_of = ClientAddresses()
    assert client_of(scope("203.0.113.9", "198.51.100.1")) == "203.0.113.9"
    assert client_of(scope("203.0.113.9", authorization="Bearer anything")) == "203.0.113.9"
    assert client_of(scope("127.0.0.1", "198.51.100.1")) == "127.0.0.1"
    assert client_of(scope(None)) == "unknown"


def test_a_trusted_proxy_names_the_client_right_most_untrusted_first() -> None:
    client_of = ClientAddresses(["10.0.0.0/8", "127.0.0.1"])
    assert client_of(scope("127.0.0.1", "198.51.100.1")) == "198.51.100.1"
    # The client wrote the left-most value; the proxies appended the rest.
    assert client_of(scope("10.1.1.1", "6.6.6.6, 198.51.100.1, 10.2.2.2")) == "198.51.100.1"
    assert client_of(scope("10.1.1.1", "6.6.6.6", "198.51.100.1:4444")) == "198.51.100.1"
    # A value no trusted proxy could have written stops the walk at the hop that passed it.
    assert client_of(scope("10.1.1.1", "198.51.100.1, garbage")) == "10.1.1.1"
    assert client_of(scope("10.1.1.1")) == "10.1.1.1"
    # Headers from an untrusted peer are never believed.
    assert client_of(scope("203.0.113.9", "198.51.100.1")) == "203.0.113.9"


def test_an_ipv6_client_is_its_slash_64() -> None:
    client_of = ClientAddresses()
    assert client_of(scope("2001:db8:1:2::1")) == client_of(scope("2001:db8:1:2:ffff::9"))
    assert client_of(scope("2001:db8:1:2::1")) != client_of(scope("2001:db8:1:3::1"))
    assert client_of(scope("::ffff:198.51.100.1")) == "198.51.100.1"


def test_trusted_proxies_are_read_from_the_environment() -> None:
    settings = Settings.from_env({"FAIRWAY_TRUSTED_PROXIES": "10.0.0.0/8, 127.0.0.1,"})
    assert settings.trusted_proxies == ("10.0.0.0/8", "127.0.0.1")
    assert Settings.from_env({}).trusted_proxies == ()
