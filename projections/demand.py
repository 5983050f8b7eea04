"""Read models caught up when read: the in-memory projector follows the feed only on demand.

Without Redis every worker of `fairway serve` keeps its own read models in memory. Following
the feed after every wake-up, each worker read and folded every event of every worker: about
a quarter of the CPU an action cost (docs/BENCHMARKS.md, "What the in-process projector
costs an action"), for read models nobody may be reading. So, in memory, the projector's
runners wait for a reader instead of an append, and a read first catches them up:

- A round of catch-up reads the feed's head, then has the projection read (if it is
  following: state `running`, `starting` or `rebuilding`) read the feed and fold it until
  its checkpoint reaches that head, in pages (the runner's batch), yielding the loop
  between them. A read that needs a round is answered once its round is done, so it sees
  every append the feed showed when it came. Each projection has rounds of its own: a read
  of the lobby folds the lobby alone.
- A projection read within the last `WATCH` seconds follows every append as the projector
  did before (a reader polling the lobby keeps it followed), and its reads are answered at
  once, as far as it has followed (a few ms to a few hundred ms behind, as before): waiting
  for a round there cost a read under a saturated loop 377 ms at the median instead of
  35 ms (docs/BENCHMARKS.md, issue 19, "Read models caught up when read"). So
  read-your-writes holds for the first read after `WATCH` seconds without one, and the
  reads after it trail the feed as they did.
- One round at a time, per projection: a reader that comes while one is under way (whose
  head may be older than the reader's request) waits for the next, and every reader that
  comes meanwhile shares that next round. A crowd of readers costs one round after
  another, never one each.
- A projection that stopped (a version gap, an outdated version, the event store down and
  backed off) does not hold a round: the reader is answered from what it holds, as before.
  Nor does a round outlast `LONGEST`: past it the reader is answered from what is there.
- In the background (`ProjectionService`), a round of every projection once the feed has
  been quiet for a moment: a deployment at rest is caught up, and its first read finds
  nothing to fold. Not on a timer under load: there a round folds the same events a read
  would fold later, and rounds every 5 s kept most of the cost (docs/BENCHMARKS.md,
  issue 19, "Read models caught up when read"). `GET /projections` catches up first;
  /metrics does not (a scrape every few seconds would fold everything as often): there a
  read model not read lately shows the lag its next read will fold.

The Redis projector (`fairway projector`, FAIRWAY_PROJECTOR_INLINE) does not use this: its
read models are shared, and readers in other processes cannot ask it.
"""

from __future__ import annotations

import asyncio
import contextlib
import math
from collections.abc import Sequence
from dataclasses import dataclass, field

from events.feed import Feed
from events.store.base import Checkpoint, StoreError
from projections.base import Doc, IndexPage, ProjectionReader

LONGEST = 2.0
"""Seconds a reader waits for its round at most, then is answered from what is there while
the round goes on (the first read after a busy minute without one: its fold took 4-7 s
under a saturated closed loop; a rebuild from zero of a large feed; a runner backing off
from a failing event store). A bounded wait over a fresh answer: a client's lobby should
not hang for seconds, and an answer trailing the feed is what every other read gets."""
WATCH = 60.0
"""Seconds after a read of a projection during which its runner follows every append."""
FOLLOWING = frozenset({"starting", "running", "rebuilding"})
"""The projector's states in which a projection serves rounds (projections/projector.py)."""


@dataclass(eq=False)
class Round:
    """One catch-up of one projection to the feed's head as read at its start."""

    number: int
    target: Checkpoint
    finished: asyncio.Future[None] = field(
        default_factory=lambda: asyncio.get_running_loop().create_future()
    )


