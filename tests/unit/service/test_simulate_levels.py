"""`fairway simulate` takes every bot level, the strong one included, and names the levels
when given one it does not know."""

from __future__ import annotations

import pytest

from domain.variants import BOT_KINDS
from service.cli.commands import main
from service.cli.simulate import simulate

pytestmark = pytest.mark.unit


def test_the_levels_are_random_greedy_and_strong() -> None:
    assert BOT_KINDS == ("random", "greedy", "strong")


@pytest.mark.parametrize("variant", ["basketball", "tens-shedding"])
def test_simulate_seats_strong_bots_beside_greedy_ones(variant: str) -> None:
    summary = simulate(variant, 2, 1, 5, ["strong", "greedy"])
    assert summary["seats"] == ["strong", "greedy"]
    assert set(summary["wins"]) == {"strong", "greedy"}
    assert sum(summary["wins"].values()) == pytest.approx(1)


def test_an_unknown_level_is_refused_naming_the_levels(capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["simulate", "--variant", "golf", "--players", "2", "--bots", "strongest"])
    assert code == 2
    error = capsys.readouterr().err
    assert "strongest" in error
    assert "random, greedy, strong" in error
