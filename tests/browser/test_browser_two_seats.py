"""Two people play a whole Golf game against each other in two browsers while a third
watches live; their names are hostile markup, shown as text; the spectator's page receives
no card a spectator may not know."""

from __future__ import annotations

import random
from typing import Any

import httpx
import pytest
from playwright.sync_api import Browser, Page, Response

from service.ops.settings import Settings
from tests.browser.conftest import screenshots
from tests.browser.play import LEGAL, WAIT_MS, play_turn
from tests.browser.spectator import Oracle, leaks

pytestmark = pytest.mark.browser

HOSTILE = "<img src=x onerror=alert('pwned')>"
TITLE = "<script>alert('pwned')</script> golf"


def opened(browser: Browser, base: str, dialogs: list[str]) -> Page:
    context = browser.new_context(base_url=base, viewport={"width": 1280, "height": 800})
    page = context.new_page()
    page.on("dialog", lambda dialog: (dialogs.append(dialog.message), dialog.dismiss()))
    return page


def markup_free(page: Page) -> None:
    """The hostile names are on the page as text, never as elements."""
    assert page.query_selector("main img, main script") is None
    assert page.title() != "pwned"
    assert HOSTILE in page.inner_text("body")


def test_two_browsers_play_golf_while_a_third_watches(
    browser: Browser, base: str, web_settings: Settings
) -> None:
    dialogs: list[str] = []
    ada, bob, eve = (opened(browser, base, dialogs) for _ in range(3))
    ada.goto("/")
    ada.wait_for_selector("body[data-ready=yes]")
    ada.fill("#name", HOSTILE)
    ada.fill("form#create input[name=title]", TITLE)
    ada.fill("form#create input[name=hands]", "2")
    ada.select_option("form#create select[name=seat-1]", "person")
    ada.click("form#create button[type=submit]")
    ada.wait_for_url("**/play/*")
    game_id = ada.url.rsplit("/", 1)[1]
    ada.wait_for_selector("#actions button:has-text('waiting for 1 seat')")

    received: list[Response] = []
    eve.on("response", lambda r: received.append(r) if "/games/" in r.url else None)
    eve.goto(f"/watch/{game_id}")
    eve.wait_for_selector("body[data-mode=spectator][data-stream=live]")

    bob.goto("/")
    bob.wait_for_selector(f"li[data-game='{game_id}'] button.claim")
    screenshots(bob, "lobby")
    markup_free(bob)
    assert TITLE in bob.inner_text(f"li[data-game='{game_id}'] .title")
    bob.fill("#name", HOSTILE + " too")
    bob.click(f"li[data-game='{game_id}'] button.claim")
    bob.wait_for_url(f"**/play/{game_id}")

    ada.click("#actions button:has-text('start the game')")  # enabled once Bob's claim streams in
    pages = {0: ada, 1: bob}
    rng = random.Random(7)
    moves = 0
    watched_live = False
    while True:
        summary = httpx.get(f"{base}/games/{game_id}").json()
        if summary["status"]["phase"] == "game_over":
            break
        seat = summary["status"]["to_act"][0]
        play_turn(pages[seat], rng)
        moves += 1
        if moves == 6:  # the spectator follows the game as it goes, without a reload
            version = httpx.get(f"{base}/games/{game_id}").json()["version"]
            eve.wait_for_function(
                "(v) => Number(document.body.dataset.version) >= v", arg=version, timeout=WAIT_MS
            )
            watched_live = eve.evaluate("document.body.dataset.phase") != "game_over"
            screenshots(eve, "spectator")
    assert watched_live
    for page in (ada, bob, eve):
        page.wait_for_selector("body[data-phase=game_over]")
        page.wait_for_selector("#scores tr.totals")
        markup_free(page)
        assert not page.query_selector_all(LEGAL)
    totals = httpx.get(f"{base}/games/{game_id}/scores").json()["totals"]
    shown = eve.inner_text("#scores tr.totals").split()[1:]
    assert [int(t) for t in shown] == totals
    screenshots(ada, "table-over")
    assert dialogs == []

    # A rematch: Ada asks, Bob's finished table links it, both sit down with their tokens.
    ada.click("#actions button.rematch")
    ada.wait_for_url(lambda url: game_id not in url)
    rematch = ada.url.rsplit("/", 1)[1]
    ada.wait_for_selector("body[data-mode=seat]:not([data-phase=lobby])")
    bob.click("#actions a.rematch-link", timeout=WAIT_MS)
    bob.wait_for_url(f"**/play/{rematch}")
    bob.wait_for_selector("body[data-mode=seat]:not([data-phase=lobby])")
    assert httpx.get(f"{base}/games/{rematch}").json()["rematch_of"] == game_id

    eve.wait_for_selector("body[data-stream=ended]")
    assert web_settings.database_url is not None
    oracle = Oracle(web_settings.database_url, game_id)
    found: list[str] = []
    bodies: dict[str, Any] = {}
    for response in received:
        if response.status in (200, 201):
            text = response.text()
            bodies[response.url] = text
            found += leaks(oracle, response.url, text)
    assert any(url.endswith("/stream") for url in bodies), "the spectator's stream was seen"
    assert any(url.endswith("/view") for url in bodies)
    assert found == []
