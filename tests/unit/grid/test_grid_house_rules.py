"""A house variant costs a rules record, not code."""

from __future__ import annotations

import random

import msgspec
import pytest
from grid_helpers import seed
from msgspec.structs import replace

from domain.bots.base import RandomBot
from domain.grid import BASKETBALL_RULES, GOLF_RULES, HANG_TEN_RULES, GridGame, GridRules
from domain.grid.rules import DeckSize
from events.schema.common import Act, DealHand, GameOptions

pytestmark = pytest.mark.unit


def play_out(game: GridGame, players: int) -> tuple[int, ...]:
    rng, bot = random.Random(1), RandomBot()
    state = game.initial_state(players, GameOptions())
    while (status := game.status(state)).phase != "game_over":
        if status.phase == "awaiting_deal":
            command: object = DealHand(seed(status.hand + 1))
        else:
            who = status.to_act[0]
            legal = game.legal_actions(state, who)
            command = Act(who, bot.choose(game.view(state, who), legal, rng))
        for event in game.decide(state, command):
            state = game.evolve(state, event)
    return state.totals


def test_a_house_variant_is_a_new_rules_record() -> None:
    wide_golf = replace(
        GOLF_RULES, name="wide-golf", title="Wide Golf", columns=5, scoring="hang-ten", hands=3
    )
    game = GridGame(wide_golf)
    assert (game.name, game.min_players, game.max_players) == ("wide-golf", 2, 8)
    assert len(play_out(game, 3)) == 3


def test_a_house_basketball_where_the_highest_wins_over_three_hands() -> None:
    game = GridGame(replace(BASKETBALL_RULES, name="bb3", hands=3))
    assert len(play_out(game, 2)) == 2


def test_a_rules_record_can_be_read_from_json() -> None:
    text = msgspec.json.encode(replace(HANG_TEN_RULES, name="hang-five", hands=5))
    rules = msgspec.json.decode(text, type=GridRules)
    assert GridGame(rules).initial_state(4, GameOptions()).hands == 5


@pytest.mark.parametrize(
    ("change", "complaint"),
    [
        ({"piles": "own"}, "needs a shared pile"),
        ({"draw_from": ("stock", "discard", "pile")}, "needs own piles"),
        ({"draw_from": ("discard",)}, "the stock is always a draw source"),
        ({"decks": (DeckSize(4, 2, 4),)}, "cover every player count"),
        ({"columns": 6}, "1 to 5 columns"),
        ({"hands": None}, "a game needs"),
        ({"decks": (DeckSize(8, 1),)}, "too few"),
    ],
)
def test_a_record_whose_parts_do_not_fit_is_refused(
    change: dict[str, object], complaint: str
) -> None:
    with pytest.raises(ValueError, match=complaint):
        GridGame(replace(GOLF_RULES, **change))
