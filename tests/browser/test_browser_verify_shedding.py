"""A finished Tens-shedding game checked in the browser: its export on /verify and its
replay's fairness panel re-derive each round's deal and find every card the events show
where the deal put it; an export with one dealt card changed (its hash chain recomputed, so
only the deck can tell) and a replay changed on the way are each reported as a mismatch
naming the round, the seat and the cards."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import httpx
import pytest
from playwright.sync_api import Page, Route

from events.codec import canonical_bytes, chain_hash

pytestmark = pytest.mark.browser

SHED_CHECK = "every card dealt, played and picked up (Tens-shedding)"
REPLAY_CHECK = "every card laid, played, turned and picked up"


def finished_bot_game(base: str) -> str:
    """Two greedy bots play a whole game of Tens-shedding by themselves (waits at most 50 s)."""
    made = httpx.post(
        f"{base}/games",
        json={
            "variant": "tens-shedding",
            "seats": 2,
            "options": {"turn_limit": 60},  # a round ends within 60 plays: a short game
            "bots": [{"seat": 0, "level": "greedy"}, {"seat": 1, "level": "greedy"}],
        },
    )
    assert made.status_code == 201, made.text
    game_id: str = made.json()["game_id"]
    for _ in range(250):
        if httpx.get(f"{base}/games/{game_id}/scores").json()["finished"]:
            return game_id
        time.sleep(0.2)
    raise AssertionError(f"the bots did not finish game {game_id} within 250 looks")


def rechained(export: dict[str, Any]) -> None:
    """Every link recomputed as the store would (docs/EVENT_STORE.md), after an edit."""
    previous = bytes(32)
    for event in export["events"]:
        event["prev_hash"] = previous.hex()
        previous = chain_hash(
            previous,
            canonical_bytes(
                f"game:{export['game_id']}",
                event["version"],
                event["event_id"],
                event["type"],
                event["schema_version"],
                event["data"].encode(),
                event["metadata"].encode(),
            ),
        )
        event["hash"] = previous.hex()
    export["head_hash"] = previous.hex()


def verdict(page: Page, name: str) -> str:
    page.wait_for_function(
        "(name) => document.getElementById('source').textContent.includes(name)"
        " && !!document.body.dataset.verdict",
        arg=name,
    )
    return page.get_attribute("body", "data-verdict") or ""


def test_a_tens_shedding_export_and_replay_are_checked_card_by_card(
    page: Page, base: str, tmp_path: Path
) -> None:
    game_id = finished_bot_game(base)
    page.goto(f"/verify?game={game_id}")
    page.wait_for_selector("body[data-verdict]")
    checks = page.inner_text("#checks")
    assert page.get_attribute("body", "data-verdict") == "passed", checks
    assert SHED_CHECK in checks
    assert "failed" not in checks

    export = httpx.get(f"{base}/games/{game_id}/export").json()
    plain = tmp_path / "plain.json"
    plain.write_text(json.dumps(export))
    page.set_input_files("#file", str(plain))
    assert verdict(page, "plain.json") == "passed", page.inner_text("#checks")

    # One card of seat 1's deal changed, where its first stack choice shows it, for one the
    # other seat laid (one deck for two: never dealt to both); every hash after it
    # recomputed, so the chain holds and only the deck can tell.
    chosen = [e for e in export["events"] if e["type"] == "stacks.chosen"]
    mine = next(e for e in chosen if json.loads(e["data"])["seat"] == 0)
    theirs = next(json.loads(e["data"]) for e in chosen if json.loads(e["data"])["seat"] == 1)
    data = json.loads(mine["data"])
    data["cards"][2] = theirs["cards"][0]
    mine["data"] = json.dumps(data, separators=(",", ":"))
    rechained(export)
    tampered = tmp_path / "tampered.json"
    tampered.write_text(json.dumps(export))
    page.set_input_files("#file", str(tampered))
    assert verdict(page, "tampered.json") == "failed"
    failed = page.inner_text("#checks li.fail")
    assert "hash chain" not in failed
    assert SHED_CHECK in failed
    assert (
        f"version {mine['version']}: hand 1, seat 1: lays {data['cards'][2]} on stack 3, "
        "which the deal did not give it"
    ) in failed, failed

    # The replay's fairness panel walks the same cards, and says where one differs.
    page.goto(f"/replay/{game_id}?hand=1")
    page.wait_for_selector("body[data-fairness]")
    checks = page.inner_text("#checks")
    assert page.get_attribute("body", "data-fairness") == "passed", checks
    assert REPLAY_CHECK in checks
    changed: dict[str, Any] = {}

    def tamper(route: Route) -> None:
        answer = route.fetch()
        body = answer.json()
        at, step = next(
            (i, s) for i, s in enumerate(body["steps"]) if s["event"]["type"] == "stacks.chosen"
        )
        changed.update(at=at, was=step["event"]["cards"][0], seat=step["event"]["seat"])
        step["event"]["cards"][0] = "JK"  # no Tens-shedding deck holds a joker
        route.fulfill(response=answer, body=json.dumps(body))

    page.route("**/hands/1/replay", tamper)
    page.goto(f"/replay/{game_id}?hand=1")
    page.wait_for_selector("body[data-fairness]")
    assert page.get_attribute("body", "data-fairness") == "failed"
    failed = page.inner_text("#checks li.fail")
    assert REPLAY_CHECK in failed
    assert f"step {changed['at'] + 1} (version " in failed, failed  # the page counts from 1
    assert f"hand 1, seat {changed['seat'] + 1}: lays JK on stack 1, which the deal" in failed
