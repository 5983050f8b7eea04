"""`fairway serve --workers 2` on PostgreSQL, the real command: /metrics adds up both workers,
whichever answers the scrape, and names the instance; the rate limit, kept in Redis, holds
across both, and loosens to each process's own bucket while Redis does not answer."""

from __future__ import annotations

import asyncio
import secrets
import time
from collections import Counter
from pathlib import Path

import httpx
import pytest
from prometheus_client.parser import text_string_to_metric_families

from tests.e2e.test_cli import serving
from tests.support.redis_keys import address, forget, through
from tests.support.tcp_proxy import TcpProxy

pytestmark = pytest.mark.e2e

REQUESTS = 'fairway_http_requests_total{method="GET",route="/variants",status="200"}'
WAIT = 60.0


def scrape(base: str) -> dict[str, float]:
    """One scrape on a new connection (another worker may answer each), as
    `name{labels}` -> value."""
    text = httpx.get(base + "/metrics", timeout=10, headers={"Connection": "close"}).text
    found = {}
    for family in text_string_to_metric_families(text):
        for s in family.samples:
            labels = ",".join(f'{k}="{v}"' for k, v in sorted(s.labels.items()))
            found[f"{s.name}{{{labels}}}" if labels else s.name] = s.value
    return found


def workers(scraped: dict[str, float]) -> set[str]:
    """The pids of the workers whose process metrics a scrape shows."""
    return {
        name.split('pid="')[1].split('"')[0]
        for name in scraped
        if name.startswith("process_resident_memory_bytes{")
    }


def both_started(base: str) -> None:
    """Wait until both workers serve: the second may start a while after the first."""
    deadline = time.monotonic() + WAIT
    while len(workers(scrape(base))) < 2:
        assert time.monotonic() < deadline, "the second worker never started"


def test_two_workers_count_as_one_instance_whichever_answers(
    tmp_path: Path, served_database: str
) -> None:
    env = {"DATABASE_URL": served_database, "FAIRWAY_INSTANCE": "table-7"}
    with serving(tmp_path, env=env, args=("--workers", "2")) as served:
        first = scrape(served.base)
        # Present from zero, before anything was counted; the instance named.
        assert first["fairway_commands_total"] == 0
        assert first["fairway_idempotent_replays_total"] == 0
        assert first['fairway_turns_played_for_total{reason="timeout"}'] == 0
        assert first['fairway_instance_info{instance="table-7"}'] == 1
        assert "python_info" in "".join(first)
        text = httpx.get(served.base + "/metrics").text
        assert "# HELP fairway_http_requests_total " in text
        assert "# TYPE fairway_http_request_seconds histogram" in text

        both_started(served.base)
        sent = 40
        for _ in range(sent):  # a new connection each: the kernel hands them to either worker
            answer = httpx.get(served.base + "/variants", headers={"Connection": "close"})
            assert answer.status_code == 200

        seen: list[float] = []
        deadline = time.monotonic() + WAIT
        while not seen or seen[-1] < sent:  # the last request is counted just after its answer
            assert time.monotonic() < deadline, f"the count never reached {sent}: {seen}"
            seen.append(scrape(served.base).get(REQUESTS, 0))
        later = [scrape(served.base) for _ in range(12)]
        seen += [s[REQUESTS] for s in later]
        assert seen == sorted(seen), f"a counter went down between scrapes: {seen}"
        assert seen[-1] == sent, "every request counted once, across both workers"
        assert len(workers(later[-1])) == 2, "one set of process metrics per worker"
        histogram = 'fairway_http_request_seconds_count{route="/variants"}'
        assert later[-1][histogram] == sent
    said = [line for line in served.stderr_lines() if "rate_limit_per_process" in line]
    assert len(said) == 2, "without Redis, each worker says at start that its limit is its own"
    (shared,) = [line for line in served.out.read_text().splitlines() if "metrics in" in line]
    directory = Path(shared.split(" metrics in ")[1].split(" (")[0])
    assert directory.name.startswith("fairway-metrics-")
    assert not directory.exists(), "the workers' metrics directory is removed when they stop"


def burst(base: str, n: int) -> Counter[int]:
    """`n` requests, each on a new connection (either worker may take it): their statuses."""
    statuses = Counter[int]()
    for _ in range(n):
        statuses[httpx.get(base + "/variants", headers={"Connection": "close"}).status_code] += 1
    return statuses


def test_a_burst_is_shared_by_both_workers_and_a_silent_redis_loosens_it_never_fails_it(
    tmp_path: Path, served_database: str, redis_url: str
) -> None:
    prefix = f"rl{secrets.token_hex(4)}"
    limit = 5
    with TcpProxy.to_address(*address(redis_url)) as proxy:
        env = {
            "DATABASE_URL": served_database,
            "REDIS_URL": through(redis_url, proxy.port),
            "FAIRWAY_REDIS_PREFIX": prefix,
            "FAIRWAY_RATE_LIMIT_BURST": str(limit),
            "FAIRWAY_RATE_LIMIT_PER_SECOND": "0.001",  # no refill within the test
        }
        try:
            with serving(tmp_path, env=env, args=("--workers", "2")) as served:
                both_started(served.base)
                assert burst(served.base, 2 * limit) == {200: limit, 429: limit}
                assert scrape(served.base)["fairway_rate_limit_fallbacks_total"] == 0

                proxy.cut()  # Redis refuses: each worker's own bucket decides, still full
                down = burst(served.base, 4 * limit)
                assert set(down) <= {200, 429}, down
                assert down[200] >= limit, "the limit fails open, to each process's bucket"
                assert scrape(served.base)["fairway_rate_limit_fallbacks_total"] >= 4 * limit

                proxy.blackhole()  # Redis is silent: a take waits its short timeout only
                assert set(burst(served.base, 2)) <= {200, 429}

                proxy.restore()  # the shared bucket again (once its pause is over), still empty
                fallbacks = "fairway_rate_limit_fallbacks_total"
                deadline = time.monotonic() + WAIT
                while True:
                    assert time.monotonic() < deadline, "the shared limit never came back"
                    before = scrape(served.base)[fallbacks]
                    statuses = burst(served.base, 1)
                    if scrape(served.base)[fallbacks] == before:  # Redis decided this one
                        break
                assert statuses == {429: 1}
        finally:
            asyncio.run(forget(redis_url, prefix))
