"""The spectator horizon: N seat actions back, an action being one append (its deal
included), everything once the game is over; the delayed state is the one the domain folds."""

from __future__ import annotations

import random
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from domain.bots.base import RandomBot
from domain.grid import GOLF
from domain.simulate import play_game
from events.schema.common import GameEnded, GameOptions, GameStarted, HandDealt
from events.schema.lobby import GameCreated, SeatClaimed
from service.live.spectators import horizon, state_at, visible_version
from service.play.record import GameRecord

pytestmark = pytest.mark.unit

OPTIONS = GameOptions(hands=1)
T0 = datetime(2026, 1, 1, tzinfo=UTC)


def played() -> tuple[Any, ...]:
    game = play_game(GOLF, 2, [RandomBot()] * 2, b"seed", random.Random(4), OPTIONS)
    return game.events


def lobby() -> GameRecord:
    record = GameRecord.begin("g", GameCreated("golf", 2, OPTIONS, "", ""))
    for seat in (0, 1):
        record.apply(record.version + 1, SeatClaimed(seat, f"p{seat}", ""), {"seat": seat})
    return record


def stored_append(record: GameRecord, events: list[Any], metadata: dict[str, Any]) -> int:
    """Fold `events` as one stored append (one recorded time); returns its first version."""
    first = record.version + 1
    stamp = (T0 + timedelta(seconds=first), metadata)
    for event in events:
        record.apply(record.version + 1, event, dict(metadata), b"", stamp)
    return first


def started(events: tuple[Any, ...]) -> tuple[GameRecord, list[Any]]:
    """The game started and dealt (one append, no seat); returns the rest of its events."""
    record = lobby()
    deal_end = next(i for i, e in enumerate(events) if isinstance(e, HandDealt)) + 1
    stored_append(record, list(events[:deal_end]), {})
    return record, list(events[deal_end:])


def test_without_a_delay_or_an_action_spectators_see_everything() -> None:
    record, _ = started(played())
    assert not record.action_starts, "the lobby, the start and its deal are no seat's action"
    assert horizon(record, 0) == horizon(record, 3) == record.version


def test_the_horizon_is_the_version_before_the_nth_most_recent_action() -> None:
    record, rest = started(played())
    a = stored_append(record, rest[0:3], {"seat": 0, "action": {"type": "x"}})
    b = stored_append(record, rest[3:5], {"seat": 1, "action": {"type": "x"}})
    c = stored_append(record, rest[5:6], {"seat": 1, "action": {"type": "x"}})
    assert list(record.action_starts) == [a, b, c]
    assert horizon(record, 0) == record.version
    assert horizon(record, 1) == c - 1
    assert horizon(record, 2) == b - 1
    assert horizon(record, 3) == horizon(record, 50) == a - 1
    assert visible_version(record, 0, 2) == record.version, "a seat is never held back"
    assert visible_version(record, None, 2) == b - 1


def test_actions_folded_as_appended_here_count_like_stored_ones() -> None:
    record, rest = started(played())
    for offset, event in enumerate(rest[:4]):  # two appends of two events each
        first = record.version + 1 - offset % 2
        record.apply(record.version + 1, event, {"seat": 0}, b"", first)
    assert len(record.action_starts) == 2
    assert horizon(record, 1) == record.version - 2


def test_a_finished_game_is_shown_whole() -> None:
    record, rest = started(played())
    for event in rest:
        stored_append(record, [event], {"seat": 0})
    assert isinstance(record.entries[-1].event, GameEnded)
    assert horizon(record, 5) == record.version


def test_the_delayed_state_is_the_one_the_domain_folds_for_any_horizon_in_any_order() -> None:
    events = played()
    record, rest = started(events)
    for event in rest:
        stored_append(record, [event], {"seat": 0})
    start = next(i for i, e in enumerate(record.entries) if isinstance(e.event, GameStarted))
    versions = list(range(start + 2, record.version))
    rng = random.Random(9)
    for version in versions[::3] + rng.sample(versions, 20):  # forward, then at random
        assert state_at(record, version) == record.state_at(version)
