"""Rules common to every grid game: the empty stock, the turn limit, the game's phases, ties."""

from __future__ import annotations

import pytest
from grid_helpers import (
    SEED,
    act,
    all_up,
    dealt,
    first_legal_until,
    given,
    rejects,
    started,
    types,
)
from msgspec.structs import replace

from domain.errors import RuleViolation
from domain.grid import BASKETBALL, GOLF, HANG_TEN, TENS, GridGame, GridState
from domain.shuffle import Stream
from events.schema.common import Act, DealHand, GameEnded, GameOptions, HandEnded
from events.schema.grid import CardDrawn, Discard, Draw, Replace, StockReshuffled
from events.schema.shedding import PlayBlind

pytestmark = pytest.mark.unit

GAMES = [HANG_TEN, TENS, GOLF, BASKETBALL]


# ---- the empty stock -------------------------------------------------------------------------


def test_an_empty_stock_is_rebuilt_from_every_discard_pile_but_its_top() -> None:
    state = given(
        HANG_TEN, 4, to_play=0, stock="", piles={0: "2C 3C", 1: "4C", 2: "5C 6C 7C"}, centre="KH"
    )
    after, events = act(HANG_TEN, state, 0, Draw("stock"))
    assert events[0] == StockReshuffled(3)
    expected, stream = Stream(bytes.fromhex(SEED), state.stream_position).shuffled(
        ("2C", "5C", "6C")
    )
    assert events[1] == CardDrawn(0, "stock", None, expected[0])
    assert after.stock[after.top :] == expected[1:]
    assert after.piles == (("3C",), ("4C",), ("7C",), ())
    assert after.centre == "KH"
    assert after.stream_position == stream.position


def test_the_shared_discard_pile_keeps_its_top_card_when_the_stock_is_rebuilt() -> None:
    state = given(GOLF, 2, to_play=0, stock="", piles={0: "2C 3C 4C"}, setup_left=(0, 0))
    state = replace(state, step="draw")
    after, events = act(GOLF, state, 0, Draw("stock"))
    assert types(events) == ["StockReshuffled", "CardDrawn"]
    assert after.piles == (("4C",),)
    assert after.stock_size == 1


def test_with_nothing_to_gather_the_hand_ends_at_once_as_it_stands() -> None:
    state = given(BASKETBALL, 2, to_play=0, stock="", piles={0: "2C"})
    _, events = act(BASKETBALL, state, 0, Draw("stock"))
    assert types(events) == ["LayoutsRevealed", "HandEnded", "GameEnded"]
    ended = events[1]
    assert ended.reason == "stock_exhausted"
    assert ended.scores == tuple(
        BASKETBALL.score([list(lay[:5]), list(lay[5:])]).total for lay in state.layouts
    )


# ---- the turn limit --------------------------------------------------------------------------


@pytest.mark.parametrize("game", GAMES, ids=lambda g: g.name)
def test_the_turn_limit_is_sixty_turns_each_unless_the_options_say_otherwise(
    game: GridGame,
) -> None:
    assert started(game, 4).turn_limit == 60
    assert started(game, 4, turn_limit=7).turn_limit == 7


def test_a_hand_ends_at_once_when_every_player_has_had_the_turn_limit() -> None:
    state = given(HANG_TEN, 4, to_play=3, turns=(2, 2, 2, 1), options={"turn_limit": 2})
    _, events = act(HANG_TEN, state, 3, Draw("stock"), Discard())
    assert types(events)[-3:] == ["TurnEnded", "LayoutsRevealed", "HandEnded"]
    assert events[-1].reason == "turn_limit"


def test_the_turn_limit_waits_for_every_player() -> None:
    state = given(HANG_TEN, 4, to_play=2, turns=(2, 2, 1, 1), options={"turn_limit": 2})
    state, events = act(HANG_TEN, state, 2, Draw("stock"), Discard())
    assert types(events)[-1] == "TurnEnded"
    assert state.to_play == 3


def test_once_a_player_has_gone_out_the_final_turns_are_played_past_the_turn_limit() -> None:
    # Given seat 0 went out and every player has had the turn limit
    state = given(HANG_TEN, 4, to_play=2, went_out=0, turns=(3, 3, 2, 2), options={"turn_limit": 2})
    # When seat 2 takes its final turn
    state, events = act(HANG_TEN, state, 2, Draw("stock"), Discard())
    # Then seat 3 still has its final turn, and the hand ends after it because seat 0 went out
    assert types(events)[-1] == "TurnEnded"
    assert state.to_play == 3
    _, events = act(HANG_TEN, state, 3, Draw("stock"), Discard())
    assert isinstance(events[-1], HandEnded)
    assert events[-1].reason == "went_out"


def test_going_out_on_the_turn_that_reaches_the_limit_still_owes_the_final_turns() -> None:
    # Given the last seat to reach the turn limit is about to turn its last card face up
    layout = "AS 2S 3S 4S 5S / 6S 7S 8S 9S TS"
    state = given(
        HANG_TEN,
        4,
        layouts={3: layout},
        face_up={3: all_up() & ~1},
        stock="KD",
        to_play=3,
        turns=(2, 2, 2, 1),
        options={"turn_limit": 2},
    )
    # When it goes out
    state, events = act(HANG_TEN, state, 3, Draw("stock"), Replace(0, 0))
    # Then every other player still has a final turn: the hand goes on
    assert types(events)[-2:] == ["PlayerWentOut", "TurnEnded"]
    assert state.phase == "playing"
    assert state.to_play == 0


# ---- the game --------------------------------------------------------------------------------


