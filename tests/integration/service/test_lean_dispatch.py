"""Which requests the lean path (service/http/lean.py) answers itself, and that every other
one reaches the router with its body as it came (the answers themselves are compared with
the router's in tests/api/test_api_lean_actions.py)."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import httpx
import pytest

from service.http.app import create_app
from service.http.lean import lean_actions
from service.ops.settings import Settings

pytestmark = pytest.mark.integration


class Router:
    """Stands for Litestar's router: notes what reaches it, body read whole, answers 299."""

    def __init__(self) -> None:
        self.reached: list[tuple[str, str, bytes]] = []

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        body = b""
        while True:
            message = await receive()
            body += message.get("body", b"")
            if not message.get("more_body", False):
                break
        self.reached.append((scope["method"], scope["path"], body))
        await send({"type": "http.response.start", "status": 299, "headers": []})
        await send({"type": "http.response.body", "body": b""})


Played = tuple[httpx.AsyncClient, Router, str, str]


@asynccontextmanager
async def playing(tmp_path: Path) -> AsyncIterator[Played]:
    """A started game of golf on the embedded store; a client of the lean path in front of
    a `Router`, the game's id and the token of a seat to act."""
    settings = Settings(data_dir=tmp_path, log_level="warning", bot_think=0.0)
    app = create_app(settings)
    async with app.lifespan():
        service = app.dependencies["games"].dependency()
        real = httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://t")
        async with real:
            created = (await real.post("/games", json={"variant": "golf", "seats": 2})).json()
            game = created["game_id"]
            tokens = [
                (await real.post(f"/games/{game}/seats", json={"name": f"p{n}"})).json()["token"]
                for n in range(2)
            ]
            creator = {"Authorization": f"Bearer {created['creator_token']}"}
            (await real.post(f"/games/{game}/start", headers=creator)).raise_for_status()
            to_act = (await real.get(f"/games/{game}/view")).json()["status"]["to_act"][0]
        router = Router()
        lean = lean_actions(app, router, lambda: service)
        async with httpx.AsyncClient(
            transport=httpx.ASGITransport(app=lean), base_url="http://t"
        ) as client:
            yield client, router, game, tokens[to_act]


async def test_a_common_action_is_answered_without_the_router(tmp_path: Path) -> None:
    async with playing(tmp_path) as (client, router, game, token):
        await a_common_action(client, router, game, token)


async def a_common_action(client: httpx.AsyncClient, router: Router, game: str, token: str) -> None:
    action = {"type": "setup-flip", "row": 0, "col": 0}
    headers = {"Authorization": f"Bearer {token}", "Idempotency-Key": "one"}
    answer = await client.post(f"/games/{game}/actions", json=action, headers=headers)
    assert answer.status_code == 200, answer.text
    assert answer.headers["etag"] == f'"{answer.json()["version"]}"'
    refused = await client.post(f"/games/{game}/actions", json=action)
    assert refused.status_code == 401
    assert refused.json()["code"] == "token_required"
    assert router.reached == []


OTHERS = {
    "another content type": ({"Content-Type": "application/json; charset=utf-8"}, b"{}"),
    "malformed JSON": ({}, b'{"type": "dr'),
    "not an action": ({}, b'{"type": "cheat"}'),
    "too large": ({}, b'{"pad": "' + b"x" * 20_000 + b'"}'),
    "too deep": ({}, b"[" * 40 + b"]" * 40),
    "a browser's": ({"Origin": "https://example.org"}, b'{"type": "draw", "source": "stock"}'),
    "invalid key": ({"Idempotency-Key": "a b"}, b'{"type": "draw", "source": "stock"}'),
}


@pytest.mark.parametrize("case", list(OTHERS))
async def test_any_other_request_of_the_route_reaches_the_router_with_its_body(
    tmp_path: Path, case: str
) -> None:
    extra, body = OTHERS[case]
    async with playing(tmp_path) as (client, router, game, token):
        headers = {"Content-Type": "application/json", "Authorization": f"Bearer {token}"}
        answer = await client.post(f"/games/{game}/actions", content=body, headers=headers | extra)
    assert answer.status_code == 299
    assert router.reached == [("POST", f"/games/{game}/actions", body)]


async def test_other_routes_reach_the_router(tmp_path: Path) -> None:
    async with playing(tmp_path) as (client, router, game, _):
        await client.get(f"/games/{game}/actions")
        await client.post(f"/games/{game}/start", content=json.dumps({}))
        await client.post(f"/games/{game}/actions/", content=b"{}")
    assert [(m, p) for m, p, _ in router.reached] == [
        ("GET", f"/games/{game}/actions"),
        ("POST", f"/games/{game}/start"),
        ("POST", f"/games/{game}/actions/"),
    ]
