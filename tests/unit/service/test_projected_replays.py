"""The replays kept by the read side (service/read/readmodels.py) are found again by the hand's
document, not by its number: a hand played otherwise (the event store the projections follow
was replaced or restored, and they rebuilt) is folded again, never served from the replay of
the hand as it was."""

from __future__ import annotations

from collections.abc import Sequence

import pytest

from projections.base import Doc
from projections.replay import Replays, events_of, hand_key
from service.read.readmodels import ProjectedReplays
from service.read.replay import replay_hand
from tests.support.dict_projector import project
from tests.support.feeds import random_feed, streams_of

pytestmark = pytest.mark.unit


class Docs:
    """The replay read model's documents, as a reader serves them."""

    def __init__(self, docs: dict[str, Doc]) -> None:
        self.docs = docs

    async def get(self, projection: str, key: str) -> Doc | None:
        return self.docs.get(key)

    async def get_many(self, projection: str, keys: Sequence[str]) -> list[Doc | None]:
        return [self.docs.get(key) for key in keys]


async def first_hands(seed: int) -> dict[str, tuple[int, Doc]]:
    """Each game's first hand document as the replay projection writes it, by game, with
    the version of its last event."""
    feed = random_feed(seed, games=12, variants=("golf",))
    model = await project(Replays(), feed)
    out = {}
    for stream_id in streams_of(feed):
        game = stream_id.removeprefix("game:")
        doc = model.docs.get(hand_key(game, 1))
        if doc is not None:
            out[game] = (doc["events"][-1][0], doc)
    return out


async def test_a_hand_played_otherwise_is_replayed_again_not_served_as_kept() -> None:
    """Given the replay of game g's hand 1 kept, when g's hand 1 document is another (the
    same last version, other cards: played otherwise), then its replay is folded from the
    new document."""
    hands = await first_hands(seed=4)  # two of its games end hand 1 at one version
    by_version: dict[int, list[tuple[str, Doc]]] = {}
    for game, (version, doc) in hands.items():
        by_version.setdefault(version, []).append((game, doc))
    (first, one), (_, other) = next(pair for pair in by_version.values() if len(pair) > 1)[:2]
    docs = Docs({hand_key(first, 1): one})
    replays = ProjectedReplays()
    kept = await replays.replay(docs, first, 1)  # type: ignore[arg-type]
    assert kept is not None
    docs.docs[hand_key(first, 1)] = dict(other, game_id=first)
    again = await replays.replay(docs, first, 1)  # type: ignore[arg-type]
    played = events_of([other], 1)
    assert played is not None
    expected = replay_hand(first, played, 1)
    assert again != kept
    assert again == expected
