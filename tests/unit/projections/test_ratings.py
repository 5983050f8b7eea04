"""One game's rating update (projections/ratings.py, `rate`): who gains and who loses, ties,
high and low wins, a name at several seats, what is not rated, and bots marked and left off
the people's board. And the projection: a game's names and bot seats kept in its document,
a duplicate round's tables rated at the round's close."""

from __future__ import annotations

from typing import Any

import pytest

from events.schema.common import GameEnded, GameOptions, GameStarted
from events.schema.lobby import GameCreated, SeatClaimed, SeatReleased
from events.schema.tournament import RoundClosed, TableResult
from events.store.base import RecordedEvent
from projections.base import IndexAdd, IndexRemove, Put
from projections.ratings import LEADERBOARD, PEOPLE, Ratings, rate, rating_key
from tests.support.dict_projector import DictModel, project
from tests.support.feeds import record


def ratings(writes: list[Any]) -> dict[str, dict[str, Any]]:
    return {w.doc["name"]: w.doc for w in writes if isinstance(w, Put)}


def test_the_winner_gains_and_the_last_loses_low_totals_winning_golf() -> None:
    after = ratings(rate("golf", ["Ada", "Bo", "Cy"], [10, 30, 20], {}))
    assert after["Ada"]["mu"] > 25 > after["Bo"]["mu"]
    assert after["Ada"]["mu"] > after["Cy"]["mu"] > after["Bo"]["mu"]
    assert all(doc["games"] == 1 for doc in after.values())
    assert all(doc["sigma"] < 25 / 3 for doc in after.values())


def test_high_totals_win_basketball() -> None:
    after = ratings(rate("basketball", ["Ada", "Bo"], [10, 30], {}))
    assert after["Bo"]["mu"] > 25 > after["Ada"]["mu"]


def test_equal_totals_share_a_place() -> None:
    after = ratings(rate("golf", ["Ada", "Bo", "Cy"], [10, 10, 40], {}))
    assert after["Ada"]["mu"] == after["Bo"]["mu"] > after["Cy"]["mu"]


def test_the_update_starts_from_the_stored_rating_and_counts_the_game() -> None:
    stored = {
        rating_key("Ada"): {"name": "Ada", "mu": 30.0, "sigma": 5.0, "ordinal": 15.0, "games": 4}
    }
    after = ratings(rate("golf", ["Ada", "Bo"], [10, 20], stored))
    assert after["Ada"]["games"] == 5
    newcomer = ratings(rate("golf", ["Ada", "Bo"], [10, 20], {}))["Ada"]
    # Surer of Ada (smaller sigma), the same win moves her less than a newcomer.
    assert 0 < after["Ada"]["mu"] - 30 < newcomer["mu"] - 25
    assert after["Bo"]["games"] == 1


def test_numbers_are_rounded_and_the_leaderboard_scores_minus_the_ordinal() -> None:
    writes = rate("golf", ["Ada", "Bo"], [10, 20], {})
    for doc in ratings(writes).values():
        for field in ("mu", "sigma", "ordinal"):
            assert round(doc[field], 6) == doc[field]
        assert doc["ordinal"] == round(doc["mu"] - 3 * doc["sigma"], 6)
    for board in (LEADERBOARD, PEOPLE):  # no bot at the table: both boards alike
        scores = {w.member: w.score for w in writes if isinstance(w, IndexAdd) and w.index == board}
        assert scores == {n: -d["ordinal"] for n, d in ratings(writes).items()}


def test_a_name_at_several_seats_is_rated_once_at_its_best_seat() -> None:
    twice = ratings(rate("golf", ["Ada", "Bo", "Ada"], [40, 20, 10], {}))
    once = ratings(rate("golf", ["Ada", "Bo"], [10, 20], {}))
    assert twice == once


@pytest.mark.parametrize(
    ("names", "totals"), [(["Ada"], [3]), (["Ada", "Ada"], [3, 4]), (["Ada", None], [1, 2])]
)
def test_a_game_with_fewer_than_two_names_is_not_rated(
    names: list[str | None], totals: list[int]
) -> None:
    assert rate("golf", names, totals, {}) == []


def test_the_same_game_rates_the_same_to_the_last_digit() -> None:
    assert rate("tens", ["Ada", "Bo", "Cy"], [5, 9, 9], {}) == rate(
        "tens", ["Ada", "Bo", "Cy"], [5, 9, 9], {}
    )


def boards(writes: list[Any]) -> dict[str, set[str]]:
    found: dict[str, set[str]] = {LEADERBOARD: set(), PEOPLE: set()}
    for write in writes:
        if isinstance(write, IndexAdd):
            found[write.index].add(write.member)
    return found


def test_a_bot_is_rated_like_anyone_marked_with_its_level_and_left_off_the_people_board() -> None:
    writes = rate("golf", ["Ada", "Robo"], [10, 20], {}, ["", "greedy"])
    after = ratings(writes)
    assert after["Robo"]["bot"] == "greedy"
    assert "bot" not in after["Ada"]
    unmarked = ratings(rate("golf", ["Ada", "Robo"], [10, 20], {}))
    assert after["Ada"] == unmarked["Ada"], "a bot's seat rates as any other"
    assert boards(writes) == {LEADERBOARD: {"Ada", "Robo"}, PEOPLE: {"Ada"}}


