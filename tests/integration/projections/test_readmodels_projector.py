"""The scoreboard, players and replay read models built by the real projector from a real
event store into both projection stores (Redis and memory): they agree with the
recomputation from the events, through a restart with empty fold caches, with two
projectors at once, and a flushed Redis rebuilds them equal key for key."""

from __future__ import annotations

import asyncio
import secrets
import uuid
from collections.abc import AsyncIterator, Callable
from typing import Any

import pytest

from events.store import START, EmbeddedStore, NewEvent
from events.store.base import RecordedEvent
from projections.players import Players
from projections.projector import Projector
from projections.redis_store import RedisProjectionStore
from projections.replay import Replays, events_of, hand_key
from projections.runner import Runner
from projections.scoreboard import Scoreboard
from projections.store import ProjectionStore
from service.read.readmodels import ProjectedReplays
from service.read.replay import replay_hand
from tests.api.server import free_port
from tests.integration.projections.conftest import projection_stores
from tests.support import readmodel_reference as reference
from tests.support.feeds import random_feed, streams_of
from tests.support.played_games import append_interleaved
from tests.support.redis_keys import forget

pytestmark = pytest.mark.integration


def read_models() -> list[Any]:
    """Fresh instances: a new process, with empty fold caches."""
    return [Scoreboard(), Players(), Replays()]


@pytest.fixture
async def make_store(
    store_kind: str, redis_url: str, prefix: str
) -> AsyncIterator[Callable[[], ProjectionStore]]:
    async with projection_stores(store_kind, redis_url, prefix) as make:
        yield make


async def fill(feed: EmbeddedStore, seed: int, games: int) -> list[RecordedEvent]:
    """Append random games (tests/support/feeds.py) and return the feed as stored."""
    streams = [
        (s, [e.data for e in events]) for s, events in streams_of(random_feed(seed, games)).items()
    ]
    await append_interleaved(feed, streams, seed)
    return await feed.read_feed(START, limit=100_000)


async def check(store: ProjectionStore, events: list[RecordedEvent]) -> None:
    """Every document, counter and index the recomputation names, read back from the store;
    every finished hand replayed from the store as from the events; no other hand kept."""
    for key, doc in reference.scoreboards(events).items():
        assert await store.get("scoreboard", key) == doc, key
    players = reference.players(events)
    for key, doc in players.docs.items():
        assert await store.get("players", key) == doc, key
    for key, counters in players.counters.items():
        assert await store.counters("players", key) == counters, key
    for index, members in players.indexes.items():
        page = await store.page("players", index, limit=1000)
        assert {e.member: e.score for e in page.entries} == members, index
    replays = reference.replays(events, replay_hand)
    last: dict[str, int] = {}
    for (game, hand), expected in replays.items():
        keys = [hand_key(game, h) for h in range(1, hand + 1)]
        played = events_of(await store.get_many("replay", keys), hand)
        assert played is not None
        assert replay_hand(game, played, hand) == expected
        last[game] = max(last.get(game, 0), hand)
    for stream_id in streams_of(events):
        game = stream_id.removeprefix("game:")
        assert await store.get("replay", hand_key(game, last.get(game, 0) + 1)) is None


async def build(store: ProjectionStore, feed: EmbeddedStore, batch: int = 97) -> Projector:
    projector = Projector(read_models(), store, feed, batch=batch, grace=0)
    for projection in projector.projections:
        await projector.ensure(projection)
    return projector


async def catch_up(projection: Any, store: ProjectionStore, feed: EmbeddedStore) -> None:
    number = await store.alias(projection.name)
    assert number is not None
    runner = Runner(projection, store, feed, batch=61)
    while await runner.step(number):
        pass


async def test_the_projector_builds_what_the_recomputation_says(
    make_store: Callable[[], ProjectionStore], feed: EmbeddedStore
) -> None:
    events = await fill(feed, seed=21, games=30)
    assert {"game.ended", "seed_chain.extended", "seat.seed_set"} <= {e.type for e in events}
    store = make_store()
    await build(store, feed)
    await check(store, events)


