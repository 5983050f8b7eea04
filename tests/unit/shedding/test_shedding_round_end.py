"""Tens-shedding, the end of a round and of the game: going out, scoring, the turn limit,
the game's end at 100."""

from __future__ import annotations

import pytest
from shedding_given import RULES, SEED, live, run, seed, table

from domain.errors import RuleViolation
from domain.shedding.scoring import ScoreLine
from events.schema.common import Act, DealHand, GameEnded, GameOptions, HandDealt, HandEnded
from events.schema.shedding import (
    BlindCardTurned,
    CardsPlayed,
    EndPlay,
    PlayBlind,
    PlayCards,
    PlayPassed,
)

pytestmark = pytest.mark.unit

NONE4: list[str | None] = [None, None, None, None]
UP = ["KS", "KH", "KD", "KC"]
DOWN = ["QS", "QH", "QD", "QC"]


CARDS = ["AS", "2S", "5H", "9D", "TC", "JS", "QH", "KD"]


def test_remaining_cards_score_a_1_two_to_nine_face_value_j_11_q_12_k_13_t_20() -> None:
    assert [RULES.score([card]).total for card in CARDS] == [
        1,
        2,
        5,
        9,
        20,
        11,
        12,
        13,
    ]


def test_the_score_breaks_down_by_rank() -> None:
    scored = RULES.score(["KD", "2S", "KC", "TH"])
    assert scored.total == 48
    assert scored.breakdown == (
        ScoreLine("2", 2, 1, 2),
        ScoreLine("T", 20, 1, 20),
        ScoreLine("K", 13, 2, 26),
    )


def test_the_round_ends_the_moment_a_player_has_no_cards() -> None:
    # The last card is higher than the pile: going out comes before any pick-up.
    state = table(
        [["9S"], ["3S", "4D"], ["AH"]],
        face_up=[NONE4, UP, UP],
        face_down=[NONE4, DOWN, DOWN],
        pile=["2C"],
    )
    events, after = run(state, Act(0, PlayCards(hand=("9S",))))
    assert events[0] == CardsPlayed(0, ("9S",))
    assert isinstance(events[1], HandEnded)
    assert (events[1].hand, events[1].reason, events[1].seed) == (1, "went_out", SEED)
    assert live(after).pile == ("2C", "9S")
    assert live(after).players[0].hand == ()


def test_a_player_may_go_out_with_a_blind_card() -> None:
    state = table(
        [[], ["3S"]], face_up=[NONE4, UP], face_down=[[None, "JH", None, None], DOWN], pile=["2C"]
    )
    events, _ = run(state, Act(0, PlayBlind(1)))
    assert events[0] == BlindCardTurned(0, 1, "JH")
    assert isinstance(events[1], HandEnded)
    assert events[1].reason == "went_out"


def test_the_player_out_scores_0_the_others_hand_face_up_and_face_down_cards() -> None:
    state = table(
        [["9S"], ["3S", "4D"], []],
        face_up=[NONE4, [None, "KH", None, "AC"], [None, None, None, "JC"]],
        face_down=[NONE4, ["QS", None, "2D", None], [None, None, "TC", None]],
    )
    events, _ = run(state, Act(0, PlayCards(hand=("9S",))))
    ended = events[1]
    assert isinstance(ended, HandEnded)
    assert ended.scores == (0, 3 + 4 + 13 + 1 + 12 + 2, 11 + 20)


def test_a_grab_of_19_gives_minus_10_to_every_such_player_including_the_one_out() -> None:
    state = table(
        [["9S"], ["3S"], ["4S"]],
        face_up=[NONE4, NONE4, NONE4],
        face_down=[NONE4, NONE4, NONE4],
        grabs=[19, 19, 22],
    )
    events, _ = run(state, Act(0, PlayCards(hand=("9S",))))
    ended = events[1]
    assert isinstance(ended, HandEnded)
    assert ended.scores == (-10, 3 - 10, 4)


