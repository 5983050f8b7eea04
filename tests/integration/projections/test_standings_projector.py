"""The standings and ratings read models built by the real projector from a real event store
into both projection stores (Redis and memory): the standings read back equal the ones
recomputed from the events; a projector stopped half way and a new process (fresh
projections: the ratings find each game's names in their own documents) carry on to the same
keys and values as one run from zero; a flushed Redis and a new generation rebuild them equal key
for key."""

from __future__ import annotations

import secrets
from collections.abc import AsyncIterator, Callable
from typing import Any

import pytest

from events.store import EmbeddedStore
from projections import boards
from projections import standings as model
from projections.projector import Projector
from projections.ratings import LEADERBOARD, Ratings, rating_key
from projections.runner import Runner
from projections.standings import StandingsProjection
from projections.store import ProjectionStore
from tests.integration.projections.conftest import projection_stores
from tests.support.boards_oracle import expected_matchpoints, expected_travellers
from tests.support.redis_keys import forget
from tests.support.tournament_history import (
    Entry,
    append_history,
    closed_rounds,
    expected_standings,
    tournament_history,
)

pytestmark = pytest.mark.integration


def read_models() -> list[Any]:
    return [StandingsProjection(), Ratings()]


@pytest.fixture
def prefix() -> str:
    return f"st{secrets.token_hex(5)}"


@pytest.fixture
async def make_store(
    store_kind: str, redis_url: str, prefix: str
) -> AsyncIterator[Callable[[], ProjectionStore]]:
    async with projection_stores(store_kind, redis_url, prefix) as make:
        yield make


def histories(seed: int, count: int) -> dict[str, list[Entry]]:
    return {
        f"t{seed}x{i}": tournament_history(
            seed * 100 + i, tournament=f"t{seed}x{i}", duplicate=i % 2 == 1
        )
        for i in range(count)
    }


async def append_all(feed: EmbeddedStore, many: dict[str, list[Entry]]) -> None:
    """One tournament after another (each in its own feed order)."""
    versions: dict[str, int] = {}
    for history in many.values():
        await append_history(feed, history, versions)


async def build(store: ProjectionStore, feed: EmbeddedStore) -> Projector:
    projector = Projector(read_models(), store, feed, batch=37, grace=0)
    for projection in projector.projections:
        await projector.ensure(projection)
    return projector


async def check(store: ProjectionStore, many: dict[str, list[Entry]]) -> None:
    for tid, history in many.items():
        doc = await store.get("standings", model.tournament_key(tid))
        assert doc is not None, tid
        tournament = model.load_tournament(doc)
        games = await store.get_many("standings", model.live_keys(tournament))
        assert model.now(tournament, games) == expected_standings(history), tid
        for number in closed_rounds(history):
            assert model.as_of(tournament, number) == expected_standings(history, as_of=number)
        if tournament.scoring == "matchpoints":  # the boards, now and as of each round
            assert boards.now(tournament, games) == expected_matchpoints(history), tid
            for number in closed_rounds(history):
                assert boards.as_of(tournament, number) == expected_matchpoints(history, number)
            for number in range(1, len(tournament.closed) + 2):
                found = boards.round_boards(tournament, number, games)
                if found is not None:
                    assert found == expected_travellers(history, number), (tid, number)


async def dumps(store: ProjectionStore) -> dict[str, dict[str, Any]]:
    out = {}
    for projection in read_models():
        number = await store.alias(projection.name)
        assert number is not None
        out[projection.name] = dict(await store.dump(projection.name, number))
        assert out[projection.name], projection.name
    return out


async def test_the_projector_builds_the_standings_the_events_say(
    make_store: Callable[[], ProjectionStore], feed: EmbeddedStore
) -> None:
    many = histories(1, 4)
    await append_all(feed, many)
    store = make_store()
    await build(store, feed)
    await check(store, many)


async def test_stopped_half_way_and_restarted_it_ends_as_one_run_from_zero(
    make_store: Callable[[], ProjectionStore], feed: EmbeddedStore
) -> None:
    """Given the read models built over half of each tournament's history, when the rest
    arrives and a new process (fresh projections: nothing remembered, the ratings read the
    names of the games in play from their documents) carries on, then the standings are the
    events' and every key and value is the one a rebuild from zero over the same feed
    gives."""
    many = histories(2, 3)
    halves = {tid: history[: len(history) // 2] for tid, history in many.items()}
    versions: dict[str, int] = {}
    for half in halves.values():
        await append_history(feed, half, versions)
    store = make_store()
    projector = await build(store, feed)
    number = await store.alias("ratings")
    assert number is not None
    in_play = [k for k in await store.dump("ratings", number) if k.startswith("k:game:")]
    assert in_play  # the games not rated yet, with their names, are documents
    for tid, history in many.items():
        await append_history(feed, history[len(halves[tid]) :], versions)
    restarted = read_models()  # a new process: fresh instances
    for projection in restarted:
        number = await store.alias(projection.name)
        assert number is not None
        runner = Runner(projection, make_store(), feed, batch=29)
        while await runner.step(number):
            pass
    await check(store, many)
    incremental = await dumps(store)
    for projection in read_models():
        new = await projector.rebuild(projection.name)
        assert dict(await store.dump(projection.name, new)) == incremental[projection.name]


@pytest.mark.parametrize("store_kind", ["redis"])
async def test_a_flushed_redis_is_rebuilt_equal_key_for_key(
    make_store: Callable[[], ProjectionStore], feed: EmbeddedStore, redis_url: str, prefix: str
) -> None:
    await append_all(feed, histories(3, 3))
    store = make_store()
    await build(store, feed)
    before = await dumps(store)
    assert await forget(redis_url, prefix) > 0  # a flush, as the store sees it
    again = make_store()
    await build(again, feed)
    assert await dumps(again) == before


async def test_a_rebuild_into_a_new_generation_is_equal_key_for_key(
    make_store: Callable[[], ProjectionStore], feed: EmbeddedStore
) -> None:
    await append_all(feed, histories(4, 3))
    store = make_store()
    projector = await build(store, feed)
    before = await dumps(store)
    for projection in read_models():
        old = await store.alias(projection.name)
        new = await projector.rebuild(projection.name)
        assert new != old
        assert dict(await store.dump(projection.name, new)) == before[projection.name]


async def test_every_name_is_rated_once_per_finished_game(
    make_store: Callable[[], ProjectionStore], feed: EmbeddedStore
) -> None:
    many = histories(5, 2)
    await append_all(feed, many)
    store = make_store()
    await build(store, feed)
    counts: dict[str, int] = {}
    names: dict[str, dict[int, str]] = {}
    for history in many.values():
        for stream, event in history:
            if type(event).__name__ == "SeatClaimed":
                names.setdefault(stream, {})[event.seat] = event.name
            elif type(event).__name__ == "GameEnded":
                for name in set(names[stream].values()):
                    counts[name] = counts.get(name, 0) + 1
    for name, count in counts.items():
        doc = await store.get("ratings", rating_key(name))
        assert doc is not None
        assert doc["games"] == count
        assert doc["ordinal"] == round(doc["mu"] - 3 * doc["sigma"], 6)
    page = await store.page("ratings", LEADERBOARD, limit=1000)
    assert {e.member for e in page.entries} == set(counts)
    assert [e.score for e in page.entries] == sorted(e.score for e in page.entries)
