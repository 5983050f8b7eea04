"""The tournament's decider: what each command causes and what it refuses, with its code."""

from __future__ import annotations

import random

import pytest

from domain.errors import RuleViolation
from domain.tournament.decide import (
    CloseRound,
    Create,
    Register,
    SetSeed,
    StartRound,
    Withdraw,
    decide,
    table_game_id,
)
from domain.tournament.seeds import round_seat_seed
from domain.tournament.standings import round_mean
from domain.tournament.state import Tournament
from events.schema.common import GameOptions
from events.schema.tournament import (
    PlayerRegistered,
    PlayerSeedSet,
    PlayerWithdrawn,
    RoundClosed,
    TournamentCreated,
    TournamentEnded,
)
from tests.support.tournament_runs import Run

pytestmark = pytest.mark.unit


def refused(run: Run, command: object, code: str) -> None:
    before = run.state
    with pytest.raises(RuleViolation) as caught:
        decide(run.state, command)
    assert caught.value.code == code
    assert run.state == before


def test_registering_withdrawing_and_seeding_are_events_of_the_players() -> None:
    run = Run(0)
    assert run.do(Register("ann", "h1")) == (PlayerRegistered("ann", "h1"),)
    refused(run, Register("ann", "h2"), "name_taken")
    assert run.do(SetSeed("ann", "dice")) == (PlayerSeedSet("ann", "dice"),)
    assert run.state.player("ann").seed == "dice"  # type: ignore[union-attr]
    assert run.do(Withdraw("ann")) == (PlayerWithdrawn("ann", 0),)
    refused(run, Withdraw("ann"), "player_withdrawn")
    refused(run, SetSeed("ann", "x"), "player_withdrawn")
    refused(run, Withdraw("bob"), "unknown_player")
    refused(run, SetSeed("bob", "x"), "unknown_player")


def test_a_bot_player_names_its_level_and_an_unknown_level_is_refused_naming_the_levels() -> None:
    run = Run(0)
    assert run.do(Register("robo", "", "greedy")) == (PlayerRegistered("robo", "", "greedy"),)
    assert run.state.player("robo").bot == "greedy"  # type: ignore[union-attr]
    refused(run, Register("other", "", "genius"), "unknown_bot_level")
    with pytest.raises(RuleViolation) as caught:
        decide(run.state, Register("other", "", "genius"))
    assert "(levels: random, greedy" in caught.value.message
    refused(run, Register("robo", "", "random"), "name_taken")


def test_registration_closes_when_round_one_starts_and_a_withdrawal_names_the_round() -> None:
    run = Run(8)
    run.start()
    refused(run, Register("late", "h"), "registration_closed")
    assert run.do(Withdraw("p03")) == (PlayerWithdrawn("p03", 1),)


def test_a_round_starts_when_none_is_in_play_and_the_tournament_ends_with_its_last() -> None:
    rng = random.Random(3)
    run = Run(8, rounds=2)
    refused(run, CloseRound(()), "no_round_in_play")
    run.start()
    refused(run, StartRound("t0"), "round_in_play")
    assert [type(e) for e in run.close(rng)] == [RoundClosed]
    run.start()
    assert [type(e) for e in run.close(rng)] == [RoundClosed, TournamentEnded]
    for command in (StartRound("t0"), Register("x", "h"), Withdraw("p00"), SetSeed("p00", "s")):
        refused(run, command, "tournament_over")


def test_too_few_players_for_a_table_start_no_round() -> None:
    run = Run(3)
    refused(run, StartRound("t0"), "not_enough_players")
    run = Run(5)
    run.do(Withdraw("p00"))
    run.do(Withdraw("p01"))
    refused(run, StartRound("t0"), "not_enough_players")


def test_a_round_closes_with_the_byes_scoring_the_round_mean_and_its_seed_revealed() -> None:
    run = Run(9, rounds=2)
    started = run.start()
    assert len(started.byes) == 1
    (closed,) = run.close(random.Random(5))
    totals = [t for result in closed.results for t in result.totals]
    assert closed.bye_score == round_mean(totals)
    assert closed.byes == started.byes
    assert closed.server_seed == run.state.chain().server_seed(1).hex()


def test_closing_needs_every_table_of_the_round() -> None:
    run = Run(8)
    run.start()
    with pytest.raises(ValueError, match="every table"):
        decide(run.state, CloseRound(()))


def test_each_table_has_its_derived_game_and_a_duplicate_round_one_seat_seed() -> None:
    run = Run(8, duplicate=True)
    run.do(SetSeed("p01", "my own"))
    run.do(Withdraw("p07"))
    run.do(Register("p08", "h"))
    started = run.start()
    assert [t.game_id for t in started.tables] == [table_game_id("t0", 1, n) for n in (1, 2)]
    assert len({t.game_id for t in started.tables}) == 2
    expected = tuple(
        (name, "my own" if name == "p01" else name)
        for name in sorted(f"p{i:02}" for i in range(9))
        if name != "p07"
    )
    assert started.seat_seeds_from == expected
    assert started.seat_seed == round_seat_seed(1, expected)


def test_invalid_tournaments_are_refused() -> None:
    with pytest.raises(RuleViolation) as caught:
        Run(0, table_size=9)  # Golf is for 2..8
    assert caught.value.code == "invalid_config"
    with pytest.raises(RuleViolation):
        Run(0, seating="knockout")
    with pytest.raises(RuleViolation):
        Run(0, variant="poker")


def test_scoring_is_total_or_matchpoints_and_matchpoints_needs_duplicate_deals() -> None:
    def create(scoring: str, duplicate: bool) -> tuple[object, ...]:
        spec = Create(
            "Test", "golf", GameOptions(), 2, 1, "swiss", duplicate, "organiser", "a", "b",
            scoring=scoring,
        )  # fmt: skip
        return decide(Tournament(), spec)

    (created,) = create("matchpoints", duplicate=True)
    assert isinstance(created, TournamentCreated)
    assert created.scoring == "matchpoints"
    assert create("total", duplicate=False)[0].scoring == "total"  # type: ignore[attr-defined]
    with pytest.raises(RuleViolation) as caught:
        create("matchpoints", duplicate=False)
    assert caught.value.code == "invalid_config"
    assert "duplicate" in caught.value.message
    with pytest.raises(RuleViolation) as caught:
        create("imps", duplicate=True)
    assert "total, matchpoints" in caught.value.message
