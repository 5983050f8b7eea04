"""The strong bot's last Basketball turn is played for the win, not for points: behind a
total it cannot reach by keeping its card, it gambles on its face-down card; ahead, it
keeps the card that makes the win sure."""

from __future__ import annotations

import random
from typing import Any

import pytest
from grid_helpers import all_up, given, mask

from domain.grid import BASKETBALL
from domain.grid.strong import StrongGridBot
from domain.grid.strong_finish import total_of
from events.schema.grid import Discard, Replace

pytestmark = pytest.mark.unit

MINE = "2S 2H 2D 3S 3H / 3D 4S 4H 5S 8C"
"""Seat 0: 110 points up (three 2s, three 3s, two 4s, a 5); its last card (8C) face down."""
LOW = "2C 3C 4C 5C 6C / 7C 8S 9C TC JC"
"""64 points."""
PAIRS = "8H 9H 7H 6H 5H / 8D 9D 7D 6D 4D"
"""Four pairs, a 5 and a 4: 109 points."""


def last_turn(best_other: str) -> tuple[Any, tuple[Any, ...]]:
    """Seat 0 holds an ace drawn from the stock on its last turn; every other seat is face
    up, `best_other` the highest of them."""
    state = given(
        BASKETBALL,
        4,
        layouts={0: MINE, 1: best_other, 2: LOW, 3: PAIRS},
        face_up={0: all_up() & ~mask((1, 4)), 1: all_up(), 2: all_up(), 3: all_up()},
        peeked=(0, 0, 0, 0),
        to_play=0,
        step="place",
        drawn="AC",
        drawn_from="stock",
    )
    legal = tuple(BASKETBALL.legal_actions(state, 0))
    return BASKETBALL.view(state, 0), legal


def test_the_layouts_score_as_the_comments_say() -> None:
    assert total_of(["2", "2", "2", "3", "3", "3", "4", "4", "5"]) == 110
    assert total_of(["Q", "Q", "Q", "J", "J", "J", "T", "T", "A", "6"]) == 126
    assert total_of(["Q", "Q", "Q", "J", "J", "J", "T", "T", "9", "6"]) == 120


def test_behind_on_its_last_turn_it_gambles_on_its_face_down_card() -> None:
    # Keeping the ace makes 125, which loses to 126 for sure; a king turned up makes 135.
    view, legal = last_turn("QS QH QD JS JH / JD TS TH AS 6S")
    assert StrongGridBot().choose(view, legal, random.Random(0)) == Discard()


def test_ahead_on_its_last_turn_it_keeps_the_card_that_wins() -> None:
    # Keeping the ace makes 125 against 120 at best: a sure win. Priced on points, with a
    # face-down card's chance to be swapped later (there is no later), the bot would turn
    # its card up instead and might lose.
    view, legal = last_turn("QS QH QD JS JH / JD TS TH 9S 6S")
    assert StrongGridBot().choose(view, legal, random.Random(0)) == Replace(1, 4)
