"""One watcher per process: it tails the store's global feed and tells the live streams of a
game (GET /games/{id}/stream) that the game moved.

Whoever appended, this instance or another, the feed shows it: PostgreSQL's NOTIFY (the
embedded store's local signal) wakes the watcher, which reads what is new once for the whole
process and kicks the pump of each game that moved (service/live/fanout.py), which hands the
news to every stream of the game. While no one subscribes it reads nothing; the first
subscriber after that waits (`ready`) until it has taken the feed's head. The game's record
is read from the cache, or caught up from the store (and its hash chain checked) by one load
shared by everyone waiting for the same news: a thousand subscribers cost one feed reader
and one catch-up per game, not a thousand queries.

The news is only a wake-up. What a subscriber sends is decided by its own last sent version
against the record, so a wake-up missed, repeated or late can delay an event, never lose or
repeat one.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections import OrderedDict
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from events.store import Checkpoint, EventStore, RecordedEvent, StoreError
from service.ops.background import Background
from service.ops.logging import log
from service.play.games import GameService
from service.play.record import GameRecord

if TYPE_CHECKING:
    from service.live.fanout import Fanout

GAME_PREFIX = "game:"
FEED_PAGE = 1000
IDLE_CHECK = 5.0
"""Seconds the watcher waits for a notification before it looks at the feed anyway."""
MEMO_SIZE = 4096


@dataclass(slots=True, eq=False)
class Loads:
    """The catch-ups of one game's record: the one running, and the one queued behind it
    for everyone who asked after it started."""

    running: asyncio.Task[GameRecord] | None = None
    queued: asyncio.Task[GameRecord] | None = None


@dataclass(slots=True, eq=False)
class News:
    """What the feed has said of one watched game."""

    version: int = 0
    """The highest version the feed has shown since the game was first watched."""
    changed: asyncio.Event = field(default_factory=asyncio.Event)
    """Set, then replaced, whenever the game moves: wait on the one taken before looking."""
    subscribers: int = 0
    fanout: Fanout | None = None
    """The game's live streams (service/live/fanout.py), kicked by each announcement."""

    def announce(self) -> None:
        changed, self.changed = self.changed, asyncio.Event()
        changed.set()
        if self.fanout is not None:
            self.fanout.kick()


def _retrieve(task: asyncio.Task[GameRecord]) -> None:
    """Mark a load's failure as seen: each waiter gets it from its own await, and none may
    be left to (asyncio would log it as never retrieved)."""
    if not task.cancelled():
        task.exception()


