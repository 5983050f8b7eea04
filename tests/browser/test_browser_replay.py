"""A finished hand replayed step by step, and its fairness panel: the deal re-derived in the
browser by the pages' own JavaScript of docs/SHUFFLE.md passes every check, matches the
document's test vectors, and fails, saying where, on a replay tampered with on the way."""

from __future__ import annotations

import json
import random
from pathlib import Path

import httpx
import pytest
from playwright.sync_api import Page, Route

from service.web.assets import bundle
from tests.browser.conftest import screenshots
from tests.browser.play import create_game, play_out

pytestmark = pytest.mark.browser

SEED = bytes(range(32)).hex()


def test_the_shuffle_module_gives_the_documents_vectors(page: Page) -> None:
    page.goto("/")
    page.wait_for_selector("body[data-ready=yes]")
    shuffle_name = next(name for name in bundle().assets if name.startswith("shuffle."))
    found = page.evaluate(
        """async ([name, seed]) => {
            const m = await import(`/static/${name}`);
            const bytes = m.unhex(seed);
            const stream = new m.WordStream(bytes);
            const word = (await stream.word()).toString(16);
            const deck = await new m.WordStream(bytes).shuffled(m.unshuffled(1));
            const v2 = m.hex(await m.handSeed(bytes, 1, ["Ada", "Grace"]));
            const utf = m.hex(await m.handSeed(bytes, 1, ["Zo\u00eb \ud83c\udca1", "Ada"]));
            const anchor = m.hex(await m.hashedTimes(bytes, 3));
            const dealt = new m.WordStream(m.unhex(v2));
            const dealer = await dealt.below(2);
            const second = (await dealt.shuffled(m.unshuffled(1))).slice(0, 10);
            return { word, deck: deck.slice(0, 10), v2, utf, anchor, dealer, second };
        }""",
        [shuffle_name, SEED],
    )
    assert found == {
        "word": "a9d6e500293a88bd",
        "deck": ["9C", "QS", "3H", "JH", "KS", "TH", "AS", "4H", "4C", "7D"],
        "v2": "c22a10b273779d35d2f4692b94a8f981fb3650bb51a0f912cd11548beeb5a77b",
        "utf": "443002a7689bc85f0040cdd868524302c6440f41cc5d87f6de25983aac5106d5",
        "anchor": "4e05063392f42b5180353ef82da86c714042155044d91ab3253f1bab08120a0a",
        "dealer": 1,
        "second": ["9C", "7C", "TC", "5S", "AS", "9S", "6S", "5D", "JD", "AD"],
    }


def test_a_finished_hand_is_replayed_and_its_deal_checks(
    page: Page, base: str, tmp_path: Path
) -> None:
    game_id = create_game(page, "hang-ten", 4, "Ada", hands=2)
    kept = page.evaluate("JSON.parse(localStorage.getItem('fairway.seats'))")
    seeded = httpx.put(  # set during hand 1: it counts from hand 2 (docs/SHUFFLE.md, 10)
        f"{base}/games/{game_id}/seats/0/seed",
        json={"seed": "Ada's own seed"},
        headers={"Authorization": f"Bearer {kept[game_id]['token']}"},
    )
    assert seeded.status_code == 200, seeded.text
    play_out(page, random.Random(11))
    page.click("#scores a[aria-label='replay of hand 2']")
    page.wait_for_selector("body[data-ready=yes]")
    page.wait_for_selector("body[data-fairness]")
    screenshots(page, "replay")
    checks = page.inner_text("#checks")
    assert page.get_attribute("body", "data-fairness") == "passed", checks
    assert "failed" not in checks
    assert "every card drawn from the stock" in checks
    assert "the receipts this browser kept for its seats" in checks
    assert 'expected "Ada\'s own seed", "greedy bot 1"' in checks
    replay = httpx.get(f"{base}/games/{game_id}/hands/2/replay").json()
    last = len(replay["steps"]) - 1
    page.click("#last")
    assert page.get_attribute("body", "data-step") == str(last)
    page.click("#back")
    assert page.get_attribute("body", "data-step") == str(last - 1)
    page.keyboard.press("Home")
    assert page.get_attribute("body", "data-step") == "0"
    page.keyboard.press("ArrowRight")
    assert page.get_attribute("body", "data-step") == "1"
    assert replay["steps"][1]["event"]["type"] in page.inner_text("#where")

    def tampered(route: Route) -> None:
        answer = route.fetch()
        body = answer.json()
        step = next(
            s
            for s in body["steps"]
            if s["event"]["type"] == "card.drawn" and s["event"]["source"] == "stock"
        )
        step["event"]["card"] = "JK" if step["event"]["card"] != "JK" else "AS"
        route.fulfill(response=answer, body=json.dumps(body))

    # A receipt kept with another hash: its signature no longer holds, and the panel says so.
    page.evaluate(
        """(gameId) => {
            const kept = JSON.parse(localStorage.getItem('fairway.receipts'));
            const first = kept[gameId][0];
            first.hash = (first.hash[0] === '0' ? '1' : '0') + first.hash.slice(1);
            localStorage.setItem('fairway.receipts', JSON.stringify(kept));
        }""",
        game_id,
    )
    page.route("**/hands/1/replay", tampered)
    page.goto(f"/replay/{game_id}?hand=1")
    page.wait_for_selector("body[data-fairness]")
    assert page.get_attribute("body", "data-fairness") == "failed"
    failed = page.inner_text("#checks li.fail")
    assert "every card drawn from the stock" in failed
    assert "drew" in failed
    assert "the signature does not hold" in page.inner_text("#checks")

    # The whole game, exported, verified in the browser; then a copy with one drawn card
    # changed: the chain and the deck both name the event.
    page.unroute("**/hands/1/replay")
    page.goto(f"/verify?game={game_id}")
    page.wait_for_selector("body[data-verdict]")
    assert page.get_attribute("body", "data-verdict") == "passed", page.inner_text("#checks")
    export = httpx.get(f"{base}/games/{game_id}/export").json()
    drawn = next(
        e
        for e in export["events"]
        if e["type"] == "card.drawn" and json.loads(e["data"])["source"] == "stock"
    )
    data = json.loads(drawn["data"])
    data["card"] = "JK" if data["card"] != "JK" else "AS"
    drawn["data"] = json.dumps(data, separators=(",", ":"))
    tampered_file = tmp_path / "tampered.json"
    tampered_file.write_text(json.dumps(export))
    page.set_input_files("#file", str(tampered_file))
    page.wait_for_function(
        "() => document.getElementById('source').textContent.includes('tampered.json')"
        " && !!document.body.dataset.verdict"
    )
    assert page.get_attribute("body", "data-verdict") == "failed"
    failed = page.inner_text("#checks")
    assert f"version {drawn['version']}: hash differs" in failed
    assert f"version {drawn['version']}: data.card is {data['card']}" in failed
    screenshots(page, "verify-tampered")
