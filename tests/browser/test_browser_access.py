"""Every page with the keyboard alone, and an accessibility check (axe-core, vendored from
npm into tests/browser/vendor/) that finds no serious or critical violation on any page."""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

import httpx
import pytest
from playwright.sync_api import Page

from tests.browser.play import LEGAL, WAIT_MS, create_game, play_out

pytestmark = pytest.mark.browser

AXE = (Path(__file__).parent / "vendor" / "axe-core" / "axe.min.js").read_text()


def violations(page: Page) -> list[dict[str, Any]]:
    """axe-core's serious and critical findings on the page as it is now."""
    if not page.evaluate("() => typeof window.axe !== 'undefined'"):
        page.evaluate(AXE)  # by the debugging protocol: the page's own policy allows no script
    found = page.evaluate(
        "async () => (await axe.run(document, { resultTypes: ['violations'] })).violations"
        ".map((v) => ({ id: v.id, impact: v.impact,"
        " nodes: v.nodes.map((n) => n.html).slice(0, 3) }))"
    )
    return [v for v in found if v["impact"] in ("serious", "critical")]


def keyboard_turn(page: Page) -> None:
    """Tab to something the seat may do (the page keeps the focus on the table as it moves),
    press Enter, and wait for the table to take it."""
    page.wait_for_selector(LEGAL, timeout=WAIT_MS)
    for _ in range(300):
        if page.evaluate("() => document.activeElement.matches('button.legal:not([disabled])')"):
            break
        page.keyboard.press("Tab")
    else:
        raise AssertionError("no legal action reached by Tab")
    version = page.evaluate("document.body.dataset.version")
    picking = '"pick"' in (page.evaluate("document.activeElement.dataset.action") or "")
    page.keyboard.press("Enter")
    if not picking:
        page.wait_for_function(
            "(v) => document.body.dataset.version !== v", arg=version, timeout=WAIT_MS
        )


def test_a_game_with_the_keyboard_alone(page: Page) -> None:
    page.goto("/")
    page.wait_for_selector("body[data-ready=yes]")
    page.focus("#name")
    page.keyboard.type("Kay")
    page.keyboard.press("Tab")  # into the form: variant
    page.keyboard.press("Tab")  # seats
    page.keyboard.press("Tab")  # title
    page.keyboard.type("by keyboard")
    page.keyboard.press("Tab")  # hands
    page.keyboard.type("1")
    page.keyboard.press("Enter")  # submits the form
    page.wait_for_url("**/play/*")
    while page.evaluate("document.body.dataset.phase") != "game_over":
        keyboard_turn(page)
        page.wait_for_function(
            "(legal) => document.body.dataset.phase === 'game_over'"
            " || !!document.querySelector(legal)",
            arg=LEGAL,
            timeout=WAIT_MS,
        )
    assert "by keyboard" in page.inner_text("#info h1")


def test_no_page_has_a_serious_accessibility_violation(page: Page, base: str) -> None:
    page.goto("/")
    page.wait_for_selector("body[data-ready=yes]")
    assert violations(page) == [], "the lobby"
    game_id = create_game(page, "golf", 2, "Ada", hands=2)
    page.wait_for_selector(LEGAL)
    assert violations(page) == [], "a seat's table, its actions offered"
    shedding = create_game(page, "tens-shedding", 2, "Ada")
    page.wait_for_selector(LEGAL)
    assert violations(page) == [], "a Tens-shedding seat choosing its stacks"
    httpx.post(f"{base}/games/{shedding}/seats/0/resign", headers=seat_auth(page, shedding))
    page.goto(f"/play/{game_id}")
    play_out(page, random.Random(5))
    assert violations(page) == [], "a seat's table, the game over"
    page.goto(f"/watch/{game_id}")
    page.wait_for_selector("body[data-mode=spectator][data-version]")
    assert violations(page) == [], "a spectator's table"
    page.goto(f"/replay/{game_id}?hand=1")
    page.wait_for_selector("body[data-fairness]")
    assert violations(page) == [], "a replay and its fairness panel"


def seat_auth(page: Page, game_id: str) -> dict[str, str]:
    seats = page.evaluate("JSON.parse(localStorage.getItem('fairway.seats'))")
    return {"Authorization": f"Bearer {seats[game_id]['token']}"}
