"""The standings read model (projections/standings.py) says what the events say: from
random synthetic tournament histories, its standings now and as of each closed round equal
the ones recomputed straight from the events (tests/support/tournament_history.py), in whatever
batches the feed is projected, bot players marked; as of round N equals rounds 1..N alone;
and the ratings update once per finished game, bots marked and off the people's board."""

from __future__ import annotations

import asyncio
import itertools

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from domain.tournament.standings import standings
from domain.variants import high_wins
from projections import boards
from projections import standings as model
from projections.ratings import LEADERBOARD, PEOPLE, Ratings, rating_key
from projections.standings import StandingsProjection
from tests.support.boards_oracle import expected_matchpoints, expected_travellers
from tests.support.dict_projector import DictModel, project
from tests.support.tournament_history import (
    closed_rounds,
    expected_bots,
    expected_standings,
    recorded,
    tournament_history,
)


def read_now(built: DictModel, tid: str) -> tuple[list, int]:  # type: ignore[type-arg]
    tournament = model.load_tournament(built.docs[model.tournament_key(tid)])
    games = [built.docs.get(key) for key in model.live_keys(tournament)]
    return model.now(tournament, games), model.revision(tournament, games)


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 2**32), batch=st.integers(1, 40))
def test_standings_equal_the_recomputation_from_the_events(seed: int, batch: int) -> None:
    history = tournament_history(seed, tournament="t1")
    built = asyncio.run(project(StandingsProjection(), recorded(history), batch=batch))
    rows, _ = read_now(built, "t1")
    assert rows == expected_standings(history)
    tournament = model.load_tournament(built.docs[model.tournament_key("t1")])
    assert tournament.bots == expected_bots(history)
    for number in closed_rounds(history):
        assert model.as_of(tournament, number) == expected_standings(history, as_of=number)


@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 2**32))
def test_as_of_round_n_is_the_standings_of_rounds_1_to_n_alone(seed: int) -> None:
    """A history cut right after round N closed gives, now, what `?round=N` gives later."""
    history = tournament_history(seed, tournament="t1", finish=True)
    tournament = model.load_tournament(
        asyncio.run(project(StandingsProjection(), recorded(history))).docs["tournament:t1"]
    )
    for number in closed_rounds(history):
        cut = next(
            i
            for i, (_, e) in enumerate(history)
            if type(e).__name__ == "RoundClosed" and e.round == number
        )
        alone = asyncio.run(project(StandingsProjection(), recorded(history[: cut + 1])))
        rows, _ = read_now(alone, "t1")
        assert model.as_of(tournament, number) == rows


def test_the_revision_grows_with_every_change_and_only_then() -> None:
    history = tournament_history(7, tournament="t1", rounds=2, finish=True)
    feed = recorded(history)
    seen: list[tuple[int, list]] = []  # type: ignore[type-arg]

    def look(_: int, built: DictModel) -> None:
        if model.tournament_key("t1") in built.docs:
            rows, revision = read_now(built, "t1")
            seen.append((revision, rows))

    asyncio.run(project(StandingsProjection(), feed, batch=1, after_batch=look))
    for (before, rows_before), (after, rows_after) in itertools.pairwise(seen):
        assert after >= before
        if rows_after != rows_before:
            assert after > before
    assert seen[-1][0] == feed[-1].global_position  # tournament.ended is the last change


def test_casual_games_are_not_in_the_standings_read_model() -> None:
    history = tournament_history(3, tournament="t1")
    built = asyncio.run(project(StandingsProjection(), recorded(history)))
    games = {k for k in built.docs if k.startswith("game:")}
    tournament_games = {
        f"game:{e.game_id}"
        for _, ev in history
        if type(ev).__name__ == "RoundStarted"
        for e in ev.tables
    }
    assert games == tournament_games


def test_as_of_uses_the_players_and_withdrawals_of_then() -> None:
    history = tournament_history(11, tournament="t1", players=10, rounds=3, finish=True)
    tournament = model.load_tournament(
        asyncio.run(project(StandingsProjection(), recorded(history))).docs["tournament:t1"]
    )
    first = tournament.closed[0]
    rows = model.as_of(tournament, 1)
    assert len(rows) == first.registered
    assert {r.player for r in rows if r.withdrawn} == set(first.withdrawn)
    assert rows == standings(
        tournament.players[: first.registered],
        [model.round_result(first)],
        high_wins(tournament.variant),
        first.withdrawn,
    )


@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 2**32), batch=st.integers(1, 50))
def test_ratings_count_each_finished_game_once_per_player_whatever_the_batches(
    seed: int, batch: int
) -> None:
    feed = recorded(tournament_history(seed, tournament="t1"))
    one = asyncio.run(project(Ratings(), feed, batch=len(feed)))
    other = asyncio.run(project(Ratings(), feed, batch=batch))
    assert one.docs == other.docs
    assert one.indexes == other.indexes
    rated: dict[str, int] = {}
    names: dict[str, dict[int, str]] = {}
    levels: dict[str, dict[int, str]] = {}
    bots: dict[str, str] = {}
    for event in feed:
        data = event.data
        if event.type == "seat.claimed":
            names.setdefault(event.stream_id, {})[data.seat] = data.name
            levels.setdefault(event.stream_id, {})[data.seat] = data.bot
        elif event.type == "game.ended":
            for name in set(names[event.stream_id].values()):
                rated[name] = rated.get(name, 0) + 1
            # A name a bot played in a rated game: marked with its level from then on (a
            # bot's seat in a game still in play marks nothing yet).
            for seat, level in levels[event.stream_id].items():
                if level:
                    bots[names[event.stream_id][seat]] = level
    assert {name: one.docs[rating_key(name)]["games"] for name in rated} == rated
    assert {n: one.docs[rating_key(n)].get("bot") for n in rated} == {n: bots.get(n) for n in rated}
    assert set(one.indexes[LEADERBOARD]) == set(rated)
    assert set(one.indexes[PEOPLE]) == set(rated) - set(bots)


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 2**32), batch=st.integers(1, 40))
def test_matchpoints_and_travellers_equal_the_recomputation_from_the_events(
    seed: int, batch: int
) -> None:
    """A duplicate tournament scored by matchpoints: its standings now and as of each closed
    round, and every round's travellers (a live round's through the duplicate horizon), are
    the ones recomputed from the games' `hand.ended` scores, in whatever batches."""
    history = tournament_history(seed, tournament="t1", duplicate=True)
    built = asyncio.run(project(StandingsProjection(), recorded(history), batch=batch))
    tournament = model.load_tournament(built.docs[model.tournament_key("t1")])
    assert tournament.scoring == "matchpoints"
    games = [built.docs.get(key) for key in model.live_keys(tournament)]
    assert boards.now(tournament, games) == expected_matchpoints(history)
    for number in closed_rounds(history):
        assert boards.as_of(tournament, number) == expected_matchpoints(history, number)
    started = len(tournament.closed) + (tournament.live is not None)
    for number in range(1, started + 1):
        assert boards.round_boards(tournament, number, games) == expected_travellers(
            history, number
        )
    assert boards.round_boards(tournament, started + 1, games) is None