@pytest.mark.parametrize(("game", "hands"), [(HANG_TEN, 10), (GOLF, 9), (BASKETBALL, 1)])
def test_a_game_has_a_fixed_number_of_hands_the_options_may_change(
    game: GridGame, hands: int
) -> None:
    assert started(game, 4).hands == hands
    assert started(game, 4, hands=2).hands == 2
    state = first_legal_until(game, dealt(game, 4, turn_limit=1, hands=2), ("game_over",))
    assert state.hand == 2


def test_tens_has_no_fixed_length_unless_the_options_set_one() -> None:
    assert started(TENS, 3).hands is None
    state = first_legal_until(TENS, dealt(TENS, 3, turn_limit=1, hands=2), ("game_over",))
    assert state.hand == 2


def test_players_with_equal_totals_share_the_win() -> None:
    state = given(GOLF, 3, to_play=2, went_out=0, hand=9, setup_left=(0, 0, 0), step="draw")
    same = ("AS", "2S", "3S", "4S", "5S", "6S", "7S", "8S")
    state = replace(state, layouts=(same, same, ("JK", *same[1:])), stock=("AS",), top=0)
    _, events = act(GOLF, state, 2, Draw("stock"), Replace(0, 0))
    assert isinstance(events[-1], GameEnded)
    assert events[-1].winners == (0, 1, 2)


def test_hand_ended_reveals_the_seed_and_carries_the_scores_and_totals() -> None:
    state = given(HANG_TEN, 4, to_play=3, went_out=0, totals=(5, 6, 7, 8))
    _, events = act(HANG_TEN, state, 3, Draw("stock"), Discard())
    ended = events[-1]
    assert isinstance(ended, HandEnded)
    assert ended.seed == SEED
    assert ended.totals == tuple(t + s for t, s in zip((5, 6, 7, 8), ended.scores, strict=True))


def test_after_a_hand_a_fresh_deal_is_awaited() -> None:
    state = first_legal_until(GOLF, dealt(GOLF, 2, turn_limit=1), ("awaiting_deal",))
    status = GOLF.status(state)
    assert (status.phase, status.hand, status.to_act) == ("awaiting_deal", 1, ())
    assert GOLF.legal_actions(state, 0) == ()


# ---- the phases ------------------------------------------------------------------------------


@pytest.mark.parametrize("game", GAMES, ids=lambda g: g.name)
def test_nothing_is_played_before_the_first_deal(game: GridGame) -> None:
    state = started(game, 4)
    assert game.status(state).phase == "awaiting_deal"
    rejects(game, state, Act(0, Draw("stock")), "game_not_started")


@pytest.mark.parametrize("game", GAMES, ids=lambda g: g.name)
def test_nothing_is_played_between_hands(game: GridGame) -> None:
    state = replace(dealt(game, 4), phase="awaiting_deal")
    rejects(game, state, Act(0, Draw("stock")), "hand_over")


@pytest.mark.parametrize("game", GAMES, ids=lambda g: g.name)
def test_nothing_is_played_or_dealt_after_the_game(game: GridGame) -> None:
    state = first_legal_until(game, dealt(game, 4, turn_limit=1, hands=1), ("game_over",))
    rejects(game, state, Act(0, Draw("stock")), "game_over")
    rejects(game, state, DealHand(SEED), "game_over")


@pytest.mark.parametrize("game", GAMES, ids=lambda g: g.name)
def test_a_seat_outside_the_game_is_refused(game: GridGame) -> None:
    state = dealt(game, 4)
    rejects(game, state, Act(4, Draw("stock")), "invalid_seat")
    rejects(game, state, Act(-1, Draw("stock")), "invalid_seat")


@pytest.mark.parametrize("game", GAMES, ids=lambda g: g.name)
def test_an_action_of_another_game_is_unknown(game: GridGame) -> None:
    rejects(game, dealt(game, 4), Act(0, PlayBlind(0)), "unknown_action")


@pytest.mark.parametrize("game", GAMES, ids=lambda g: g.name)
def test_player_counts_outside_the_variants_range_are_refused(game: GridGame) -> None:
    for players in (game.min_players - 1, game.max_players + 1):
        with pytest.raises(RuleViolation) as caught:
            game.initial_state(players, GameOptions())
        assert caught.value.code == "invalid_config"


def test_shedding_options_are_refused() -> None:
    with pytest.raises(RuleViolation) as caught:
        GOLF.initial_state(2, GameOptions(grab_min=16))
    assert caught.value.code == "invalid_config"


# ---- the turn --------------------------------------------------------------------------------


def seat_0_to_draw(game: GridGame) -> GridState:
    return given(game, 4, to_play=0, setup_left=(0, 0, 0, 0), step="draw")


@pytest.mark.parametrize("game", GAMES, ids=lambda g: g.name)
def test_only_the_player_to_play_draws_or_places(game: GridGame) -> None:
    state = seat_0_to_draw(game)
    rejects(game, state, Act(1, Draw("stock")), "not_your_turn")
    state, _ = act(game, state, 0, Draw("stock"))
    rejects(game, state, Act(2, Replace(0, 0)), "not_your_turn")


@pytest.mark.parametrize("game", GAMES, ids=lambda g: g.name)
def test_a_turn_is_draw_then_place(game: GridGame) -> None:
    state = seat_0_to_draw(game)
    rejects(game, state, Act(0, Replace(0, 0)), "wrong_phase")
    state, _ = act(game, state, 0, Draw("stock"))
    rejects(game, state, Act(0, Draw("stock")), "wrong_phase")
