"""The feed as one process's consumers read it: one read for all who ask at once.

Every consumer of the feed in a process (the projector's runners, the referee, the bot runner,
the round keeper) reads through one `SharedFeed` (`fairway serve` makes one per process), so
that those at the same checkpoint pay for one read between them, not one each. Two things
are shared:

- Reads: a read still in flight, or a page read a moment ago that holds at least as many
  events as asked (a page cut to the limit asked). A page that ran short (the feed's end) is
  not kept: it may have grown; a full one cannot change (the feed never gains an event before
  one it has shown), unless the store itself is replaced, when the projector has it `forget`
  them.
- Waits: consumers caught up at one checkpoint share one wait for the next append (each wait
  reads the store to look, so four consumers waiting apart would look four times), each until
  its own timeout; one that comes late to a wait that has woken finds the news without asking
  again (the feed holds an event after that checkpoint for ever). After the wake-up each
  lingers as it asks (`linger`: seconds for the appends that follow to gather, so that one
  read serves several), counted from the wake-up, so consumers that linger alike read at the
  same moment, and share that read.
- The pace: a read that reached the feed's end (a short page) holding events of more than
  one stream (a stream of appends) is followed by the next read after the same checkpoint no
  sooner than `pace` seconds after it ended: a wait after it first sleeps that long, on one
  timer for all who read it, then looks. So at 200 or 800 appends a second the consumers
  read about once per `pace` (a look and a page), not once or twice per append. One stream's
  events alone (a lone action after a quiet spell; a consumer's own move read back, as the
  referee playing out a game's turns one after another) are followed at once, and so is a
  page cut to its limit (catching up, a rebuild). No wake-up is lost:
  the look after the pace sees whatever was appended during it. Its cost is up to `pace` of
  lag for the background consumers (the projection lag target is 100 ms; the referee's
  clocks and the bots' think times are seconds); the live streams do not read through here.
  The next read after such a checkpoint asks as many events as the largest read that ended
  there, so that consumers of different page sizes (the projector's and the followers')
  woken together share it.

A failure of a shared read or wait reaches every consumer that joined it; each handles it on
its own (backs off and reads again), and the next read or wait asks the store anew.
"""

from __future__ import annotations

import asyncio
from collections import OrderedDict
from dataclasses import dataclass
from typing import Final, Protocol

from events.store.base import START, Checkpoint, RecordedEvent

PACE: Final = 0.03
"""Seconds from a read that reached the feed's end (having found several streams' events)
to the next read after it: see the module's docstring."""


class Feed(Protocol):
    """What a consumer needs of the event store."""

    async def read_feed(
        self, after: Checkpoint = START, limit: int = 1000
    ) -> list[RecordedEvent]: ...

    async def wait_for_events(self, after: Checkpoint, timeout: float) -> bool: ...

    async def feed_head(self) -> Checkpoint: ...

    async def read_stream(
        self,
        stream_id: str,
        from_version: int = 1,
        limit: int | None = None,
        *,
        prev_hash: bytes | None = None,
    ) -> list[RecordedEvent]:
        """One stream's events: what a projection that folds the domain reads to refold a
        game it has not seen from its start (projections/folds.py)."""
        ...

    async def installation(self) -> str:
        """The event store's id (`EventStore.installation`): a generation names the store
        it was built from, and is rebuilt when the feed is another's."""
        ...


@dataclass(eq=False)
class _Wait:
    """One wait for the store's next append after a checkpoint, and who waits on it."""

    task: asyncio.Task[float | None]
    """The loop time of the wake-up; None when its timeout passed first."""
    waiters: int = 0


