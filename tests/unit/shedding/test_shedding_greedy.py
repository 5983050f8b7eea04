"""The greedy Tens-shedding bot: a legal action from its own view, chosen with sense."""

from __future__ import annotations

import random

import pytest
from shedding_given import RULES, dealt, table

from domain.shedding import GreedySheddingBot
from domain.shedding.state import SheddingState
from domain.simulate import play_game
from events.schema.shedding import ChooseStacks, PlayBlind, PlayCards

pytestmark = pytest.mark.unit

BOT = GreedySheddingBot()
UP = ["KS", "QH", "JD", "AC"]


def choice(state: SheddingState, seat: int = 0) -> object:
    legal = RULES.legal_actions(state, seat)
    chosen = BOT.choose(RULES.view(state, seat), legal, random.Random(0))
    assert any(RULES.covers(option, chosen) for option in legal)
    return chosen


def test_it_completes_four_of_a_rank_to_burn() -> None:
    state = table([["7S", "2C", "JD"], ["3S"]], face_up=[UP, UP], pile=["7D", "7C", "7H"])
    assert choice(state) == PlayCards(hand=("7S",))


def test_it_sheds_the_highest_rank_at_or_below_the_current_one_and_all_of_it() -> None:
    state = table([["4S", "8C", "8D", "JD"], ["3S"]], face_up=[["8S", *UP[1:]], UP], pile=["9H"])
    assert choice(state) == PlayCards(hand=("8C", "8D"), stacks=(0,))


def test_it_burns_a_big_pile_with_a_ten() -> None:
    pile = ["2H", "3H", "4H", "5H", "6H", "7H", "8H"]
    state = table([["TS", "5C"], ["3S"]], face_up=[UP, UP], pile=pile)
    assert choice(state) == PlayCards(hand=("TS",))


def test_it_keeps_a_ten_on_a_small_pile() -> None:
    state = table([["TS", "5C"], ["3S"]], face_up=[UP, UP], pile=["9H"])
    assert choice(state) == PlayCards(hand=("5C",))


def test_it_avoids_playing_above_the_current_rank() -> None:
    state = table(
        [["QS", "2C"], ["3S"]],
        face_up=[["KS", None, "KD", "KC"], UP],
        face_down=[["QS", "4H", "QD", "QC"], ["QS"] * 4],
        pile=["AH"],
    )
    # Only higher cards in hand: the blind card is a better gamble than a sure pick-up.
    assert choice(state) == PlayBlind(1)


def test_it_chooses_face_up_stack_cards_among_the_legal_choices() -> None:
    chosen = choice(dealt(2), 0)
    assert isinstance(chosen, ChooseStacks)
    assert not any(card[0] == "T" for card in chosen.cards)


def test_greedy_bots_finish_games_of_every_size() -> None:
    for players in range(2, 11):
        record = play_game(RULES, players, [BOT] * players, bytes([players]), random.Random(1))
        assert max(record.totals) >= 100
