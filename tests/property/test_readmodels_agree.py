"""The read models agree with a recomputation from the events, for many random games of
every variant, however the feed is batched and wherever the projector restarts.

Given a feed of bot-played games (whole, cut short, lobbies only) interleaved as concurrent
games reach the feed, when the scoreboard, players and replay projections run over it, then
every document, counter and index equals what tests/support/readmodel_reference.py computes
from each game's whole stream."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from domain.variants import DECIDERS
from events.store.base import RecordedEvent
from projections.folds import GameFolds
from projections.players import Players
from projections.replay import Replays, events_of, hand_key, hands_index
from projections.scoreboard import Scoreboard
from service.read.replay import replay_hand
from tests.support import readmodel_reference as reference
from tests.support.dict_projector import DictModel, project
from tests.support.feeds import random_feed, streams_of

pytestmark = pytest.mark.property


def reader_of(feed: list[RecordedEvent]) -> Any:
    """`read_stream` over the feed: where a fold cache refolds a game from on a miss."""
    streams = streams_of(feed)

    async def read_stream(stream_id: str, from_version: int, limit: int) -> list[RecordedEvent]:
        return streams[stream_id][from_version - 1 : from_version - 1 + limit]

    return read_stream


def projections(feed: list[RecordedEvent], max_events: int = 200_000) -> list[Any]:
    read = reader_of(feed)
    return [
        Scoreboard(GameFolds(read, max_events)),
        Players(),
        Replays(GameFolds(read, max_events, play=False, keep=True)),
    ]


async def check(feed: list[RecordedEvent], models: list[DictModel]) -> None:
    scoreboard, players, replay = models
    assert scoreboard.docs == reference.scoreboards(feed)
    expected = reference.players(feed)
    assert players.docs == expected.docs
    assert players.counters == expected.counters
    assert players.indexes == expected.indexes
    expected_replays = reference.replays(feed, replay_hand)
    assert set(replay.docs) == {hand_key(game, hand) for game, hand in expected_replays}
    for (game, hand), expected_replay in expected_replays.items():
        docs = [replay.docs.get(hand_key(game, h)) for h in range(1, hand + 1)]
        events = events_of(docs, hand)
        assert events is not None
        assert replay_hand(game, events, hand) == expected_replay
        assert replay.indexes[hands_index(game)][str(hand)] == hand


@pytest.mark.parametrize("variant", sorted(DECIDERS))
async def test_each_variant_agrees_with_the_recomputation(variant: str) -> None:
    feed = random_feed(seed=sorted(DECIDERS).index(variant), games=12, variants=(variant,))
    assert sum(e.type == "game.ended" for e in feed) >= 3  # whole games are in it
    models = [await project(p, feed) for p in projections(feed)]
    await check(feed, models)


async def test_many_mixed_games_agree_in_batches_of_one() -> None:
    feed = random_feed(seed=7, games=25)
    models = [await project(p, feed, batch=1) for p in projections(feed)]
    await check(feed, models)


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    seed=st.integers(0, 10_000),
    batch=st.integers(1, 300),
    cut=st.floats(0.0, 1.0),
    small_cache=st.booleans(),
)
async def test_a_restarted_projector_agrees(
    seed: int, batch: int, cut: float, small_cache: bool
) -> None:
    """Given a projector that stops at any point and a new one (empty fold cache, or one so
    small that games keep being evicted) that carries on from the same documents, the
    documents are those of the recomputation."""
    feed = random_feed(seed=seed, games=8)
    split = int(len(feed) * cut)
    first = projections(feed)
    models = [await project(p, feed[:split], batch) for p in first]
    second = projections(feed, max_events=50 if small_cache else 200_000)
    models = [
        await project(p, feed[split:], batch, model)
        for p, model in zip(second, models, strict=True)
    ]
    await check(feed, models)


async def test_a_batch_read_again_agrees() -> None:
    """Two projectors, or a batch whose writes lost the race: the same events come back and
    the fold cache, ahead of them, rewinds instead of folding them twice."""
    feed = random_feed(seed=11, games=6)
    scoreboard = Scoreboard(GameFolds(reader_of(feed)))
    model = DictModel()
    for start in range(0, len(feed), 50):
        await scoreboard.prepare(feed[start : start + 70])  # prepared, then lost
        model = await project(scoreboard, feed[start : start + 50], 50, model)
    assert model.docs == reference.scoreboards(feed)
