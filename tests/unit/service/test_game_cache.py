"""The game cache is bounded by what its games weigh, evicts a game's record and lock
together, never a game a command is working on, and finished games first."""

from __future__ import annotations

import asyncio
import random

import pytest

from domain.bots.base import RandomBot
from domain.grid import GOLF
from domain.simulate import play_game
from events.schema.common import GameOptions
from events.schema.lobby import GameCreated, SeatClaimed
from service.play.cache import GameCache
from service.play.record import RECORD_OVERHEAD, GameRecord

pytestmark = pytest.mark.unit


W = RECORD_OVERHEAD + 1
"""What a game just opened weighs."""


def lobby(game_id: str, claims: int = 0) -> GameRecord:
    """A game in its lobby weighing W + `claims` events."""
    record = GameRecord.begin(game_id, GameCreated("golf", 10, GameOptions(), "", ""))
    for seat in range(claims):
        record.apply(record.version + 1, SeatClaimed(seat, f"p{seat}", ""), {})
    return record


def finished(game_id: str) -> GameRecord:
    record = GameRecord.begin(game_id, GameCreated("golf", 2, GameOptions(hands=1), "", ""))
    for seat in (0, 1):
        record.apply(record.version + 1, SeatClaimed(seat, f"p{seat}", ""), {})
    played = play_game(GOLF, 2, [RandomBot()] * 2, b"seed", random.Random(3), GameOptions(hands=1))
    for event in played.events:
        record.apply(record.version + 1, event, {})
    assert record.finished
    return record


def test_the_cache_keeps_at_most_its_weight_in_events_evicting_the_least_recently_used() -> None:
    cache = GameCache(max_events=3 * (W + 2) + 1, max_finished=5)
    for n in range(4):
        cache.admit(lobby(f"g{n}", claims=2))
    assert cache.events <= 3 * (W + 2) + 1
    assert cache.get("g0") is None, "the oldest went first"
    assert cache.get("g3") is not None


def test_a_record_that_grows_is_accounted_for() -> None:
    cache = GameCache(max_events=2 * W + 4, max_finished=5)
    small = cache.admit(lobby("small"))
    grown = cache.admit(lobby("grown"))
    for seat in range(4):
        grown.record.apply(grown.record.version + 1, SeatClaimed(seat, "p", ""), {})
    cache.account(grown)
    assert cache.events == 2 * W + 4
    grown.record.apply(grown.record.version + 1, SeatClaimed(4, "p", ""), {})
    cache.account(grown)
    assert cache.get("small") is None
    assert small.record.game_id == "small"
    assert cache.events == W + 5


def test_a_game_whose_lock_is_held_is_never_evicted() -> None:
    async def scenario() -> None:
        cache = GameCache(max_events=2 * W, max_finished=5)
        busy = cache.admit(lobby("busy"))
        async with busy.lock:
            for n in range(5):
                cache.admit(lobby(f"g{n}"))
            assert cache.get("busy") is busy
        assert len(cache) <= 2

    asyncio.run(scenario())


def test_finished_games_are_evicted_first_once_too_many_are_kept() -> None:
    cache = GameCache(max_events=1_000_000, max_finished=1)
    cache.admit(finished("old"))
    live = cache.admit(lobby("live"))
    cache.admit(finished("new"))
    assert cache.finished == 1
    assert cache.get("old") is None
    assert cache.get("live") is live
    assert cache.get("new") is not None


def test_the_slot_kept_first_wins_when_two_requests_admit_one_game() -> None:
    cache = GameCache(max_events=100, max_finished=5)
    first = cache.admit(lobby("g"))
    second = cache.admit(lobby("g"))
    assert second is first
    assert cache.events == W


def test_folding_an_event_twice_is_a_no_op_and_a_gap_is_an_error() -> None:
    record = lobby("g", claims=1)
    record.apply(2, SeatClaimed(0, "p0", ""), {})  # delivered again by an overlapping read
    assert record.version == 2
    assert record.weight == RECORD_OVERHEAD + 2
    with pytest.raises(ValueError, match="version 4 after 2"):
        record.apply(4, SeatClaimed(3, "p3", ""), {})


def test_a_record_gives_each_events_chain_link_as_folded() -> None:
    links = [bytes([n]) * 32 for n in (1, 2, 3)]
    record = GameRecord.begin("g", GameCreated("golf", 10, GameOptions(), "", ""), links[0])
    record.apply(2, SeatClaimed(0, "p0", ""), {}, links[1])
    record.apply(3, SeatClaimed(1, "p1", ""), {})  # an append that did not report its link
    record.apply(4, SeatClaimed(2, "p2", ""), {}, links[2])
    assert [record.link(v) for v in (1, 2, 3, 4)] == [links[0], links[1], b"", links[2]]
    with pytest.raises(ValueError, match="a chain link of 5 bytes"):
        record.apply(5, SeatClaimed(3, "p3", ""), {}, b"short")
