"""Basketball's exact continuation: the seat's own remaining turns by expectimax, checked by
hand on small cases and against a plain search over whole layouts scored by the rulebook."""

from __future__ import annotations

import random

import pytest
from grid_helpers import given, mask
from msgspec.structs import replace

from domain.grid import BASKETBALL, GridState
from domain.grid.basketball_dp import Continuation
from domain.grid.scoring import score_basketball
from domain.grid.strong import StrongGridBot
from events.schema.grid import Discard, Flip, Replace

pytestmark = pytest.mark.unit


def solve(
    odds: dict[str, float], face_up: str, peeked: str, unseen: int, follow: str | None = None
) -> float:
    up, seen = face_up.split(), peeked.split()
    dp = Continuation(odds, up, seen, None if follow is None else follow.split())
    return dp.value(tuple(sorted(seen)), unseen, dp.counts(up))


def test_the_last_unseen_card_takes_the_draw_only_when_it_beats_the_mean() -> None:
    # A 2 (2 points) is discarded for the unseen card (mean 13.5); a king is kept.
    assert solve({"2": 0.5, "K": 0.5}, "", "", 1) == 0.5 * 13.5 + 0.5 * 25


def test_the_last_peeked_card_is_turned_up_unless_the_draw_beats_it() -> None:
    assert solve({"2": 0.5, "K": 0.5}, "", "5", 0) == 0.5 * 5 + 0.5 * 25


def test_a_peeked_card_that_groups_with_a_face_up_one_is_kept() -> None:
    # A 3 face up and a 3 peeked: the pair scores 25 whatever the draw (a 9 adds only 12).
    assert solve({"3": 0.5, "9": 0.5}, "3", "3", 0) == 25


def test_two_turns_a_peeked_king_is_turned_up_when_the_draw_is_poor() -> None:
    # A 2 drawn: turn up the king (25), then the last draw on the unseen card (19.25).
    # A king drawn: keep it on the unseen card, then the peeked king stays (25 + 25).
    assert solve({"2": 0.5, "K": 0.5}, "", "K", 1) == 0.5 * 44.25 + 0.5 * 50


def test_a_pair_is_worth_waiting_for_when_the_odds_favour_it() -> None:
    # A 2 face up, one unseen card, draws of 2 or 8: a 2 makes the pair (25, i.e. +23),
    # an 8 is kept (8 > the unseen card's 2 * 0.5 + 8 * 0.5 ... but the unseen card may be
    # a 2 as well: E[unseen] = 0.5 * 23 + 0.5 * 8 = 15.5 > 8, so the 8 is discarded).
    assert solve({"2": 0.5, "8": 0.5}, "2", "", 1) == 2 + 0.5 * 23 + 0.5 * 15.5


def brute(
    face: tuple[str, ...], peeked: tuple[str, ...], unseen: int, odds: dict[str, float]
) -> float:
    """The same game searched over whole layouts, scored by the rulebook's scorer."""
    if not peeked and not unseen:
        cards: list[str | None] = [f"{r}S" for r in face]
        cards += [None] * (10 - len(cards))
        return float(score_basketball(cards, 5).total)
    turn = max(
        (
            brute((*face, r), peeked[:i] + peeked[i + 1 :], unseen, odds)
            for i, r in enumerate(peeked)
        ),
        default=float("-inf"),
    )
    if unseen:
        turn = max(
            turn, sum(p * brute((*face, y), peeked, unseen - 1, odds) for y, p in odds.items())
        )
    total = 0.0
    for x, p in odds.items():
        best = turn
        for i in range(len(peeked)):
            best = max(best, brute((*face, x), peeked[:i] + peeked[i + 1 :], unseen, odds))
        if unseen:
            best = max(best, brute((*face, x), peeked, unseen - 1, odds))
        total += p * best
    return total