class Watcher:
    def __init__(self, store: EventStore, games: GameService, idle_check: float = IDLE_CHECK):
        self.store = store
        self.games = games
        self.idle_check = idle_check
        self._news: dict[str, News] = {}
        self._loads: dict[str, Loads] = {}
        self._memo: OrderedDict[tuple[object, ...], bytes] = OrderedDict()
        self._wanted = asyncio.Event()
        """Set by each subscription: the watcher, idle while no one subscribes, follows."""
        self._following = asyncio.Event()
        """Set while the watcher follows the feed from a point taken after every current
        subscriber subscribed (cleared when it goes idle)."""
        self._background = Background("fairway-watcher", self._tail)

    def start(self) -> None:
        self._background.start()

    async def stop(self) -> None:
        await self._background.stop()

    @contextlib.contextmanager
    def subscribe(self, game_id: str) -> Iterator[News]:
        """The news of `game_id` for as long as the block lasts."""
        news = self._news.setdefault(game_id, News())
        news.subscribers += 1
        self._wanted.set()
        try:
            yield news
        finally:
            news.subscribers -= 1
            if news.subscribers == 0 and self._news.get(game_id) is news:
                del self._news[game_id]

    async def ready(self) -> None:
        """Return once the watcher follows the feed from a point taken after the caller
        subscribed, so that the caller's first look at the store misses no news (at most
        `idle_check` seconds: a watcher that cannot read the feed leaves each to look)."""
        with contextlib.suppress(TimeoutError):
            async with asyncio.timeout(self.idle_check):
                await self._following.wait()

    def cached(self, game_id: str, at_least: int) -> GameRecord | None:
        """The cached record if it has reached `at_least` (the common case on a wake-up:
        no await, no query)."""
        slot = self.games.cache.get(game_id)
        return slot.record if slot is not None and slot.record.version >= at_least else None

    async def record(self, game_id: str, at_least: int) -> GameRecord:
        """The game's record at `at_least` or later when the store has it: the cached one if
        it is there already, else a shared catch-up."""
        if (record := self.cached(game_id, at_least)) is not None:
            return record
        return await self.fresh(game_id)

    async def fresh(self, game_id: str) -> GameRecord:
        """The game's record caught up with the store at some moment after this call (what
        `GameService.load` gives), with one catch-up shared by every caller meanwhile: a
        crowd connecting at once (subscribers back after a restart) costs the store two
        queries, the one running and one after it, not one each. `ApiError` as `load`."""
        loads = self._loads.setdefault(game_id, Loads())
        if loads.running is None:
            loads.running = self._start(game_id, loads, None)
            task = loads.running
        else:  # the running one may have read too early for this caller
            if loads.queued is None:
                loads.queued = self._start(game_id, loads, loads.running)
            task = loads.queued
        # Shielded: a caller that leaves does not cancel the others' load.
        return await asyncio.shield(task)

    def _start(
        self, game_id: str, loads: Loads, after: asyncio.Task[GameRecord] | None
    ) -> asyncio.Task[GameRecord]:
        async def load() -> GameRecord:
            if after is not None:
                await asyncio.wait([after])
                loads.running, loads.queued = loads.queued, None
            try:
                return await self.games.load(game_id)
            finally:
                if loads.running is asyncio.current_task():
                    loads.running = None
                if loads.running is None and loads.queued is None:
                    self._loads.pop(game_id, None)

        task = asyncio.ensure_future(load())
        task.add_done_callback(_retrieve)
        return task

    def memo(self, key: tuple[object, ...], make: Callable[[], bytes]) -> bytes:
        """`make()`, remembered under `key`: the messages of one game's events for one
        viewer are the same bytes for every subscriber (events never change), so a crowd of
        spectators costs one encoding per event."""
        found = self._memo.get(key)
        if found is None:
            found = self._memo[key] = make()
            if len(self._memo) > MEMO_SIZE:
                self._memo.popitem(last=False)
        else:
            self._memo.move_to_end(key)
        return found

    async def _tail(self) -> None:
        """While someone subscribes, read the feed from its head as it stood when the first
        of them came; while no one does, read nothing. On a failure, wake every subscriber
        (each looks for itself) and try again after a pause."""
        checkpoint: Checkpoint | None = None
        pause = 0.1
        while True:
            try:
                if not self._news:  # idle: the next subscriber starts from a new head
                    checkpoint = None
                    self._following.clear()
                    self._wanted.clear()
                    await self._wanted.wait()
                    continue
                if checkpoint is None:
                    checkpoint = await self.store.feed_head()
                    self._following.set()
                page = await self.store.read_feed(checkpoint, limit=FEED_PAGE)
                if page:
                    checkpoint = page[-1].checkpoint
                    self._announce(page)
                else:
                    await self.store.wait_for_events(checkpoint, self.idle_check)
                pause = 0.1
            except Exception as error:  # a watcher that died would leave every stream deaf
                if isinstance(error, StoreError):
                    log.warning("watcher_feed_failed", error=str(error))
                else:
                    log.exception("watcher_failed", error=repr(error))
                for news in self._news.values():
                    news.announce()
                await asyncio.sleep(pause)
                pause = min(pause * 2, 5.0)

    def _announce(self, page: list[RecordedEvent]) -> None:
        moved: dict[str, News] = {}
        for event in page:
            if not event.stream_id.startswith(GAME_PREFIX):
                continue
            news = self._news.get(event.stream_id[len(GAME_PREFIX) :])
            if news is not None:
                news.version = max(news.version, event.version)
                moved[event.stream_id] = news
        for news in moved.values():
            news.announce()