def test_a_name_a_bot_has_played_stays_marked_and_a_person_s_name_a_bot_plays_leaves() -> None:
    first = [*rate("golf", ["Ada", "Robo"], [10, 20], {}, ["", "random"])]
    first += rate("golf", ["Bo", "Cy"], [10, 20], {})
    stored = {w.key: w.doc for w in first if isinstance(w, Put)}
    again = rate("golf", ["Robo", "Bo"], [10, 20], stored)  # Robo's name, a person at it
    assert ratings(again)["Robo"]["bot"] == "random"
    assert boards(again) == {LEADERBOARD: {"Robo", "Bo"}, PEOPLE: {"Bo"}}
    taken = rate("golf", ["Bo", "Cy"], [10, 20], stored, ["strong", ""])  # a bot named Bo
    assert ratings(taken)["Bo"]["bot"] == "strong"
    assert IndexRemove(PEOPLE, "Bo") in taken
    assert boards(taken)[PEOPLE] == {"Cy"}


# ---- the projection: names from its documents, duplicate tables held to the round's close ----


def game(stream: str, *events: object, at: int = 0) -> list[RecordedEvent]:
    return [record(stream, v, at + v, e) for v, e in enumerate(events, start=1)]


def table(peers: tuple[str, ...] = (), seats: int = 2) -> GameCreated:
    return GameCreated("golf", seats, GameOptions(), "0" * 64, peers=peers)


async def test_a_game_is_rated_by_the_names_its_document_holds_when_it_ends() -> None:
    """Given a game whose seats change hands in its lobby, when it ends, then its players
    are rated as `rate` says for the names seated at the start, and its document (kept
    while it was not rated) is gone."""
    stream = "game:00000000000000aa"
    lobby = [
        table(seats=3),
        SeatClaimed(0, "Ada", "x"),
        SeatClaimed(1, "Bo", "x"),
        SeatReleased(1),
        SeatClaimed(1, "Cy", "x"),
        SeatClaimed(2, "Dee", "x"),
        GameStarted("golf", 3),
    ]
    waiting = await project(Ratings(), game(stream, *lobby))
    assert waiting.docs == {
        "game:00000000000000aa": {"variant": "golf", "names": ["Ada", "Cy", "Dee"]}
    }
    done = await project(Ratings(), game(stream, *lobby, GameEnded((30, 10, 20), (1,))), batch=3)
    expected = ratings(rate("golf", ["Ada", "Cy", "Dee"], [30, 10, 20], {}))
    assert done.docs == {rating_key(name): doc for name, doc in expected.items()}


async def test_a_duplicate_table_is_rated_only_when_its_round_closes() -> None:
    """Given a duplicate round of two tables (the same deals), when table A ends while B
    plays, then no rating moves; when B ends too and the round closes, then A and B are
    rated, in table order, each as `rate` says from the ratings the one before left."""
    a, b = "00000000000000aa", "00000000000000bb"
    peers = (a, b)
    table_a = game(
        f"game:{a}",
        table(peers),
        SeatClaimed(0, "Ada", "x"),
        SeatClaimed(1, "Bo", "x"),
        GameStarted("golf", 2),
        GameEnded((12, 30), (0,)),
    )
    table_b = game(
        f"game:{b}",
        table(peers),
        SeatClaimed(0, "Cy", "x"),
        SeatClaimed(1, "Ada", "x"),
        GameStarted("golf", 2),
        GameEnded((25, 5), (1,)),
        at=10,
    )
    results = (
        TableResult(1, a, ("Ada", "Bo"), (12, 30), 2, (0,)),
        TableResult(2, b, ("Cy", "Ada"), (25, 5), 2, (1,)),
    )
    closed = game("tournament:t1", RoundClosed(1, results), at=20)

    model, projection = DictModel(), Ratings()
    await project(projection, [*table_a, *table_b[:4]], model=model)  # A over, B playing
    assert not any(key.startswith("rating:") for key in model.docs)
    assert model.indexes == {}
    await project(projection, table_b[4:], model=model)  # B over, the round not closed yet
    assert not any(key.startswith("rating:") for key in model.docs)
    await project(projection, closed, model=model)

    first = rate("golf", ["Ada", "Bo"], [12, 30], {})
    stored = {w.key: w.doc for w in first if isinstance(w, Put)}
    second = rate("golf", ["Cy", "Ada"], [25, 5], stored)
    expected = ratings(first) | ratings(second)
    assert model.docs == {rating_key(name): doc for name, doc in expected.items()}
    assert model.docs[rating_key("Ada")]["games"] == 2


async def test_a_bot_seat_is_kept_in_the_game_s_document_and_marks_its_rating() -> None:
    stream = "game:00000000000000cc"
    events = [
        table(seats=2),
        SeatClaimed(0, "Ada", "x"),
        SeatClaimed(1, "Robo", "", bot="greedy"),
        GameStarted("golf", 2),
    ]
    waiting = await project(Ratings(), game(stream, *events))
    assert waiting.docs[stream]["bots"] == ["", "greedy"]
    done = await project(Ratings(), game(stream, *events, GameEnded((30, 10), (1,))))
    assert done.docs[rating_key("Robo")]["bot"] == "greedy"
    assert set(done.indexes[LEADERBOARD]) == {"Ada", "Robo"}
    assert set(done.indexes[PEOPLE]) == {"Ada"}
