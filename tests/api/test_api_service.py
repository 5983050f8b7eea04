"""Variants, the layout scorer, operations endpoints, request ids and rate limits."""

from __future__ import annotations

from pathlib import Path

import httpx
import pytest

from service.ops.settings import Settings
from tests.api.server import running_server
from tests.api.test_api_errors import problem

pytestmark = pytest.mark.api


def test_the_variants_are_listed_with_player_counts_and_rules(http: httpx.Client) -> None:
    variants = {v["name"]: v for v in http.get("/variants").json()}
    assert set(variants) == {"hang-ten", "tens", "golf", "basketball", "tens-shedding"}
    assert (variants["hang-ten"]["min_players"], variants["hang-ten"]["max_players"]) == (4, 6)
    assert (variants["tens-shedding"]["min_players"], variants["tens-shedding"]["max_players"]) == (
        2,
        10,
    )
    assert "block" in variants["hang-ten"]["rules"]
    assert http.get("/variants/golf").json()["name"] == "golf"
    problem(http.get("/variants/poker"), 404, "variant_not_found")


@pytest.mark.parametrize(
    ("variant", "cards", "total"),
    [
        # The seed texts' worked examples (RULES.md).
        ("tens", [["A", "7", "7", "7", "K"], ["A", "7", "7", "9", "J"]], 6),
        ("tens", [["3", "6", "6", "2", "K"], ["3", "6", "6", "2", "A"]], -19),
        ("golf", [["6", "A", "4", "T"], ["2", "K", "4", "T"]], 9),
        ("golf", [["6", "A", "Q", "Q"], ["4", "K", "Q", "Q"]], 1),
    ],
)
def test_the_scorer_gives_the_rulebook_totals(
    http: httpx.Client, variant: str, cards: list[list[str]], total: int
) -> None:
    suits = "SHDC"
    layout = [
        [rank + suits[(r + c) % 4] for c, rank in enumerate(row)] for r, row in enumerate(cards)
    ]
    response = http.post(f"/variants/{variant}/score", json={"cards": layout})
    assert response.status_code == 200, response.text
    assert response.json()["total"] == total


def test_the_scorer_scores_basketball_groups_and_shedding_cards(http: httpx.Client) -> None:
    layout = [["9S", "9H", "9D", "2C", "3C"], ["4C", "5C", "6C", "AS", "AH"]]
    # three nines 40; 2+3+4+5+6 = 20; aces never group: 15 + 15
    assert http.post("/variants/basketball/score", json={"cards": layout}).json()["total"] == 90
    shed = http.post("/variants/tens-shedding/score", json={"cards": ["TS", "AS", "KD"]})
    assert shed.json()["total"] == 20 + 1 + 13


@pytest.mark.parametrize(
    ("variant", "body", "status", "code"),
    [
        ("golf", {"cards": ["AS", "2S"]}, 422, "invalid_request"),
        ("golf", {"cards": [["AS"], ["2S"]]}, 422, "illegal_position"),
        (
            "golf",
            {"cards": [["XX", "2S", "3S", "4S"], ["AS", "2S", "3S", "4S"]]},
            422,
            "invalid_request",
        ),
        ("tens-shedding", {"cards": [["AS"]]}, 422, "invalid_request"),
        ("tens-shedding", {"cards": ["JK"]}, 422, "card_not_available"),
        ("golf", {"layout": []}, 422, "invalid_request"),
        ("poker", {"cards": []}, 404, "variant_not_found"),
    ],
)
def test_the_scorer_refuses_a_malformed_layout(
    http: httpx.Client, variant: str, body: dict[str, object], status: int, code: str
) -> None:
    problem(http.post(f"/variants/{variant}/score", json=body), status, code)


def test_health_ready_and_metrics(http: httpx.Client) -> None:
    assert http.get("/health").json() == {"status": "ok"}
    ready = http.get("/ready").json()
    assert ready == {"status": "ok", "store": "PostgresStore"}
    http.get("/variants")
    metrics = http.get("/metrics")
    assert metrics.headers["content-type"].startswith("text/plain")
    assert 'fairway_http_requests_total{method="GET",route="/variants",status="200"}' in (
        metrics.text
    )
    assert "fairway_http_request_seconds_bucket" in metrics.text


def test_a_request_id_is_echoed_or_made(http: httpx.Client) -> None:
    assert (
        http.get("/health", headers={"X-Request-ID": "abc-123"}).headers["x-request-id"]
        == "abc-123"
    )
    made = http.get("/health", headers={"X-Request-ID": "bad id with spaces"}).headers[
        "x-request-id"
    ]
    assert made != "bad id with spaces"
    assert len(made) == 32


def test_a_client_over_its_rate_limit_gets_429_with_retry_after(
    database_url: str, tmp_path: Path
) -> None:
    settings = Settings(
        database_url=database_url,
        data_dir=tmp_path,
        log_level="warning",
        log_format="json",
        rate_limit_per_second=1.0,
        rate_limit_burst=3,
    )
    with running_server(settings) as base, httpx.Client(base_url=base) as client:
        answers = [client.get("/variants/golf") for _ in range(5)]
        assert [a.status_code for a in answers[:3]] == [200, 200, 200]
        limited = answers[-1]
        problem(limited, 429, "rate_limited")
        assert int(limited.headers["retry-after"]) >= 1
        assert client.get("/health").status_code == 200, "health is never rate limited"


def test_each_variant_lists_the_options_its_engine_accepts(http: httpx.Client) -> None:
    for variant in http.get("/variants").json():
        seats = variant["min_players"]
        for option in ("turn_limit", "hands", "grab_min", "grab_max"):
            created = http.post(
                "/games",
                json={"variant": variant["name"], "seats": seats, "options": {option: 18}},
            )
            accepted = created.status_code == 201
            assert accepted == (option in variant["options"]), (variant["name"], option)