class SharedFeed:
    def __init__(self, feed: Feed, keep: int = 8, pace: float = PACE) -> None:
        self.feed = feed
        self._keep = keep
        self.pace = pace
        self._pages: OrderedDict[Checkpoint, tuple[int, asyncio.Task[list[RecordedEvent]]]] = (
            OrderedDict()
        )
        self._waits: dict[Checkpoint, _Wait] = {}
        self._woke: OrderedDict[Checkpoint, float] = OrderedDict()
        """When a wait after each of the last few checkpoints woke (the feed holds an event
        after it since then)."""
        self._lingers: dict[tuple[Checkpoint, float], asyncio.Future[None]] = {}
        self._ended: OrderedDict[Checkpoint, tuple[float, int]] = OrderedDict()
        """For the last few checkpoints where a read of several streams' events reached the
        feed's end: when it ended, and the most events asked by a read that ended there."""

    @classmethod
    def of(cls, feed: Feed) -> SharedFeed:
        """`feed` if it is shared already (the process's), else one of its own around it."""
        return feed if isinstance(feed, SharedFeed) else cls(feed)

    # ---- reads ------------------------------------------------------------------------------

    async def read_feed(self, after: Checkpoint = START, limit: int = 1000) -> list[RecordedEvent]:
        kept = self._pages.get(after)
        if kept is not None and _serves(*kept, limit):
            task = kept[1]
        else:
            ended = self._ended.get(after)
            asked = limit if ended is None else max(limit, ended[1])
            task = asyncio.ensure_future(self.feed.read_feed(after, asked))
            task.add_done_callback(_retrieved)
            task.add_done_callback(lambda done: self._read(done, asked))
            self._pages[after] = (asked, task)
            self._pages.move_to_end(after)
            while len(self._pages) > self._keep:
                self._pages.popitem(last=False)
        page = await asyncio.shield(task)
        if not page:  # (a feed that went back: what woke a wait after `after` is gone)
            self._woke.pop(after, None)
        return page[:limit]

    def _read(self, task: asyncio.Task[list[RecordedEvent]], asked: int) -> None:
        """Note where a read of several streams' events reached the feed's end (`_ended`)."""
        if task.cancelled() or task.exception() is not None:
            return
        page = task.result()
        if not page or len(page) >= asked:
            return
        first = page[0].stream_id
        if all(event.stream_id == first for event in page):
            return
        end = page[-1].checkpoint
        before = self._ended.pop(end, None)
        now = asyncio.get_running_loop().time()
        self._ended[end] = (now, asked) if before is None else (before[0], max(asked, before[1]))
        while len(self._ended) > self._keep:
            self._ended.popitem(last=False)

    # ---- waits ------------------------------------------------------------------------------

    async def wait_for_events(self, after: Checkpoint, timeout: float, linger: float = 0.0) -> bool:
        """Wait until the feed holds an event after `after` (True), at most `timeout`
        seconds (False); joins a wait after the same checkpoint under way. Paced: after a
        read of several streams' events that reached the feed's end at `after`, no look
        before `pace` has passed. `linger`: seconds from the wake-up to wait on before
        returning, for the appends that follow it to gather; consumers woken together that
        linger alike return together, and then share the read that follows."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout
        ended = self._ended.get(after)
        if ended is not None and self.pace > 0 and ended[0] + self.pace > loop.time():
            if ended[0] + self.pace >= deadline:  # due to look again before the pace ends
                await asyncio.sleep(timeout)
                return False
            await asyncio.shield(self._lingering(after, ended[0] + self.pace))
        woke = self._woke.get(after)
        while woke is None:
            remaining = deadline - loop.time()
            if remaining <= 0:
                return False
            woke = await self._join(after, remaining)
        if linger > 0:
            await asyncio.shield(self._lingering(after, woke + linger))
        return True

    def _lingering(self, after: Checkpoint, until: float) -> asyncio.Future[None]:
        """One timer for all who linger until `until` after `after`: they go on in the same
        turn of the loop, so their reads join (one that slept on its own might start its
        read just after the others' had ended)."""
        key = (after, until)
        timer = self._lingers.get(key)
        if timer is None:
            loop = asyncio.get_running_loop()
            timer = self._lingers[key] = loop.create_future()

            def ring() -> None:
                self._lingers.pop(key, None)
                if not timer.done():
                    timer.set_result(None)

            loop.call_at(until, ring)
        return timer

    def waiting(self, after: Checkpoint) -> int:
        """How many consumers wait for an append after `after` now."""
        wait = self._waits.get(after)
        return 0 if wait is None or wait.task.done() else wait.waiters

    async def _join(self, after: Checkpoint, timeout: float) -> float | None:
        """The wake-up time of the wait after `after` (joined, or started for `timeout`);
        None when it ends without one or `timeout` passes first. A wait nobody waits on any
        more is cancelled."""
        wait = self._waits.get(after)
        if wait is None or wait.task.done() or wait.task.cancelling():
            wait = _Wait(asyncio.ensure_future(self._wait(after, timeout)))
            wait.task.add_done_callback(lambda task: self._waited(after, task))
            self._waits[after] = wait
        wait.waiters += 1
        try:
            await asyncio.wait((wait.task,), timeout=timeout)
        finally:
            wait.waiters -= 1
            if not wait.waiters and not wait.task.done():
                wait.task.cancel()
        if not wait.task.done() or wait.task.cancelled():
            return None
        return wait.task.result()  # a failure reaches every waiter

    async def _wait(self, after: Checkpoint, timeout: float) -> float | None:
        if not await self.feed.wait_for_events(after, timeout):
            return None
        woke = asyncio.get_running_loop().time()
        self._woke[after] = woke
        while len(self._woke) > self._keep:
            self._woke.popitem(last=False)
        return woke

    def _waited(self, after: Checkpoint, task: asyncio.Task[float | None]) -> None:
        wait = self._waits.get(after)
        if wait is not None and wait.task is task:
            del self._waits[after]
        _retrieved(task)

    # ---- the store beneath ------------------------------------------------------------------

    async def feed_head(self) -> Checkpoint:
        return await self.feed.feed_head()

    async def installation(self) -> str:
        return await self.feed.installation()

    async def source_head(self) -> Checkpoint:
        """The head of the store the feed follows (`EventStore.source_head`: the primary's,
        for a feed read from a replica); a feed that does not say is its own source."""
        source_head = getattr(self.feed, "source_head", None)
        if source_head is None:
            return await self.feed.feed_head()
        head: Checkpoint = await source_head()
        return head

    def forget(self) -> None:
        """Drop the pages and wake-ups kept: the feed is another store's, or went back, so
        a page read after a checkpoint may read otherwise now, or nothing follow it."""
        self._pages.clear()
        self._woke.clear()
        self._ended.clear()

    async def read_stream(
        self,
        stream_id: str,
        from_version: int = 1,
        limit: int | None = None,
        *,
        prev_hash: bytes | None = None,
    ) -> list[RecordedEvent]:
        """Not shared: a refold reads one game's stream, which no other consumer wants."""
        return await self.feed.read_stream(stream_id, from_version, limit, prev_hash=prev_hash)


def _serves(read: int, task: asyncio.Task[list[RecordedEvent]], limit: int) -> bool:
    """Whether a read of `read` events serves a read of `limit`: still in flight and asking
    as many, or done and holding as many (the first `limit` events after its checkpoint,
    which cannot change)."""
    if not task.done():
        return read >= limit
    return not task.cancelled() and task.exception() is None and len(task.result()) >= limit


def _retrieved(task: asyncio.Task[object]) -> None:
    """A shared task's failure reaches whoever awaits it, not the log."""
    if not task.cancelled():
        task.exception()
