"""The greedy bot: it acts on its seat's view and the legal actions, and plays to win."""

from __future__ import annotations

import random

import pytest
from grid_helpers import act, all_up, given, mask, seed

from domain.bots.base import Bot, RandomBot
from domain.grid import BASKETBALL, GOLF, HANG_TEN, TENS, GreedyGridBot, GridGame
from domain.grid.greedy import average_card
from events.schema.common import Act, DealHand, GameOptions
from events.schema.grid import Discard, Draw, EndTurn, GoOut, Peek, Replace

pytestmark = pytest.mark.unit

GAMES = [HANG_TEN, TENS, GOLF, BASKETBALL]


def play(game: GridGame, bots: list[Bot], game_seed: int, **options: int) -> tuple[int, ...]:
    """A whole game; every choice is checked against the legal actions."""
    rng = random.Random(game_seed)
    state = game.initial_state(len(bots), GameOptions(**options))
    while (status := game.status(state)).phase != "game_over":
        if status.phase == "awaiting_deal":
            command: object = DealHand(seed(game_seed * 100 + status.hand))
        else:
            who = status.to_act[rng.randrange(len(status.to_act))]
            legal = game.legal_actions(state, who)
            choice = bots[who].choose(game.view(state, who), legal, rng)
            assert choice in legal
            command = Act(who, choice)
        for event in game.decide(state, command):
            state = game.evolve(state, event)
    return state.winners


def test_the_greedy_bot_is_a_bot_of_kind_greedy() -> None:
    bot: Bot = GreedyGridBot()
    assert bot.kind == "greedy"


@pytest.mark.parametrize("game", GAMES, ids=lambda g: g.name)
def test_greedy_bots_play_whole_games_with_legal_actions_only(game: GridGame) -> None:
    assert play(game, [GreedyGridBot()] * game.max_players, 3, hands=2)


@pytest.mark.parametrize("game", GAMES, ids=lambda g: g.name)
def test_the_greedy_bot_beats_random_bots_most_of_the_time(game: GridGame) -> None:
    players = game.min_players
    bots: list[Bot] = [GreedyGridBot(), *[RandomBot()] * (players - 1)]
    wins = sum(0 in play(game, bots, n, hands=1) for n in range(10))
    assert wins >= 7


def test_an_unseen_card_is_worth_the_decks_average() -> None:
    assert average_card(HANG_TEN.rules, 4) == round((1 + 2 + 3 + 4 + 5 + 6 + 0 + 8 + 9 + 40) / 13)
    assert average_card(BASKETBALL.rules, 2) == round((15 + 44 + 30 + 25) / 13)


def test_it_peeks_when_it_may() -> None:
    state = given(BASKETBALL, 2, to_play=0)
    legal = BASKETBALL.legal_actions(state, 0)
    assert GreedyGridBot().choose(BASKETBALL.view(state, 0), legal, random.Random(0)) == Peek()


def test_it_takes_a_visible_card_that_completes_a_pair() -> None:
    state = given(
        GOLF,
        2,
        to_play=0,
        setup_left=(0, 0),
        step="draw",
        layouts={0: "QS 9S 9S 9S / 4S 9H 9D 9C"},
        face_up={0: mask((0, 0), (1, 0), columns=4)},
        piles={0: "QH"},
    )
    legal = GOLF.legal_actions(state, 0)
    assert GreedyGridBot().choose(GOLF.view(state, 0), legal, random.Random(0)) == Draw("discard")
    state, _ = act(GOLF, state, 0, Draw("discard"))
    legal = GOLF.legal_actions(state, 0)
    assert GreedyGridBot().choose(GOLF.view(state, 0), legal, random.Random(0)) == Replace(1, 0)


def test_it_discards_a_card_that_would_make_things_worse() -> None:
    state = given(
        HANG_TEN,
        4,
        to_play=0,
        layouts={0: "AS AS AS AS AS / AH AH AH AH AH"},
        face_up={0: all_up()},
        stock="KD",
    )
    state, _ = act(HANG_TEN, state, 0, Draw("stock"))
    legal = HANG_TEN.legal_actions(state, 0)
    assert GreedyGridBot().choose(HANG_TEN.view(state, 0), legal, random.Random(0)) == Discard()


def test_it_goes_out_only_when_it_expects_the_lowest_score() -> None:
    def finish(mine: str, theirs: str) -> object:
        state = given(
            GOLF,
            2,
            to_play=0,
            setup_left=(0, 0),
            step="finish",
            layouts={0: mine, 1: theirs},
            face_up={0: all_up(4) & ~mask((1, 3), columns=4), 1: all_up(4)},
        )
        legal = GOLF.legal_actions(state, 0)
        return GreedyGridBot().choose(GOLF.view(state, 0), legal, random.Random(0))

    assert finish("AS AS AS AS / AH AH AH 2S", "KS QS JS TS / 9S 8S 7S 6S") == GoOut()
    assert finish("KS QS JS TS / 9S 8S 7S 6S", "AS AS AS AS / AH AH AH 2S") == EndTurn()
