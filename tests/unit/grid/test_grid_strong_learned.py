"""The learned correction to the strong bot's Basketball price: its features count what they
say, and the bot's price is the look-ahead's less exactly the table's correction."""

from __future__ import annotations

import pytest
from grid_helpers import given

from domain.grid import BASKETBALL, strong_learned
from domain.grid.strong import BASKETBALL_LOOK_AHEAD, Plan
from domain.grid.strong_eval import Knowledge
from domain.grid.strong_learned import correction, features
from domain.grid.strong_outlook import basketball_outlook, basketball_parts

pytestmark = pytest.mark.unit


def knowledge(odds: dict[str, float]) -> Knowledge:
    know = Knowledge(BASKETBALL.view(given(BASKETBALL, 4, to_play=0), 0))
    know.odds = odds
    know.pair_odds = sum(p * p for p in odds.values())
    return know


LAYOUT = ["3", "3", "9", "K", None, "2", "7", "7", None, None]
"""A pair of 3s and of 7s, a single 9, 2 and king; three unseen cards."""


def test_the_features_count_the_layout_as_the_seat_knows_it() -> None:
    know = knowledge({"2": 0.5, "9": 0.25, "K": 0.25})
    # Face down: the peeked 2 (at 5), a peeked 7 (at 7), the unseen cards at 4 and 8; the
    # unseen card at 9 was turned up by this choice (it no longer counts as face down).
    unseen, gain, saving, pair, grow, low, pairs = features(know, LAYOUT, [4, 5, 7, 8], 1.5)
    assert unseen == 2
    # The 2 adds 2: a 9 gains 7, a king 23; the 7 of the pair adds 25 - 7 = 18: a king 7.
    assert gain == pytest.approx((0.25 * 7 + 0.25 * 23) + 0.25 * 7)
    assert saving == 1.5
    # Singles that may group: 2 (odds 0.5) and 9 (0.25), not the king; times 3 unknown.
    assert pair == pytest.approx(0.75 * 3)
    # Pairs that may grow: 3s and 7s, neither among the odds.
    assert grow == 0.0
    # Peeked and adding at most 6 points: the 2 only.
    assert low == 1
    # Three unknown cards, three ways to pair two, each 0.25 + 0.0625 + 0.0625.
    assert pairs == pytest.approx(3 * 0.375)


def test_the_correction_is_the_table_row_for_the_turns_left_times_the_features(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(strong_learned, "WEIGHTS", {2: (1.0, 0.0, 2.0, 0, 0, -1.0, 0)})
    assert correction(2, (3.0, 9.0, 0.5, 7.0, 7.0, 2.0, 7.0)) == 3.0 + 1.0 - 2.0
    assert correction(3, (3.0, 9.0, 0.5, 7.0, 7.0, 2.0, 7.0)) == 0.0


def test_the_bot_prices_a_layout_at_the_look_ahead_less_the_correction(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    plan = Plan(BASKETBALL.view(given(BASKETBALL, 4, to_play=0), 0))
    plan.looking = True
    open_ = [4, 5, 7, 8]
    monkeypatch.setattr(strong_learned, "WEIGHTS", {})
    plain = plan.cost(LAYOUT, open_)
    assert plain == pytest.approx(
        basketball_outlook(plan.know, LAYOUT, open_, BASKETBALL_LOOK_AHEAD)
    )
    weights = (0.5, -1.0, 2.0, 3.0, -4.0, 5.0, 6.0)
    monkeypatch.setattr(strong_learned, "WEIGHTS", {4: weights})
    _, saving = basketball_parts(plan.know, LAYOUT, open_)
    feats = features(plan.know, LAYOUT, open_, saving)
    assert any(feats)
    assert plan.cost(LAYOUT, open_) == pytest.approx(plain - correction(4, feats))
    monkeypatch.setattr(strong_learned, "BASKETBALL_LEARNED", 0.0)
    assert plan.cost(LAYOUT, open_) == pytest.approx(plain)