def test_scores_add_to_the_totals_and_the_next_round_awaits_a_deal() -> None:
    state = table(
        [["9S"], ["3S"]], face_up=[NONE4, NONE4], face_down=[NONE4, NONE4], totals=[40, 50]
    )
    events, after = run(state, Act(0, PlayCards(hand=("9S",))))
    assert events[1] == HandEnded(1, "went_out", SEED, (0, 3), (40, 53))
    assert len(events) == 2
    status = RULES.status(after)
    assert (status.phase, status.to_act, status.totals) == ("awaiting_deal", (), (40, 53))
    (dealt,) = RULES.decide(after, DealHand(seed(7)))
    assert isinstance(dealt, HandDealt)
    assert dealt.hand == 2


def test_the_game_ends_when_a_total_reaches_100_and_the_lowest_total_wins() -> None:
    state = table(
        [["9S"], ["3S"], ["KS"]],
        face_up=[NONE4] * 3,
        face_down=[NONE4] * 3,
        totals=[60, 97, 20],
    )
    events, after = run(state, Act(0, PlayCards(hand=("9S",))))
    assert events[1:] == (
        HandEnded(1, "went_out", SEED, (0, 3, 13), (60, 100, 33)),
        GameEnded((60, 100, 33), (2,)),
    )
    status = RULES.status(after)
    assert (status.phase, status.winners) == ("game_over", (2,))


def test_a_total_of_99_does_not_end_the_game() -> None:
    state = table([["9S"], ["2S"]], face_up=[NONE4] * 2, face_down=[NONE4] * 2, totals=[0, 97])
    events, _ = run(state, Act(0, PlayCards(hand=("9S",))))
    assert len(events) == 2


def test_players_with_equal_lowest_totals_share_the_win() -> None:
    state = table(
        [["9S"], ["5S"], ["AS"]],
        face_up=[NONE4] * 3,
        face_down=[NONE4] * 3,
        totals=[34, 29, 150],
    )
    events, _ = run(state, Act(0, PlayCards(hand=("9S",))))
    assert events[-1] == GameEnded((34, 34, 151), (0, 1))


def test_the_turn_limit_ends_the_round_as_it_stands() -> None:
    state = table([["4S", "2C"], ["3S", "3D"]], turn_limit=2)
    _, after_one = run(state, Act(0, PlayCards(hand=("4S",))))
    events, after = run(after_one, Act(1, PlayCards(hand=("3S",))))
    assert events[:2] == (CardsPlayed(1, ("3S",)), PlayPassed(1, 0))
    ended = events[2]
    assert isinstance(ended, HandEnded)
    assert ended.reason == "turn_limit"
    # Nobody went out: everyone scores their remaining cards (the pile scores for no one).
    filler = 13 * 4 + 12 * 4
    assert ended.scores == (2 + filler, 3 + filler)
    assert RULES.status(after).phase == "game_over"


def test_a_blind_play_counts_once_against_the_turn_limit() -> None:
    state = table(
        [["2C"], ["3S"]],
        face_up=[["KS", None, "KD", "KC"], UP],
        face_down=[["QS", "4H", "QD", "QC"], DOWN],
        pile=["9S"],
        turn_limit=1,
    )
    events, turned = run(state, Act(0, PlayBlind(1)))
    assert len(events) == 1
    assert live(turned).plays == 0
    events, _ = run(turned, Act(0, EndPlay()))
    assert events[0] == PlayPassed(0, 1)
    assert isinstance(events[1], HandEnded)


def test_the_turn_limit_is_2000_plays_by_default() -> None:
    assert RULES.initial_state(3, GameOptions()).rules.turn_limit == 2000
    assert RULES.initial_state(3, GameOptions(turn_limit=50)).rules.turn_limit == 50


def test_only_cards_of_the_game_can_be_scored() -> None:
    for card in ("JK", "XX", "5"):
        with pytest.raises(RuleViolation) as raised:
            RULES.score([card])
        assert raised.value.code == "card_not_available"


def test_the_scorer_refuses_more_copies_of_a_card_than_four_decks_hold() -> None:
    assert RULES.score(["KD"] * 4).total == 4 * 13
    with pytest.raises(RuleViolation, match="one KD too many") as refused:
        RULES.score(["AS", "KD", "KD", "KD", "KD", "KD"])
    assert refused.value.code == "card_not_available"
