"""The variant scorer refuses what a variant cannot hold, with a 422 naming the card."""

from __future__ import annotations

import httpx
import pytest

from tests.api.test_api_errors import problem

pytestmark = pytest.mark.api

NO_JOKERS = {"cards": [["JK", "2S", "3S", "4S", "5S"], ["6S", "7S", "8S", "9S", "TS"]]}
FIVE_KINGS_OF_DIAMONDS = {"cards": ["KD"] * 5}


@pytest.mark.parametrize(
    ("variant", "body", "card"),
    [
        ("tens", NO_JOKERS, "JK"),
        ("basketball", NO_JOKERS, "JK"),
        ("tens-shedding", FIVE_KINGS_OF_DIAMONDS, "KD"),
        ("golf", {"cards": [["AH", "AH", "AH", "AH"], ["2S", "3S", "4S", "5S"]]}, "AH"),
    ],
)
def test_the_scorer_refuses_a_card_the_variant_cannot_hold_and_names_it(
    http: httpx.Client, variant: str, body: dict[str, object], card: str
) -> None:
    refused = problem(http.post(f"/variants/{variant}/score", json=body), 422, "card_not_available")
    assert card in refused["detail"]


def test_the_scorer_accepts_a_variant_s_own_cards(http: httpx.Client) -> None:
    golf = {"cards": [["JK", "JK", "AH", "AH"], ["JK", "2S", "AH", "5S"]]}  # 3 decks, 6 jokers
    assert http.post("/variants/golf/score", json=golf).status_code == 200
    shed = http.post("/variants/tens-shedding/score", json={"cards": ["KD"] * 4})
    assert shed.json()["total"] == 4 * 13
