"""The referee on real stores: a clocked game left alone finishes by timeouts, each turn
played once even with two referees on one database, and nothing is played before its time.

The referee's clock is an argument: the tests move it instead of sleeping 5 s a turn. The
PostgreSQL tests use a database of their own: a referee reads the feed from its start, and
the session's database holds other tests' streams (and the API server's own referee).
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from events.migrate import migrate
from events.schema.common import GameEnded, GameOptions
from events.schema.lobby import TurnPlayedFor
from events.store import EmbeddedStore, EventStore, PostgresStore, RecordedEvent
from service.audit import audit_game
from service.ops.metrics import Metrics
from service.play.games import GameService, stream_id
from service.play.record import ACTION, PLAYED_FOR
from service.referee.referee import Referee
from tests.support.services import throwaway_database

pytestmark = pytest.mark.integration

WAIT = 180.0
"""Generous seconds for a game to be played out; nothing here times the referee. (A whole
game of Tens, on PostgreSQL beside another test worker on a busy machine, took over 60.)"""
TICK = 0.02


class Clock:
    """The time as the referee reads it: the real time moved on by `ahead`."""

    def __init__(self) -> None:
        self.ahead = timedelta()

    def __call__(self) -> datetime:
        return datetime.now(UTC) + self.ahead


@pytest.fixture(scope="module")
def referee_db(postgres_server_url: str) -> Iterator[str]:
    with throwaway_database(postgres_server_url, "fairway_referee") as url:
        migrate(url)
        yield url


@pytest.fixture(params=["postgres", "embedded"])
async def store(
    request: pytest.FixtureRequest, tmp_path: Path, referee_db: str
) -> AsyncIterator[EventStore]:
    if request.param == "postgres":
        opened: EventStore = await PostgresStore.open(referee_db, poll_interval=0.05)
    else:
        opened = await EmbeddedStore.open(tmp_path, poll_interval=0.05)
    try:
        yield opened
    finally:
        await opened.close()


async def clocked_game(games: GameService, variant: str = "golf", **options: int) -> str:
    """A started game of two seats with a 5-second turn clock that nobody plays."""
    record, creator = await games.create(
        variant, 2, GameOptions(turn_seconds=5, **options), "left alone"
    )
    for name in ("ann", "bob"):
        await games.claim(record.game_id, None, name)
    await games.start(record.game_id, creator)
    return record.game_id


async def finished(store: EventStore, game_id: str) -> list[RecordedEvent]:
    """The game's events once it is over (polling the store)."""
    async with asyncio.timeout(WAIT):
        while True:
            events = await store.read_stream(stream_id(game_id))
            if any(isinstance(e.data, GameEnded) for e in events):
                return events
            await asyncio.sleep(0.05)


def played_for(events: list[RecordedEvent]) -> list[RecordedEvent]:
    return [e for e in events if isinstance(e.data, TurnPlayedFor)]


def seat_appends(events: list[RecordedEvent]) -> list[RecordedEvent]:
    """The first event of each append that acted for a seat (the events of one append
    share their recorded time and metadata)."""
    firsts: list[RecordedEvent] = []
    last = None
    for event in events:
        key = (event.recorded_at, event.metadata)
        if key != last and isinstance(event.metadata.get("seat"), int) and ACTION in event.metadata:
            firsts.append(event)
        last = key
    return firsts


async def audit(store: EventStore, game_id: str) -> bool:
    rows = await store.read_stored(stream_id(game_id))
    report = audit_game(game_id, rows)
    assert report.failures == [], [f.line() for f in report.failures]
    return report.ok


