"""A database that goes silent or away: requests and /ready are answered 503 `unavailable`
with Retry-After (not held for the outage), the service heals by itself when the database
returns, and nothing it acknowledged is lost.

A real server (default settings but for the URL) reaches PostgreSQL through a TCP proxy the
tests control. The HTTP client's 5 s timeout is a generous bound, not a measured speed: a
request held for the partition, or for the pool's old 10 s wait, fails it.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from typing import Any

import httpx
import msgspec
import pytest

from service.ops.settings import Settings
from tests.api.players import Table, open_table
from tests.api.server import running_server
from tests.support.tcp_proxy import TcpProxy

pytestmark = [pytest.mark.api, pytest.mark.integration, pytest.mark.slow]

Stored = Callable[[str], list[tuple[Any, ...]]]

BOUND = 5.0


@pytest.fixture(scope="module")
def proxy(database_url: str) -> Iterator[TcpProxy]:
    with TcpProxy.to(database_url) as running:
        yield running


@pytest.fixture(scope="module")
def http(api_settings: Settings, proxy: TcpProxy) -> Iterator[httpx.Client]:
    settings = msgspec.structs.replace(api_settings, database_url=proxy.url)
    with running_server(settings) as base, httpx.Client(base_url=base, timeout=BOUND) as client:
        yield client


@pytest.fixture
def healthy(proxy: TcpProxy, http: httpx.Client) -> Iterator[None]:
    """Every test starts and ends with the database reachable."""
    proxy.restore()
    healed(http)
    yield
    proxy.restore()


def healed(http: httpx.Client, within: float = 30.0) -> None:
    """Waits, doing nothing but asking, until the service is ready again."""
    give_up = time.monotonic() + within
    while http.get("/ready").status_code != 200:
        assert time.monotonic() < give_up, "the service did not heal by itself"
        time.sleep(0.1)


def unavailable(response: httpx.Response) -> None:
    assert response.status_code == 503, response.text
    assert response.headers["retry-after"].isdigit()
    assert response.headers["content-type"].startswith("application/problem+json")
    assert response.json()["code"] == "unavailable"


def not_ready(response: httpx.Response) -> None:
    assert response.status_code == 503, response.text
    assert response.headers["retry-after"].isdigit()
    assert response.json()["status"] == "unavailable"


def an_action(table: Table) -> tuple[int, dict[str, Any]]:
    seat = table.public()["status"]["to_act"][0]
    return seat, table.me(seat)["legal_actions"][0]


def acknowledged_then_retried_once(
    table: Table, stored: Stored, before: list[tuple[Any, ...]], seat: int, action: Any, key: str
) -> None:
    """What was stored before the outage is unchanged; the action sent during it, retried
    with its Idempotency-Key, is stored exactly once (whether or not the first attempt
    reached the database)."""
    retry = table.act(seat, action, **{"Idempotency-Key": key})
    assert retry.status_code == 200, retry.text
    after = stored(table.game_id)
    assert after[: len(before)] == before
    assert [row[0] for row in after] == list(range(1, retry.json()["version"] + 1))
    again = table.act(seat, action, **{"Idempotency-Key": key})
    assert again.json()["version"] == retry.json()["version"]
    assert stored(table.game_id) == after


@pytest.mark.usefixtures("healthy")
def test_a_silent_database_is_answered_503_and_the_service_heals(
    proxy: TcpProxy, http: httpx.Client, stored: Stored
) -> None:
    table = open_table(http, "golf", 2, {"hands": 1})
    seat, action = an_action(table)
    assert table.act(seat, action, **{"Idempotency-Key": "before"}).status_code == 200
    seat, action = an_action(table)
    before = stored(table.game_id)

    proxy.blackhole()
    unavailable(http.get(f"/games/{table.game_id}"))
    unavailable(table.act(seat, action, **{"Idempotency-Key": "during"}))
    unavailable(http.get(f"/games/{table.game_id}/view"))
    not_ready(http.get("/ready"))
    proxy.restore()

    healed(http)
    assert http.get(f"/games/{table.game_id}/view").status_code == 200
    acknowledged_then_retried_once(table, stored, before, seat, action, "during")


@pytest.mark.usefixtures("healthy")
def test_a_database_that_went_away_is_answered_503_and_the_service_heals(
    proxy: TcpProxy, http: httpx.Client, stored: Stored
) -> None:
    table = open_table(http, "golf", 2, {"hands": 1})
    seat, action = an_action(table)
    before = stored(table.game_id)

    proxy.cut()
    unavailable(http.get(f"/games/{table.game_id}"))
    unavailable(table.act(seat, action, **{"Idempotency-Key": "during"}))
    not_ready(http.get("/ready"))
    time.sleep(3)  # the pool is backing off reconnecting by now
    unavailable(http.get(f"/games/{table.game_id}/view"))
    not_ready(http.get("/ready"))
    proxy.restore()

    healed(http)
    assert http.get(f"/games/{table.game_id}/view").status_code == 200
    acknowledged_then_retried_once(table, stored, before, seat, action, "during")
