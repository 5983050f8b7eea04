"""A person plays a whole game of every variant against bots, by clicking legal actions;
the replay's fairness panel then re-derives the first hand's deal and finds it fair."""

from __future__ import annotations

import random

import httpx
import pytest
from playwright.sync_api import Page

from tests.browser.conftest import screenshots
from tests.browser.play import create_game, play_out

pytestmark = pytest.mark.browser

GAMES = {
    "golf": (2, {"hands": 1}),
    "hang-ten": (4, {"hands": 1}),
    "tens": (2, {"hands": 1}),
    "basketball": (2, {"hands": 1}),
    "tens-shedding": (2, {}),
}


@pytest.mark.parametrize("variant", sorted(GAMES))
def test_a_person_plays_a_whole_game_against_bots(page: Page, base: str, variant: str) -> None:
    seats, options = GAMES[variant]
    rng = random.Random(variant)
    game_id = create_game(page, variant, seats, "Ada", **options)
    page.wait_for_selector("body[data-phase]:not([data-phase=lobby])")
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


def test_the_turn_clock_counts_down_on_the_table(page: Page) -> None:
    create_game(page, "golf", 2, "Ada", hands=1, turn_seconds=30)
    page.wait_for_selector(".seat.me .clock")
    left = page.get_attribute(".seat.me .clock", "aria-label") or ""
    assert left.endswith(" seconds left")
    assert 0 < int(left.split()[0]) <= 30