@pytest.mark.parametrize("variant", ["golf", "tens-shedding"])
async def test_a_clocked_game_left_alone_finishes_by_timeouts(
    store: EventStore, variant: str
) -> None:
    metrics = Metrics()
    games = GameService(store, metrics)
    options = {"hands": 1} if variant == "golf" else {}
    game_id = await clocked_game(games, variant, **options)
    clock = Clock()
    referee = Referee(store, games, now=clock, tick=TICK)
    referee.start()
    try:
        clock.ahead = timedelta(hours=1)  # every turn's time is up as soon as it begins
        events = await finished(store, game_id)
        async with asyncio.timeout(WAIT):
            while game_id in referee.tables:  # the referee folds the end, and forgets it
                await asyncio.sleep(0.02)
    finally:
        await referee.stop()
    turns = played_for(events)
    appends = seat_appends(events)
    assert len(turns) == len(appends) > 0, "every action was a turn played for its seat"
    for turn in turns:
        following = events[turn.version]  # the action's first event, in the same append
        assert turn.data.reason == "timeout"
        assert turn.metadata == following.metadata
        assert turn.metadata["seat"] == turn.data.seat
        assert turn.metadata[PLAYED_FOR] == "timeout"
    assert [e.version for e in events] == list(range(1, len(events) + 1))
    assert metrics.labelled[("turns_played_for", "reason", "timeout")] == len(turns)
    assert await audit(store, game_id)


async def test_nothing_is_played_before_the_clock_runs_out(store: EventStore) -> None:
    games = GameService(store, Metrics())
    game_id = await clocked_game(games, hands=1)
    clock = Clock()
    referee = Referee(store, games, now=clock, tick=TICK)
    referee.start()
    try:
        await asyncio.wait_for(referee.caught_up.wait(), WAIT)
        await asyncio.sleep(0.5)  # many ticks, well within the 5 seconds
        before = await store.read_stream(stream_id(game_id))
        assert played_for(before) == []
        clock.ahead = timedelta(seconds=5)
        async with asyncio.timeout(WAIT):
            while not played_for(after := await store.read_stream(stream_id(game_id))):
                await asyncio.sleep(0.02)
    finally:
        await referee.stop()
    first = played_for(after)[0]
    assert first.version == len(before) + 1, "the first timeout follows the deal"
    assert first.data.reason == "timeout"


async def test_a_timeout_already_acted_on_is_not_played(store: EventStore) -> None:
    """The expected version decides: once the game moved, the attempt plays nothing."""
    games = GameService(store, Metrics())
    game_id = await clocked_game(games, hands=1)
    record = await games.load(game_id)
    version = record.version
    began = datetime.now(UTC) - timedelta(seconds=10)
    now = datetime.now(UTC)
    seat = record.status().to_act[0]  # type: ignore[union-attr]
    early = await games.play_for(game_id, seat, "timeout", version, now, now)
    assert early is None, "not due: the turn began just now"
    first = await games.play_for(game_id, seat, "timeout", version, began, now)
    assert first is not None
    again = await games.play_for(game_id, seat, "timeout", version, began, now)
    assert again is None
    stored = await store.read_stream(stream_id(game_id))
    assert len(played_for(stored)) == 1
    other = GameService(store, Metrics())  # another instance, its cache behind
    assert await other.play_for(game_id, seat, "timeout", version, began, now) is None
    assert len(played_for(await store.read_stream(stream_id(game_id)))) == 1


async def test_two_referees_on_one_database_play_each_timeout_once(referee_db: str) -> None:
    stores = [await PostgresStore.open(referee_db, poll_interval=0.02) for _ in range(2)]
    services = [GameService(s, Metrics()) for s in stores]
    clock = Clock()
    referees = [Referee(s, g, now=clock, tick=TICK) for s, g in zip(stores, services, strict=True)]
    try:
        game_ids = [await clocked_game(services[0], hands=2) for _ in range(3)]
        for referee in referees:
            referee.start()
        clock.ahead = timedelta(hours=1)
        for game_id in game_ids:
            events = await finished(stores[0], game_id)
            turns = played_for(events)
            assert len(turns) == len(seat_appends(events)) > 0
            assert [e.version for e in events] == list(range(1, len(events) + 1))
            assert len({t.version for t in turns}) == len(turns)
            assert await audit(stores[0], game_id)
    finally:
        for referee in referees:
            await referee.stop()
        for s in stores:
            await s.close()