def test_following_every_rank_the_continuation_is_the_exact_expectimax() -> None:
    rng = random.Random(18)
    ranks = ["2", "3", "5", "9", "T", "A", "K"]
    for _ in range(40):
        pool = rng.sample(ranks, 4)
        weights = [rng.randint(1, 4) for _ in pool]
        odds = {r: w / sum(weights) for r, w in zip(pool, weights, strict=True)}
        face = tuple(rng.choices(ranks, k=rng.randint(0, 3)))
        peeked = tuple(rng.choices(ranks, k=rng.randint(0, 2)))
        unseen = rng.randint(0, 3 - len(peeked)) if len(peeked) < 3 else 0
        if not peeked and not unseen:
            unseen = 1
        got = solve(odds, " ".join(face), " ".join(peeked), unseen, follow=" ".join(ranks))
        # The face-up cards no later card can join (aces, kings, ranks not in the odds) are
        # a constant the continuation leaves out; the rulebook counts them.
        dp = Continuation(odds, face, peeked, ranks)
        fixed = brute(tuple(r for r in face if r not in dp.tracked), (), 0, odds)
        assert got + fixed == pytest.approx(brute(face, peeked, unseen, odds)), (
            face,
            peeked,
            unseen,
            odds,
        )


def test_an_untracked_rank_counts_its_single_value() -> None:
    # Following no rank, two 2s drawn count 2 each, not the pair's 25.
    assert solve({"2": 1.0}, "", "", 2, follow="") == 4
    assert solve({"2": 1.0}, "", "", 2) == 4  # nothing face up or peeked: nothing followed
    assert solve({"2": 1.0}, "", "", 2, follow="2") == 25


def basketball_state(layout: str, down: int, peeked: int, drawn: str | None = None) -> GridState:
    """Seat 0 to play, its cards as given, `down` the face-down ones, `peeked` those it knows."""
    state = given(BASKETBALL, 4, layouts={0: layout}, face_up={0: ALL & ~down}, to_play=0)
    state = replace(state, peeked=(peeked, 0, 0, 0))
    if drawn is not None:
        state = replace(state, drawn=drawn, drawn_from="stock", step="place")
    return state


ALL = mask(*[(r, c) for r in (0, 1) for c in range(5)])


def choice(state: GridState) -> object:
    legal = BASKETBALL.legal_actions(state, 0)
    return StrongGridBot().choose(BASKETBALL.view(state, 0), legal, random.Random(0))


def test_the_bot_swaps_out_a_low_peeked_card_and_keeps_the_one_that_pairs() -> None:
    # Face down: a peeked 2 at (0, 0), a peeked 6 at (0, 1) pairing the face-up 6 (19 more);
    # face up, kings and aces, which never group. The queen on the 2, then the 6 turned up
    # or beaten by the last draw: 10 + 19 at least; the 6 turned up now leaves the last
    # draw against the 2 (about 8 on average): 27.
    layout = "2S 6S KH KD KC / KS AH AD AC 6H"
    down = peeked = mask((0, 0), (0, 1))
    assert choice(basketball_state(layout, down, peeked, drawn="QS")) == Replace(0, 0)
    # The last ace too: the 2 gives way, never the 6.
    assert choice(basketball_state(layout, down, peeked, drawn="AS")) == Replace(0, 0)


def test_the_bot_discards_a_poor_draw_and_turns_up_the_pair() -> None:
    layout = "2S 6S KH KD KC / KS AH AD AC 6H"
    down = peeked = mask((0, 0), (0, 1))
    state = basketball_state(layout, down, peeked, drawn="2D")
    # A 2 on the 6 would lose the pair, on the 2 it gains nothing: discard, turn up the 6
    # (19) and keep the last draw for the 2.
    assert choice(state) == Discard()
    flipped = replace(state, drawn=None, drawn_from=None, step="flip")
    assert choice(flipped) == Flip(0, 1)


def test_a_rank_the_odds_no_longer_hold_still_grows_by_the_card_in_hand() -> None:
    # Two 5s face up, the last 5 in hand, a peeked queen: the 5 makes three (40), the
    # queen turned up adds 10 to the pair (35).
    dp = Continuation({"2": 1.0}, ["5", "5"], ["Q"])
    state = (("Q",), 0, dp.counts(["5", "5"]))
    assert dp.placed("5", state, "Q") == 40
    assert dp.turned(state, "Q") == 35


def test_a_pile_card_offered_is_taken_when_it_beats_the_stock(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from domain.grid import basketball_dp

    monkeypatch.setattr(basketball_dp, "PILE", 1.0)
    # The stock alone is worth 19.25 on the last unseen card; a pile king (half the time)
    # is taken for 25, a pile 2 left for the stock.
    assert solve({"2": 0.5, "K": 0.5}, "", "", 1) == 0.5 * 25 + 0.5 * 19.25