class Lane:
    """One projection's rounds: asked by readers, served by its runner."""

    def __init__(self, feed: Feed, longest: float, watch: float) -> None:
        self.feed = feed
        self.longest = longest
        self.watch = watch
        self.round: Round | None = None
        """The latest round asked for."""
        self.rounds = 0
        """Rounds asked for so far."""
        self.at: Checkpoint | None = None
        """Where the runner's last step left the live generation."""
        self.following = False
        """Whether the runner serves rounds (the projector runs, and the projection follows)."""
        self.read_at = -math.inf
        """The loop's time of the last read."""
        self._asked: asyncio.Future[None] | None = None
        self._current: asyncio.Task[None] | None = None
        self._next: asyncio.Task[None] | None = None

    async def catch_up(self, watch: bool = True) -> None:
        """A round, shared; none when the runner follows every append (read lately): the
        read is then answered at once, as far as it has followed, as before. `watch`: a
        read (the runner follows every append for `watch` seconds after it)."""
        following_appends = self.following and self.at is not None and self.watched()
        if watch:
            self.read_at = asyncio.get_running_loop().time()
        if following_appends:
            return
        if self._next is None:
            self._next = asyncio.ensure_future(self._after(self._current))
            self._next.add_done_callback(_retrieved)
        await asyncio.shield(self._next)

    async def _after(self, previous: asyncio.Task[None] | None) -> None:
        """The next round, begun once the one under way (if any) has ended."""
        if previous is not None and not previous.done():
            await asyncio.wait((previous,))
        self._current, self._next = self._next, None  # readers from now on: the next one
        if not self.following:
            return  # answered from what the read model holds
        try:
            target = await self.feed.feed_head()
        except StoreError:
            return  # the event store is down: likewise
        self.rounds += 1
        self.round = round_ = Round(self.rounds, target)
        asked, self._asked = self._asked, None
        if asked is not None and not asked.done():
            asked.set_result(None)
        self.check()
        with contextlib.suppress(TimeoutError):
            async with asyncio.timeout(self.longest):
                await asyncio.shield(round_.finished)

    def watched(self) -> bool:
        """Read within the last `watch` seconds: then the runner follows every append, so
        that the next read finds it (nearly) there."""
        return asyncio.get_running_loop().time() - self.read_at < self.watch

    def behind(self, at: Checkpoint) -> bool:
        """Whether a round asked for is not finished, its target past `at`."""
        round_ = self.round
        return round_ is not None and not round_.finished.done() and at < round_.target

    async def wanted(self, at: Checkpoint, timeout: float) -> bool:
        """Whether a round asks the runner at `at` to read on, waiting at most `timeout`
        seconds for one."""
        if self.behind(at):
            return True
        if self._asked is None or self._asked.done():
            self._asked = asyncio.get_running_loop().create_future()
        with contextlib.suppress(TimeoutError):
            async with asyncio.timeout(timeout):
                await asyncio.shield(self._asked)
        return self.behind(at)

    def check(self) -> None:
        """Finish the latest round once the runner stands at its target (or past), or once
        nobody follows to take it there."""
        round_ = self.round
        if round_ is None or round_.finished.done():
            return
        if not self.following or (self.at is not None and self.at >= round_.target):
            round_.finished.set_result(None)


class Demand:
    """Between the readers, who ask for rounds of the projections they read, and the
    projector's runners, which serve them. Each projection has its own rounds (`Lane`): a
    read of the lobby folds the lobby alone, and a read model nobody reads is folded only by
    the background's rounds. A projection read within the last `watch` seconds follows
    every append, as the projector did before, so that a reader polling it finds little to
    fold; one not read for that long waits for the next round instead."""

    def __init__(
        self, feed: Feed, names: Sequence[str], longest: float = LONGEST, watch: float = WATCH
    ) -> None:
        self.lanes = {name: Lane(feed, longest, watch) for name in names}

    @property
    def rounds(self) -> int:
        """Rounds asked for so far, of all projections."""
        return sum(lane.rounds for lane in self.lanes.values())

    # ---- the readers' side ------------------------------------------------------------------

    async def catch_up(self, names: Sequence[str] | None = None, watch: bool = True) -> None:
        """Returns once each projection of `names` (all when None) that follows has read
        the feed up to its head as it stood after this call began (or `longest` has
        passed). `watch`: counted as a read of them (not the background's rounds, nor an
        operator's look at their status)."""
        lanes = self.lanes
        chosen = lanes.values() if names is None else [lanes[n] for n in names if n in lanes]
        await asyncio.gather(*(lane.catch_up(watch) for lane in chosen))

    # ---- the runners' side ------------------------------------------------------------------

    def reached(self, name: str, at: Checkpoint) -> None:
        """`name`'s live generation stands at `at` (a round that asked no further ends)."""
        lane = self.lanes[name]
        lane.at = at
        lane.check()

    def following(self, name: str, state: str) -> None:
        """The projector's state for `name`: one that is not following holds no round."""
        lane = self.lanes[name]
        lane.following = state in FOLLOWING
        if state == "rebuilding":
            lane.at = None  # a new generation, from zero
        lane.check()


class CaughtUpReader:
    """The read models as readers see them in memory: each read waits for a round of
    catch-up (`Demand.catch_up`) before it looks."""

    def __init__(self, store: ProjectionReader, demand: Demand) -> None:
        self.store = store
        self.demand = demand

    async def get(self, projection: str, key: str) -> Doc | None:
        await self.demand.catch_up((projection,))
        return await self.store.get(projection, key)

    async def get_many(self, projection: str, keys: Sequence[str]) -> list[Doc | None]:
        await self.demand.catch_up((projection,))
        return await self.store.get_many(projection, keys)

    async def counters(self, projection: str, key: str) -> dict[str, int]:
        await self.demand.catch_up((projection,))
        return await self.store.counters(projection, key)

    async def page(
        self,
        projection: str,
        index: str,
        *,
        limit: int,
        cursor: str | None = None,
        min_score: float = float("-inf"),
        max_score: float = float("inf"),
        descending: bool = False,
    ) -> IndexPage:
        await self.demand.catch_up((projection,))
        return await self.store.page(
            projection,
            index,
            limit=limit,
            cursor=cursor,
            min_score=min_score,
            max_score=max_score,
            descending=descending,
        )


def _retrieved(task: asyncio.Task[None]) -> None:
    if not task.cancelled():
        task.exception()
