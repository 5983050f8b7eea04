"""GET /games, the lobby served from its projection, over real HTTP: public listings,
filters, cursor paging, bad input, and what happens when Redis goes away and comes back.
Also GET /projections and the projection gauges of /metrics."""

from __future__ import annotations

import asyncio
import secrets
import time
from collections.abc import Callable, Iterator
from datetime import UTC, datetime
from typing import Any, TypeVar

import httpx
import msgspec
import pytest

from service.ops.settings import Settings
from tests.api.players import open_table
from tests.api.server import running_server
from tests.support.redis_keys import address, forget, through
from tests.support.tcp_proxy import TcpProxy

pytestmark = pytest.mark.api

T = TypeVar("T")


def eventually(check: Callable[[], T], seconds: float = 10.0) -> T:
    """The first true result of `check()`, polled: the lobby follows the events shortly."""
    deadline = time.monotonic() + seconds
    while True:
        result = check()
        if result:
            return result
        if time.monotonic() > deadline:
            raise AssertionError("not seen in time")
        time.sleep(0.05)


def listed(http: httpx.Client, **params: Any) -> list[dict[str, Any]]:
    """Every game the lobby lists for `params`, page by page (limit 3)."""
    games: list[dict[str, Any]] = []
    cursor = None
    while True:
        query = {**params, "limit": 3} | ({"cursor": cursor} if cursor else {})
        response = http.get("/games", params=query)
        assert response.status_code == 200, response.text
        body = response.json()
        assert len(body["games"]) <= 3
        games += body["games"]
        cursor = body["next_cursor"]
        if cursor is None:
            return games


def since() -> str:
    return datetime.now(UTC).isoformat()


def test_the_lobby_lists_each_game_with_public_facts_and_filters_them(http: httpx.Client) -> None:
    start = since()
    title = f"lobby {secrets.token_hex(3)}"
    waiting = http.post("/games", json={"variant": "golf", "seats": 3, "title": title}).json()
    http.post(f"/games/{waiting['game_id']}/seats", json={"name": "Ada", "seat": 1})
    playing = open_table(http, "tens", 2)

    def both() -> list[dict[str, Any]]:
        games = listed(http, updated_after=start)
        ids = [g["game_id"] for g in games]
        ready = len(games) == 2 and games[1].get("version") == 2 and games[0]["version"] >= 5
        return games if ready and ids == [playing.game_id, waiting["game_id"]] else []

    newest, oldest = eventually(both)
    assert oldest == {
        "game_id": waiting["game_id"],
        "variant": "golf",
        "title": title,
        "seats": [
            {"seat": 0, "name": None, "bot": None},
            {"seat": 1, "name": "Ada", "bot": None},
            {"seat": 2, "name": None, "bot": None},
        ],
        "free_seats": [0, 2],
        "status": "lobby",
        "hand": 0,
        "version": 2,
        "created_at": oldest["created_at"],
        "updated_at": oldest["updated_at"],
    }
    assert oldest["created_at"] < oldest["updated_at"]
    assert newest["status"] == "playing"
    assert newest["hand"] == 1
    assert newest["free_seats"] == []
    assert newest["seats"] == [{"seat": i, "name": f"bot {i}", "bot": None} for i in range(2)]

    def ids(**params: Any) -> list[str]:
        return [g["game_id"] for g in listed(http, updated_after=start, **params)]

    assert ids(status="lobby") == [waiting["game_id"]]
    assert ids(status="playing") == [playing.game_id]
    assert ids(status="finished") == []
    assert ids(open="true") == [waiting["game_id"]]
    assert ids(open="false") == [playing.game_id]
    assert ids(open="true", status="playing") == []
    assert ids(open="false", status="playing") == [playing.game_id]
    assert ids(open="false", status="lobby") == []
    assert ids(open="true", status="lobby") == [waiting["game_id"]]
    assert ids(variant="tens") == [playing.game_id]
    assert ids(variant="golf", open="true") == [waiting["game_id"]]
    assert ids(variant="basketball") == []
    later = oldest["updated_at"]
    assert ids() == [playing.game_id, waiting["game_id"]]
    assert waiting["game_id"] not in [g["game_id"] for g in listed(http, updated_after=later)]


