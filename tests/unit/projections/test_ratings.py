"""One game's rating update (projections/ratings.py, `rate`): who gains and who loses, ties,
high and low wins, a name at several seats, and what is not rated."""

from __future__ import annotations

from typing import Any

import pytest

from projections.base import IndexAdd, Put
from projections.ratings import LEADERBOARD, rate, rating_key


def ratings(writes: list[Any]) -> dict[str, dict[str, Any]]:
    return {w.doc["name"]: w.doc for w in writes if isinstance(w, Put)}


def test_the_winner_gains_and_the_last_loses_low_totals_winning_golf() -> None:
    after = ratings(rate("golf", ["Ada", "Bo", "Cy"], [10, 30, 20], {}))
    assert after["Ada"]["mu"] > 25 > after["Bo"]["mu"]
    assert after["Ada"]["mu"] > after["Cy"]["mu"] > after["Bo"]["mu"]
    assert all(doc["games"] == 1 for doc in after.values())
    assert all(doc["sigma"] < 25 / 3 for doc in after.values())


def test_high_totals_win_basketball() -> None:
    after = ratings(rate("basketball", ["Ada", "Bo"], [10, 30], {}))
    assert after["Bo"]["mu"] > 25 > after["Ada"]["mu"]


def test_equal_totals_share_a_place() -> None:
    after = ratings(rate("golf", ["Ada", "Bo", "Cy"], [10, 10, 40], {}))
    assert after["Ada"]["mu"] == after["Bo"]["mu"] > after["Cy"]["mu"]


def test_the_update_starts_from_the_stored_rating_and_counts_the_game() -> None:
    stored = {
        rating_key("Ada"): {"name": "Ada", "mu": 30.0, "sigma": 5.0, "ordinal": 15.0, "games": 4}
    }
    after = ratings(rate("golf", ["Ada", "Bo"], [10, 20], stored))
    assert after["Ada"]["games"] == 5
    newcomer = ratings(rate("golf", ["Ada", "Bo"], [10, 20], {}))["Ada"]
    # Surer of Ada (smaller sigma), the same win moves her less than a newcomer.
    assert 0 < after["Ada"]["mu"] - 30 < newcomer["mu"] - 25
    assert after["Bo"]["games"] == 1


def test_numbers_are_rounded_and_the_leaderboard_scores_minus_the_ordinal() -> None:
    writes = rate("golf", ["Ada", "Bo"], [10, 20], {})
    for doc in ratings(writes).values():
        for field in ("mu", "sigma", "ordinal"):
            assert round(doc[field], 6) == doc[field]
        assert doc["ordinal"] == round(doc["mu"] - 3 * doc["sigma"], 6)
    scores = {w.member: w.score for w in writes if isinstance(w, IndexAdd)}
    assert all(w.index == LEADERBOARD for w in writes if isinstance(w, IndexAdd))
    assert scores == {n: -d["ordinal"] for n, d in ratings(writes).items()}


def test_a_name_at_several_seats_is_rated_once_at_its_best_seat() -> None:
    twice = ratings(rate("golf", ["Ada", "Bo", "Ada"], [40, 20, 10], {}))
    once = ratings(rate("golf", ["Ada", "Bo"], [10, 20], {}))
    assert twice == once


@pytest.mark.parametrize(
    ("names", "totals"), [(["Ada"], [3]), (["Ada", "Ada"], [3, 4]), (["Ada", None], [1, 2])]
)
def test_a_game_with_fewer_than_two_names_is_not_rated(
    names: list[str | None], totals: list[int]
) -> None:
    assert rate("golf", names, totals, {}) == []


def test_the_same_game_rates_the_same_to_the_last_digit() -> None:
    assert rate("tens", ["Ada", "Bo", "Cy"], [5, 9, 9], {}) == rate(
        "tens", ["Ada", "Bo", "Cy"], [5, 9, 9], {}
    )
