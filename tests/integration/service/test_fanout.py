"""A game's live streams on real stores (service/live/fanout.py): each viewer's streams get
that viewer's messages and no other's, every event once and in order, for one look per view
and move however many streams there are; a stream whose client stops reading holds a bounded
outbox, then catches up by itself."""

from __future__ import annotations

import asyncio
import random
import re
from collections.abc import AsyncIterator, Callable

import pytest

from domain.decider import Viewer
from events.schema.common import GameOptions
from events.store import EventStore
from service.http.controllers.stream import Live, messages
from service.live import fanout
from service.live.watch import Watcher
from service.ops.metrics import Metrics
from service.play.games import GameService
from service.play.record import GameRecord
from service.tournaments.duplicate import DuplicateGate

pytestmark = pytest.mark.integration

WAIT = 30.0
"""Generous seconds for a stream to show a move; nothing here times the streams."""
HOUR = 3600.0
_ID = re.compile(rb"^id: (\d+)$", re.MULTILINE)


class CountingGate(DuplicateGate):
    """The real gate, counting the looks at what a viewer may see."""

    looks = 0

    async def visible(self, record: GameRecord, viewer: Viewer, delay: int) -> int:
        self.looks += 1
        return await super().visible(record, viewer, delay)


class Reader:
    """One stream's client: reads its messages as they come, unless paused."""

    def __init__(self, stream: AsyncIterator[bytes]) -> None:
        self.data = bytearray()
        self.reading = asyncio.Event()
        self.reading.set()
        self.task = asyncio.ensure_future(self._read(stream))

    async def _read(self, stream: AsyncIterator[bytes]) -> None:
        async for chunk in stream:
            self.data += chunk
            await self.reading.wait()

    def ids(self) -> list[int]:
        return [int(found) for found in _ID.findall(bytes(self.data))]


async def until(condition: Callable[[], bool]) -> None:
    async with asyncio.timeout(WAIT):
        while not condition():
            await asyncio.sleep(0.01)


def reached(version: int, *readers: Reader) -> Callable[[], bool]:
    """Whether each reader's last message is of `version`."""
    return lambda: all(reader.ids()[-1:] == [version] for reader in readers)


async def started_game(games: GameService) -> tuple[str, list[str]]:
    record, creator = await games.create("basketball", 2, GameOptions(hands=2), "")
    _, _, ann = await games.claim(record.game_id, 0, "ann")
    _, _, bob = await games.claim(record.game_id, 1, "bob")
    await games.start(record.game_id, creator)
    return record.game_id, [ann, bob]


async def move(games: GameService, game_id: str, tokens: list[str], rng: random.Random) -> int:
    """One legal action of a seat to act; the game's version after it."""
    record = await games.load(game_id)
    decider = record.decider
    assert decider is not None
    assert not record.finished
    seat = rng.choice(decider.status(record.state).to_act)
    action = decider.pick(rng.choice(decider.legal_actions(record.state, seat)), rng)
    return (await games.act(game_id, tokens[seat], action)).record.version


def views(record: GameRecord) -> list[bytes]:
    """The whole game's messages for each seat and for the spectators (no delay)."""
    return [messages(record, v, 1, record.version, record.version) for v in (0, 1, None)]


async def test_each_viewer_s_streams_get_its_own_messages_once_with_one_look_per_view_and_move(
    store: EventStore,
) -> None:
    games = GameService(store, Metrics())
    gate = CountingGate(games)
    watcher = Watcher(store, games, idle_check=0.5)
    watcher.start()
    game_id, tokens = await started_game(games)
    viewers: list[Viewer] = [0, 0, 0, 1, 1, 1, None, None, None]
    readers = [
        Reader(Live(watcher, Metrics(), gate, game_id, v, 0, HOUR).messages(0, HOUR))
        for v in viewers
    ]
    try:
        version = (await games.load(game_id)).version
        await until(lambda: all(r.ids()[-1:] == [version] for r in readers))
        gate.looks = 0
        rng = random.Random(3)
        moves = 0
        while moves < 8 or len(set(views(await games.load(game_id)))) < 3:
            version = await move(games, game_id, tokens, rng)
            moves += 1
            await until(reached(version, *readers))
        # one look per view (two seats, the spectators) and move, not one per stream
        assert gate.looks <= 3 * moves, f"{gate.looks} looks for {moves} moves"
        record = await games.load(game_id)
        assert record.version == version
        assert len(set(views(record))) == 3, "the views differ: no stream passes for another"
        for viewer, reader in zip(viewers, readers, strict=True):
            assert reader.ids() == list(range(1, version + 1)), "every event once, in order"
            own = messages(record, viewer, 1, version, version)
            assert bytes(reader.data).endswith(own), f"viewer {viewer} got another's messages"
    finally:
        for reader in readers:
            reader.task.cancel()
        await asyncio.gather(*(r.task for r in readers), return_exceptions=True)
        await watcher.stop()
    assert game_id not in watcher._news, "no stream left, nothing kept"


async def test_a_stream_whose_client_stops_reading_holds_a_bounded_outbox_then_catches_up(
    store: EventStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(fanout, "MAX_PENDING", 2000)
    games = GameService(store, Metrics())
    watcher = Watcher(store, games, idle_check=0.5)
    watcher.start()
    game_id, tokens = await started_game(games)
    gate = DuplicateGate(games)
    slow = Reader(Live(watcher, Metrics(), gate, game_id, 0, 0, HOUR).messages(0, HOUR))
    quick = Reader(Live(watcher, Metrics(), gate, game_id, 0, 0, HOUR).messages(0, HOUR))
    try:
        version = (await games.load(game_id)).version
        await until(lambda: slow.ids()[-1:] == [version] == quick.ids()[-1:])
        slow.reading.clear()  # it takes one more chunk, then reads nothing
        rng = random.Random(4)
        for _ in range(12):
            version = await move(games, game_id, tokens, rng)
            await until(reached(version, quick))
        pump = watcher._news[game_id].fanout
        assert pump is not None
        (held,) = (box for box in pump.views[0] if box.pending or box.behind)
        assert held.behind, "an outbox left unread is not filled without end"
        assert held.pending <= 2000
        slow.reading.set()
        await until(lambda: slow.ids()[-1:] == [version])
        assert slow.ids() == list(range(1, version + 1)), "every event once, in order"
        assert slow.data == quick.data
    finally:
        for reader in (slow, quick):
            reader.task.cancel()
        await asyncio.gather(slow.task, quick.task, return_exceptions=True)
        await watcher.stop()