def test_paging_visits_each_game_once_newest_first_while_games_change(http: httpx.Client) -> None:
    start = since()
    made = [
        http.post("/games", json={"variant": "basketball", "seats": 2}).json()["game_id"]
        for _ in range(7)
    ]
    eventually(lambda: len(listed(http, updated_after=start)) == 7)
    first = http.get("/games", params={"updated_after": start, "limit": 3}).json()
    assert [g["game_id"] for g in first["games"]] == made[::-1][:3]
    # a game from the page already read changes: it moves to the front, nothing is repeated
    http.post(f"/games/{made[5]}/seats", json={"name": "Mover"})
    eventually(lambda: listed(http, updated_after=start)[0]["game_id"] == made[5])
    rest: list[str] = []
    cursor = first["next_cursor"]
    while cursor:
        page = http.get(
            "/games", params={"updated_after": start, "limit": 3, "cursor": cursor}
        ).json()
        rest += [g["game_id"] for g in page["games"]]
        cursor = page["next_cursor"]
    assert rest == made[::-1][3:]


@pytest.mark.parametrize(
    "query",
    [
        {"limit": 0},
        {"limit": 201},
        {"limit": "ten"},
        {"status": "paused"},
        {"variant": "poker"},
        {"open": "maybe"},
        {"updated_after": "yesterday"},
        {"updated_after": "2026-01-01T00:00:00"},
        {"cursor": "not-a-cursor"},
        {"cursor": "x" * 401},
    ],
)
def test_a_bad_query_is_refused_with_a_problem_naming_it(
    http: httpx.Client, query: dict[str, Any]
) -> None:
    response = http.get("/games", params=query)
    assert response.status_code == 400, response.text
    assert response.headers["content-type"].startswith("application/problem+json")
    problem = response.json()
    assert problem["code"] == "invalid_request"
    assert next(iter(query)) in response.text


def test_the_status_endpoint_and_the_metrics_show_each_projection_and_its_lag(
    http: httpx.Client,
) -> None:
    body = eventually(lambda: http.get("/projections").json())
    lobby = next(p for p in body["projections"] if p["name"] == "lobby")
    assert lobby["state"] == "running"
    assert lobby["generation"] >= 1
    assert set(lobby["lag"]) == {"events", "seconds"}
    assert set(lobby["checkpoint"]) == {"tx_id", "position"}
    metrics = http.get("/metrics").text
    assert "fairway_projections_available 1" in metrics
    assert 'fairway_projection_lag_events{projection="lobby"}' in metrics
    assert 'fairway_projection_lag_seconds{projection="lobby"}' in metrics
    assert 'fairway_projection_up{projection="lobby",state="running"} 1' in metrics


class _Redis(msgspec.Struct):
    base: str
    proxy: TcpProxy


@pytest.fixture
def redis_backed(api_settings: Settings, redis_url: str) -> Iterator[_Redis]:
    """A second server on the same database whose projections live in Redis (the worker's
    database, a prefix of its own), reached through a proxy the test can cut, with the
    projector inline."""
    prefix = f"api{secrets.token_hex(4)}"
    with TcpProxy.to_address(*address(redis_url)) as proxy:
        url = through(redis_url, proxy.port)
        settings = msgspec.structs.replace(
            api_settings, redis_url=url, redis_prefix=prefix, projector_inline=True
        )
        try:
            with running_server(settings) as base:
                # A new prefix: every projection builds from zero over the session's events
                # first (the read models beside the lobby make that take a while).
                built = time.monotonic() + 120
                while httpx.get(f"{base}/games", timeout=5).status_code != 200:
                    assert time.monotonic() < built, "the projections were not built in time"
                    time.sleep(0.1)
                yield _Redis(base, proxy)
        finally:
            asyncio.run(forget(redis_url, prefix))


def test_while_redis_is_down_the_lobby_answers_503_play_goes_on_and_it_catches_up(
    redis_backed: _Redis,
) -> None:
    with httpx.Client(base_url=redis_backed.base, timeout=20) as http:
        start = since()
        before = http.post("/games", json={"variant": "golf", "seats": 2}).json()["game_id"]
        eventually(lambda: [g["game_id"] for g in listed(http, updated_after=start)] == [before])

        redis_backed.proxy.cut()
        down = http.get("/games")
        assert down.status_code == 503
        assert down.json()["code"] == "projections_unavailable"
        assert down.headers["retry-after"] == "1"
        assert http.get("/projections").status_code == 503
        assert "fairway_projections_available 0" in http.get("/metrics").text
        during = http.post("/games", json={"variant": "golf", "seats": 2})
        assert during.status_code == 201  # PostgreSQL is the source of truth
        claimed = http.post(f"/games/{during.json()['game_id']}/seats", json={"name": "Ada"})
        assert claimed.status_code == 201

        redis_backed.proxy.restore()
        expected = [during.json()["game_id"], before]
        eventually(
            lambda: (
                http.get("/games").status_code == 200
                and [g["game_id"] for g in listed(http, updated_after=start)] == expected
            ),
            seconds=20,
        )
        game = listed(http, updated_after=start)[0]
        assert game["seats"][0]["name"] == "Ada"
