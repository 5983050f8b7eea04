"""Driving a table page as a person does: clicking what the page offers as legal."""

from __future__ import annotations

import json
import random

from playwright.sync_api import Error, Page

LEGAL = "button.legal:not([disabled])"
WAIT_MS = 60_000


def create_game(page: Page, variant: str, seats: int, name: str, **options: int) -> str:
    """From the lobby: a game of `variant`, the person in seat 1 and greedy bots elsewhere
    (the form's default); returns the game id once the table is open."""
    page.goto("/")
    page.wait_for_selector("body[data-ready=yes]")
    page.fill("#name", name)
    page.select_option("form#create select[name=variant]", variant)
    page.fill("form#create input[name=seats]", str(seats))
    page.dispatch_event("form#create input[name=seats]", "change")
    for option, value in options.items():
        page.fill(f"form#create input[name={option}]", str(value))
    page.click("form#create button[type=submit]")
    page.wait_for_url("**/play/*")
    return page.url.rsplit("/", 1)[1]


def play_turn(page: Page, rng: random.Random) -> None:
    """One click of this page's, picked at random among the legal ones once it offers any,
    and the page updated after it."""
    page.wait_for_selector(LEGAL, timeout=WAIT_MS)
    while True:
        offered = page.query_selector_all(LEGAL)
        if not offered:
            return  # the table moved on without this seat's click (a clock, a refusal)
        chosen = rng.choice(offered)
        action = json.loads(chosen.get_attribute("data-action") or "{}")
        version = page.evaluate("document.body.dataset.version")
        try:
            chosen.click(timeout=5_000)
        except Error:  # the table changed under the pointer: look again
            continue
        if action.get("type") == "pick":
            continue
        page.wait_for_function(
            "(version) => document.body.dataset.version !== version", arg=version, timeout=WAIT_MS
        )
        return


def play_out(page: Page, rng: random.Random, limit: int = 5000) -> int:
    """Click legal actions picked at random until the game is over; returns the clicks."""
    clicks = 0
    while clicks < limit:
        page.wait_for_function(
            "(legal) => document.body.dataset.phase === 'game_over'"
            " || !!document.querySelector(legal)",
            arg=LEGAL,
            timeout=WAIT_MS,
        )
        if page.evaluate("document.body.dataset.phase") == "game_over":
            return clicks
        offered = page.query_selector_all(LEGAL)
        if not offered:
            continue
        chosen = rng.choice(offered)
        action = json.loads(chosen.get_attribute("data-action") or "{}")
        version = page.evaluate("document.body.dataset.version")
        try:
            chosen.click(timeout=5_000)
        except Error:  # the table changed under the pointer (another seat moved): look again
            continue
        clicks += 1
        if action.get("type") != "pick":  # picking a stack card changes only the page
            page.wait_for_function(
                "(version) => document.body.dataset.version !== version"
                " || document.body.dataset.phase === 'game_over'",
                arg=version,
                timeout=WAIT_MS,
            )
    raise AssertionError(f"no end after {limit} clicks")
