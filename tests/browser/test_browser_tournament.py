"""A tournament from the organiser's page (open it, register players, start each round), its
games played out by the service's bot for seats that resigned, and the standings page: live
from the NDJSON stream, as of a round, and as a CSV file, each equal to the API's answer.
Bot players registered on the organiser's page, and a refused registration shown as text."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import httpx
import pytest
from playwright.sync_api import Browser, Page

from tests.browser.conftest import screenshots
from tests.browser.play import WAIT_MS
from tests.browser.test_browser_access import violations

pytestmark = pytest.mark.browser

HOSTILE = "<b onclick=alert(1)>Club</b> night"


def shown_rows(page: Page) -> list[list[str]]:
    return page.eval_on_selector_all(
        "#rows tbody tr", "(rows) => rows.map((r) => [...r.children].map((c) => c.textContent))"
    )


def api_rows(standings: dict[str, Any]) -> list[list[str]]:
    def cell(row: dict[str, Any], column: str) -> str:
        value = row[column]
        if column == "player":
            return value + (" (withdrawn)" if row["withdrawn"] else "")
        if value is None:
            return "-"
        return f"{value:.2f}" if column == "average" else str(value)

    columns = ["rank", "player", "total", "games", "hands", "won", "average", "byes"]
    return [[cell(row, c) for c in columns] for row in standings["rows"]]


def resign_everyone(base: str, tournament: str, tokens: dict[str, str]) -> None:
    """Every seat of the round in play resigns: the service's bot plays its games out."""
    info = httpx.get(f"{base}/tournaments/{tournament}").json()
    for table in info["played"][-1]["tables"]:
        for seat, name in enumerate(table["players"]):
            answer = httpx.post(
                f"{base}/games/{table['game_id']}/seats/{seat}/resign",
                headers={"Authorization": f"Bearer {tokens[name]}"},
            )
            assert answer.status_code == 200, answer.text


def test_a_tournament_organised_and_followed_in_the_browser(
    browser: Browser, page: Page, base: str
) -> None:
    page.goto("/organise")
    page.wait_for_selector("body[data-ready=yes]")
    page.fill("form#create input[name=name]", HOSTILE)
    page.fill("form#create input[name=hands]", "1")
    page.click("form#create button[type=submit]")
    page.wait_for_selector("body[data-phase=registering]")
    for name in ("Ada", "Bob", "Cy", "Di"):
        page.fill("#player", name)
        page.press("#player", "Enter")
        listed(page, name)
    screenshots(page, "organise")
    assert violations(page) == [], "the organiser's page"
    page.click("#next-round")
    page.wait_for_selector("body[data-round='1']")
    kept = page.evaluate("JSON.parse(localStorage.getItem('fairway.organisers'))")
    (tournament,) = kept
    tokens = kept[tournament]["players"]

    watcher = browser.new_context(base_url=base).new_page()
    watcher.goto(f"/standings/{tournament}")
    watcher.wait_for_selector("body[data-ready=yes]")
    assert watcher.query_selector("main b") is None
    assert HOSTILE in watcher.inner_text("#title")
    # The organiser's browser holds the players' tokens: a table can be played from here.
    page.goto(f"/standings/{tournament}")
    page.click("#rounds a.play-as:has-text('play as Ada')")
    page.wait_for_selector("body[data-mode=seat]:not([data-phase=lobby])")
    assert "Ada" in page.inner_text(".seat.me .name")
    resign_everyone(base, tournament, tokens)
    watcher.wait_for_selector("#as-of option[value='1']", state="attached", timeout=WAIT_MS)
    page.goto("/organise")
    page.click("#mine button")  # manage it again
    page.click("#next-round")
    page.wait_for_selector("body[data-round='2']")
    resign_everyone(base, tournament, tokens)
    watcher.wait_for_selector("body[data-ended=true]", timeout=WAIT_MS)
    final = httpx.get(f"{base}/tournaments/{tournament}/standings").json()
    assert final["ended"]
    assert shown_rows(watcher) == api_rows(final)
    watcher.wait_for_selector("#rounds section[aria-label='round 2'] a:has-text('hand 1')")
    screenshots(watcher, "standings")
    assert violations(watcher) == [], "the standings page"

    watcher.select_option("#as-of", "1")
    first = httpx.get(f"{base}/tournaments/{tournament}/standings", params={"round": 1}).json()
    watcher.wait_for_function(
        "(r) => document.body.dataset.revision === String(r)", arg=first["revision"]
    )
    assert shown_rows(watcher) == api_rows(first)
    with watcher.expect_download() as download:
        watcher.click("#csv")
    csv = httpx.get(
        f"{base}/tournaments/{tournament}/standings",
        params={"round": 1},
        headers={"Accept": "text/csv"},
    ).text
    assert Path(download.value.path()).read_bytes().decode() == csv
    watcher.click("#rounds section[aria-label='round 1'] a:has-text('hand 1')")
    watcher.wait_for_selector("body[data-fairness]")
    assert watcher.get_attribute("body", "data-fairness") == "passed"