async def test_a_restarted_projector_refolds_from_the_event_store_and_agrees(
    make_store: Callable[[], ProjectionStore], feed: EmbeddedStore
) -> None:
    """Given read models built over half the games' events, when more events arrive and a
    new process (empty fold caches) carries on, then it refolds the games in play from the
    event store and the read models agree with the whole feed."""
    streams = [(s, [e.data for e in ev]) for s, ev in streams_of(random_feed(22, 24)).items()]
    halves = [(s, ev[: len(ev) // 2]) for s, ev in streams]
    await append_interleaved(feed, halves, 1)
    store = make_store()
    await build(store, feed)
    for (stream_id, events), (_, first) in zip(streams, halves, strict=True):
        rest = events[len(first) :]
        if rest:
            await feed.append(stream_id, len(first), [NewEvent(uuid.uuid4(), e) for e in rest])
    fresh = read_models()
    for projection in fresh:
        await catch_up(projection, make_store(), feed)
    assert fresh[0].folds.refolds > 0
    await check(store, await feed.read_feed(START, limit=100_000))


async def test_two_projectors_at_once_agree(
    make_store: Callable[[], ProjectionStore], feed: EmbeddedStore
) -> None:
    events = await fill(feed, seed=23, games=20)
    store = make_store()
    projector = Projector(read_models(), store, feed, batch=50, grace=0)
    for projection in projector.projections:  # empty generations, then two runners race
        number = await store.begin(projection.name, projection.version)
        assert await store.switch(projection.name, number.number, None)
    await asyncio.gather(
        *(catch_up(p, make_store(), feed) for p in read_models()),
        *(catch_up(p, make_store(), feed) for p in read_models()),
    )
    await check(store, events)


@pytest.mark.parametrize("store_kind", ["redis"])
async def test_a_flushed_redis_is_rebuilt_equal_key_for_key(
    make_store: Callable[[], ProjectionStore], feed: EmbeddedStore, redis_url: str, prefix: str
) -> None:
    await fill(feed, seed=24, games=15)
    store = make_store()
    await build(store, feed)
    before = {}
    for projection in read_models():
        number = await store.alias(projection.name)
        assert number is not None
        before[projection.name] = dict(await store.dump(projection.name, number))
        assert before[projection.name]
    assert await forget(redis_url, prefix) > 0  # a flush, as the store sees it
    again = make_store()
    await build(again, feed)
    for projection in read_models():
        number = await again.alias(projection.name)
        assert number is not None
        assert dict(await again.dump(projection.name, number)) == before[projection.name]


async def test_a_rebuild_into_a_new_generation_is_equal_key_for_key(
    make_store: Callable[[], ProjectionStore], feed: EmbeddedStore
) -> None:
    await fill(feed, seed=25, games=12)
    store = make_store()
    projector = await build(store, feed)
    for projection in read_models():
        old = await store.alias(projection.name)
        assert old is not None
        before = dict(await store.dump(projection.name, old))
        new = await projector.rebuild(projection.name)
        assert new != old
        assert dict(await store.dump(projection.name, new)) == before


@pytest.fixture
def prefix() -> str:
    return f"rm{secrets.token_hex(5)}"


async def test_replays_are_folded_from_the_store_and_kept(
    make_store: Callable[[], ProjectionStore], feed: EmbeddedStore
) -> None:
    """Given the replay read model built from a feed, then every finished hand's replay
    served from it is the one folded from the game's whole stream, the second ask is the
    one kept, a hand not over (or not there) is None for the caller to fold itself, and a
    Redis that does not answer is None too."""
    events = await fill(feed, seed=26, games=10)
    store = make_store()
    await build(store, feed)
    replays = ProjectedReplays(kept=1000)
    expected = reference.replays(events, replay_hand)
    assert expected
    for (game, hand), replay in expected.items():
        served = await replays.replay(store, game, hand)
        assert served == replay
        assert await replays.replay(store, game, hand) is served
    for stream_id, recorded in streams_of(events).items():
        game = stream_id.removeprefix("game:")
        ended = sum(e.type == "hand.ended" for e in recorded)
        assert await replays.replay(store, game, ended + 1) is None


async def test_a_redis_that_does_not_answer_leaves_the_replay_to_the_caller() -> None:
    dead = RedisProjectionStore.from_url(f"redis://127.0.0.1:{free_port()}", "rmdead", 0.5)
    try:
        assert await ProjectedReplays().replay(dead, "00000000000000aa", 1) is None
    finally:
        await dead.close()
