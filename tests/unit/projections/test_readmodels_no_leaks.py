"""Nothing a read model keeps shows a viewer a card it may not know, at any moment.

Given random games of every variant (some cut off mid-hand) run through the projections a
batch at a time, then after every batch: the scoreboard and players documents hold no card
and no seed at all; the replay holds only hands that are over in the feed read so far, and
only their events (never one of the hand that follows: nothing from its deal on); no seed of
a hand in play, and no seed chain's secret, appears anywhere."""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

import pytest

from events.schema.common import GameEnded, HandDealt, HandEnded
from events.schema.lobby import GameCreated, SeedChainExtended
from events.store.base import RecordedEvent
from projections.folds import GameFolds
from projections.players import Players
from projections.replay import Replays
from projections.scoreboard import Scoreboard
from tests.support.dict_projector import DictModel, project
from tests.support.feeds import random_feed

pytestmark = pytest.mark.unit

CARD = re.compile(r"^(?:[A2-9TJQK][SHDC]|JK)$")
SEED = re.compile(r"^[0-9a-f]{64}$")


def texts(value: Any) -> Iterator[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for k, v in value.items():
            yield k
            yield from texts(v)
    elif isinstance(value, list | tuple):
        for v in value:
            yield from texts(v)


def everything(model: DictModel) -> list[str]:
    return [
        *texts(model.docs),
        *texts(model.counters),
        *texts(model.indexes),
    ]


def live_seeds(feed: list[RecordedEvent]) -> set[str]:
    """Seeds of hands dealt in `feed` but not ended in it, and the seed chains' secrets
    (secret until the game is over, and no read model has a use for them)."""
    dealt = {(e.stream_id, e.data.hand): e.data.seed for e in feed if isinstance(e.data, HandDealt)}
    for e in feed:
        if isinstance(e.data, HandEnded):
            dealt.pop((e.stream_id, e.data.hand), None)
    secrets = {e.data.seed_secret for e in feed if isinstance(e.data, GameCreated)}
    secrets |= {e.data.secret for e in feed if isinstance(e.data, SeedChainExtended)}
    return set(dealt.values()) | secrets


def deals(feed: list[RecordedEvent]) -> dict[tuple[str, int], int]:
    """The version of each hand's `hand.dealt` in `feed`."""
    return {
        (e.stream_id.removeprefix("game:"), e.data.hand): e.version
        for e in feed
        if isinstance(e.data, HandDealt)
    }


def hand_ends(feed: list[RecordedEvent]) -> dict[tuple[str, int], int]:
    """The version at which each hand of `feed` is closed: its hand.ended, or game.ended."""
    ends: dict[tuple[str, int], int] = {}
    last: dict[str, int] = {}
    for e in feed:
        game = e.stream_id.removeprefix("game:")
        if isinstance(e.data, HandEnded):
            ends[(game, e.data.hand)] = e.version
            last[game] = e.data.hand
        elif isinstance(e.data, GameEnded):
            ends[(game, last[game])] = e.version
    return ends


@pytest.mark.parametrize("seed", [3, 4])
async def test_no_projection_holds_what_a_viewer_may_not_know(seed: int) -> None:
    feed = random_feed(seed=seed, games=15)
    assert live_seeds(feed), "the feed has hands in play when it ends"
    checked = []

    def no_card_nor_seed(read: int, model: DictModel) -> None:
        found = [t for t in everything(model) if CARD.match(t) or SEED.match(t)]
        assert found == []
        checked.append(read)

    def finished_hands_only(read: int, model: DictModel) -> None:
        prefix = feed[:read]
        ends, dealt = hand_ends(prefix), deals(prefix)
        hidden = live_seeds(prefix)
        for key, doc in model.docs.items():
            _, game, hand = key.split(":")
            assert ends.get((game, int(hand))) is not None, f"{key} is written, the hand not over"
            following = dealt.get((game, int(hand) + 1))
            assert following is None or all(v < following for v, _ in doc["events"]), key
        assert not hidden & set(everything(model))
        checked.append(read)

    await project(Scoreboard(GameFolds()), feed, batch=37, after_batch=no_card_nor_seed)
    await project(Players(), feed, batch=37, after_batch=no_card_nor_seed)
    await project(
        Replays(GameFolds(play=False, keep=True)), feed, batch=37, after_batch=finished_hands_only
    )
    assert len(checked) == 3 * -(-len(feed) // 37)
