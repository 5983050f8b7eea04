"""A spectator's table with the spectator delay, and streams that end every second (a short
FAIRWAY_SSE_LIFETIME, as a dropped connection would): both pages resume where they were
with Last-Event-ID, without a reload, and neither misses or repeats an event."""

from __future__ import annotations

import random
from collections.abc import Iterator

import httpx
import msgspec
import pytest
from playwright.sync_api import Browser, Page, Request

from service.ops.settings import Settings
from tests.api.server import running_server
from tests.browser.play import WAIT_MS, create_game, play_turn
from tests.browser.spectator import stream_entries

pytestmark = pytest.mark.browser

DELAY = 2


@pytest.fixture(scope="module")
def base(web_settings: Settings) -> Iterator[str]:
    settings = msgspec.structs.replace(web_settings, spectator_delay=DELAY, sse_lifetime=1.0)
    with running_server(settings) as url:
        yield url


def streamed_versions(requests: list[Request]) -> list[int]:
    versions: list[int] = []
    for request in requests:
        response = request.response()
        if response is not None and response.status == 200:
            versions += [entry["version"] for entry in stream_entries(response.text())]
    return versions


def test_a_delayed_spectator_follows_through_reconnects(browser: Browser, base: str) -> None:
    context = browser.new_context(base_url=base)
    ada, eve = context.new_page(), browser.new_context(base_url=base).new_page()
    game_id = create_game(ada, "golf", 2, "Ada", hands=1)
    streams: dict[str, list[Request]] = {"ada": [], "eve": []}
    ada.on(
        "requestfinished", lambda r: streams["ada"].append(r) if r.url.endswith("/stream") else None
    )
    eve.on(
        "requestfinished", lambda r: streams["eve"].append(r) if r.url.endswith("/stream") else None
    )
    eve.goto(f"/watch/{game_id}")
    eve.wait_for_selector("body[data-mode=spectator][data-version]")
    rng = random.Random(3)
    behind = False
    while True:
        summary = httpx.get(f"{base}/games/{game_id}").json()  # as a spectator sees it
        seat = httpx.get(f"{base}/games/{game_id}/me", headers=held(ada, game_id)).json()
        if seat["status"]["phase"] == "game_over":
            break
        if summary["version"] < seat["version"] and not behind:
            eve.wait_for_function(
                "(v) => Number(document.body.dataset.version) === v",
                arg=summary["version"],
                timeout=WAIT_MS,
            )
            behind = int(eve.evaluate("document.body.dataset.version")) < seat["version"]
        if 0 in seat["status"]["to_act"]:
            play_turn(ada, rng)
        else:
            ada.wait_for_function(
                "(v) => Number(document.body.dataset.version) > v",
                arg=seat["version"],
                timeout=WAIT_MS,
            )
    assert behind, "the spectator's table was held back while the game was in play"
    for page in (ada, eve):
        page.wait_for_selector("body[data-phase=game_over]")
        page.wait_for_selector("body[data-stream=ended]")
    final = httpx.get(f"{base}/games/{game_id}").json()["version"]
    for who, requests in streams.items():
        assert len(requests) > 1, f"{who}'s stream was never resumed"
        resumed = [r for r in requests[1:] if r.headers.get("last-event-id")]
        assert resumed, f"{who} resumed without Last-Event-ID"
        versions = streamed_versions(requests)
        assert versions == list(range(1, final + 1)), f"{who}: an event missed or repeated"


def held(page: Page, game_id: str) -> dict[str, str]:
    seats = page.evaluate("JSON.parse(localStorage.getItem('fairway.seats'))")
    return {"Authorization": f"Bearer {seats[game_id]['token']}"}
