"""One feed follower: the loop the referee, the bots and the round keeper each tail the store's
global feed with, so that each of them says only what it does with the events.

The follower reads a page from its checkpoint and hands it to its consumer's `fold`; once it
has caught up with the feed's head it asks the consumer to `act` on what is due, which answers
how long to wait at most before looking again; it then waits for the next append (the store's
notification), that long, or a `wake()`, whichever comes first.

It reads and waits through the process's `SharedFeed` (events/feed.py) when it is given one:
then the referee, the bots, the round keeper and the projector, caught up at one checkpoint,
share one wait for the next append and one read after it, where each read the store on its own
after every append; and the shared feed paces them (`PACE`: no read sooner than 30 ms after
one of several games' events that reached the feed's end), so that under a steady stream of
appends they read a few dozen times a second between them, each read gathering the appends
since the last, a lag that the referee's clocks and the bots' think times (seconds) do not
notice. A failure is logged
(`<name>_feed_failed` when the store failed, `<name>_failed` with its traceback otherwise) and
the loop goes on after a back-off (0.1 s, doubling up to 5 s): a consumer that died would leave
tables unfinished.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Awaitable, Callable, Iterator, MutableMapping
from typing import Protocol, TypeVar

from events.feed import Feed, SharedFeed
from events.store import START, Checkpoint, RecordedEvent, StoreError, Unreadable
from service.ops.background import Background
from service.ops.logging import log

FEED_PAGE = 1000
GAME_PREFIX = "game:"
FIRST_PAUSE = 0.1
LONGEST_PAUSE = 5.0


class Consumer(Protocol):
    async def fold(self, page: list[RecordedEvent]) -> None:
        """Take in a page of the feed (in feed order)."""

    async def act(self) -> float:
        """Caught up with the feed: do what is due; the seconds to wait at most before the
        next look (0: look again at once)."""


class Table(Protocol):
    """A game as a consumer folds it from the feed."""

    version: int

    def fold(self, event: RecordedEvent) -> None: ...


T = TypeVar("T", bound=Table)


def game_events(
    page: list[RecordedEvent], tables: MutableMapping[str, T]
) -> Iterator[tuple[str, RecordedEvent]]:
    """The page's events of games, each with its game's id. A game with an event this code
    cannot read is dropped from `tables` (the store has reported it: no one plays on)."""
    for event in page:
        if not event.stream_id.startswith(GAME_PREFIX):
            continue
        game_id = event.stream_id[len(GAME_PREFIX) :]
        if type(event.data) is Unreadable:
            tables.pop(game_id, None)
            continue
        yield game_id, event


def folded(name: str, tables: MutableMapping[str, T], game_id: str, event: RecordedEvent) -> bool:
    """Fold `event` into the game's table unless the table has it already; whether it did.
    A history the rules cannot fold drops the table (logged `<name>_cannot_fold`): not this
    consumer's to play."""
    table = tables[game_id]
    if event.version <= table.version:
        return False
    try:
        table.fold(event)
    except Exception as error:
        log.error(f"{name}_cannot_fold", game_id=game_id, error=repr(error))
        del tables[game_id]
        return False
    return True


class Follower:
    def __init__(
        self,
        name: str,
        feed: Feed,
        consumer: Consumer,
        *,
        start_at: Callable[[], Awaitable[Checkpoint]] | None = None,
        page: int = FEED_PAGE,
    ) -> None:
        """`feed`: the store, or the process's `SharedFeed` around it (the store alone gets
        a shared feed of its own). `start_at`, when given, is asked where to read from
        before the first read and after each failure (the round keeper sweeps, then reads
        from the head it took first); without it the follower reads from the feed's
        beginning and carries on from where it stood."""
        self.name = name
        self.feed = SharedFeed.of(feed)
        self.consumer = consumer
        self.checkpoint: Checkpoint = START
        self.caught_up = asyncio.Event()
        """Set once the follower has read the feed up to its head (the start-up scan)."""
        self._start_at = start_at
        self._page = page
        self._woken = asyncio.Event()
        self._background = Background(f"fairway-{name.replace('_', '-')}", self._run)

    def start(self) -> None:
        self._background.start()

    async def stop(self) -> None:
        await self._background.stop()

    def wake(self) -> None:
        """Look again now (something the feed does not show has happened, e.g. a move ended
        without an append)."""
        self._woken.set()

    async def _run(self) -> None:
        pause = FIRST_PAUSE
        fresh = True
        while True:
            try:
                if fresh and self._start_at is not None:
                    self.checkpoint = await self._start_at()
                fresh = False
                await self.step()
                pause = FIRST_PAUSE
            except Exception as error:
                if isinstance(error, StoreError):
                    log.warning(f"{self.name}_feed_failed", error=str(error))
                else:
                    log.exception(f"{self.name}_failed", error=repr(error))
                fresh = True
                await asyncio.sleep(pause)
                pause = min(pause * 2, LONGEST_PAUSE)

    async def step(self) -> None:
        """Read what is new; once caught up with the feed, act and wait for the next append,
        the consumer's timeout or a wake-up."""
        page = await self.feed.read_feed(self.checkpoint, limit=self._page)
        if page:
            await self.consumer.fold(page)
            self.checkpoint = page[-1].checkpoint
            if len(page) == self._page:
                return
        self.caught_up.set()
        self._woken.clear()
        timeout = await self.consumer.act()
        if timeout > 0 and not self._woken.is_set():
            await self._wait(timeout)

    async def _wait(self, timeout: float) -> None:
        waiting = asyncio.ensure_future(self.feed.wait_for_events(self.checkpoint, timeout))
        woken = asyncio.ensure_future(self._woken.wait())
        try:
            await asyncio.wait((waiting, woken), return_when=asyncio.FIRST_COMPLETED)
        finally:
            woken.cancel()
            if not waiting.done():
                waiting.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await waiting