def listed(page: Page, name: str) -> None:
    """Until the players' list names `name` exactly. Not `li:has-text(...)`: that matches a
    substring in any case, and a person's row shows the token to hand over, whose random
    letters hold "cy" or "di" in about 1 run in 30 each (the test then typed the next name
    into a form about to be replaced, and waited a minute for a player never registered)."""
    page.wait_for_function(
        "(n) => [...document.querySelectorAll('#players .name')].some((e) => e.textContent === n)",
        arg=name,
        timeout=WAIT_MS,
    )


def register(page: Page, name: str, kind: str) -> None:
    """On the organiser's page: a person (`kind` "person") or a bot of that level."""
    page.fill("#player", name)
    page.select_option("#player-kind", kind)
    page.click("#register button[type=submit]")


def test_the_organiser_registers_bots_and_sees_refusals_as_text(page: Page, base: str) -> None:
    page.goto("/organise")
    page.wait_for_selector("body[data-ready=yes]")
    page.fill("form#create input[name=name]", "Bots night")
    page.fill("form#create input[name=rounds]", "1")
    page.fill("form#create input[name=hands]", "1")
    page.click("form#create button[type=submit]")
    page.wait_for_selector("body[data-phase=registering]")
    (tournament,) = page.evaluate("JSON.parse(localStorage.getItem('fairway.organisers'))")
    players = {"Ada": "person", "Robo": "greedy", HOSTILE: "random", "Deep Thought": "strong"}
    for name, kind in players.items():
        register(page, name, kind)
        listed(page, name)
    assert page.query_selector("#players b") is None  # the hostile name is text
    shown = page.eval_on_selector_all(
        "#players li",
        "(rows) => rows.map((r) => [r.querySelector('.name').textContent,"
        " r.dataset.bot || null, r.querySelector('.bot')?.textContent || null])",
    )
    expected = [[n, None if k == "person" else k] for n, k in players.items()]
    assert [row[:2] for row in shown] == expected
    assert [row[2] for row in shown] == [
        None if k == "person" else f"{k} bot" for k in players.values()
    ]
    screenshots(page, "organise-bots")
    assert violations(page) == [], "the organiser's page with bots"

    info = httpx.get(f"{base}/tournaments/{tournament}").json()
    assert [[p["name"], p["bot"]] for p in info["players"]] == expected
    version = info["version"]

    # A name already taken, this time for a bot: the API's problem, as text; nothing stored.
    register(page, "Robo", "strong")
    page.wait_for_selector("#notice.error", timeout=WAIT_MS)
    kept = page.evaluate("JSON.parse(localStorage.getItem('fairway.organisers'))")
    again = httpx.post(
        f"{base}/tournaments/{tournament}/players",
        json={"name": "Robo", "bot": "strong"},
        headers={"Authorization": f"Bearer {kept[tournament]['token']}"},
    )
    assert again.status_code == 409, again.text
    assert again.json()["code"] == "name_taken"
    assert page.inner_text("#notice") == f"Could not register Robo: {again.json()['detail']}"
    after = httpx.get(f"{base}/tournaments/{tournament}").json()
    assert after["version"] == version
    assert [[p["name"], p["bot"]] for p in after["players"]] == expected
    assert set(kept[tournament]["players"]) == {"Ada"}  # only a person has a token to hand over

    # The bots take their seats as bot seats of their level, and the standings mark them.
    page.click("#next-round")
    page.wait_for_selector("body[data-round='1']")
    (round_one,) = httpx.get(f"{base}/tournaments/{tournament}").json()["played"]
    seated = {}
    for table in round_one["tables"]:
        game = httpx.get(f"{base}/games/{table['game_id']}").json()
        seated.update({s["name"]: s.get("bot") for s in game["seats"]})
    assert seated == {n: None if k == "person" else k for n, k in players.items()}
    standings = httpx.get(f"{base}/tournaments/{tournament}/standings").json()
    assert {r["player"]: r["bot"] for r in standings["rows"]} == seated
