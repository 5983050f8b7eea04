"""A person plays a whole game of every variant against bots, by clicking legal actions;
the replay's fairness panel then re-derives the first hand's deal and finds it fair."""

from __future__ import annotations

import random

import httpx
import pytest
from playwright.sync_api import Browser, Page, Response

from service.ops.settings import Settings
from tests.browser.conftest import screenshots
from tests.browser.play import create_game, play_out
from tests.browser.spectator import Oracle, leaks

pytestmark = pytest.mark.browser

GAMES = {
    "golf": (2, {"hands": 1}),
    "hang-ten": (4, {"hands": 1}),
    "tens": (2, {"hands": 1}),
    "basketball": (2, {"hands": 1}),
    "tens-shedding": (2, {}),
}


@pytest.mark.parametrize("variant", sorted(GAMES))
def test_a_person_plays_a_whole_game_against_bots(
    page: Page, browser: Browser, base: str, web_settings: Settings, variant: str
) -> None:
    seats, options = GAMES[variant]
    rng = random.Random(variant)
    game_id = create_game(page, variant, seats, "Ada", **options)
    page.wait_for_selector("body[data-phase]:not([data-phase=lobby])")
    # A spectator watches the whole game; every answer its page gets is checked at the end.
    eve = browser.new_context(base_url=base).new_page()
    received: list[Response] = []
    eve.on("response", lambda r: received.append(r) if "/games/" in r.url else None)
    eve.goto(f"/watch/{game_id}")
    screenshots(page, f"table-{variant}")
    clicks = play_out(page, rng)
    assert clicks > 0
    scores = httpx.get(f"{base}/games/{game_id}/scores").json()
    assert scores["finished"]
    page.wait_for_selector("#scores table tr.totals")
    shown = page.inner_text("#scores tr.totals")
    assert [int(t) for t in shown.split()[1:]] == scores["totals"]
    assert "Game over" in page.inner_text("#info")
    screenshots(page, f"table-{variant}-over")
    page.click("#scores a[aria-label='replay of hand 1']")  # and the deal checks in the browser
    page.wait_for_selector("body[data-fairness]")
    assert page.get_attribute("body", "data-fairness") == "passed", page.inner_text("#checks")
    eve.wait_for_selector("body[data-phase=game_over][data-stream=ended]")
    assert web_settings.database_url is not None
    oracle = Oracle(web_settings.database_url, game_id)
    found = [
        leak
        for response in received
        if response.status == 200
        for leak in leaks(oracle, response.url, response.text())
    ]
    assert any(r.url.endswith("/stream") for r in received)
    assert found == []
    eve.context.close()


def test_the_turn_clock_counts_down_on_the_table(page: Page) -> None:
    create_game(page, "golf", 2, "Ada", hands=1, turn_seconds=30)
    page.wait_for_selector(".seat.me .clock")
    left = page.get_attribute(".seat.me .clock", "aria-label") or ""
    assert left.endswith(" seconds left")
    assert 0 < int(left.split()[0]) <= 30
