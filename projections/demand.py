"""Read models caught up when read: the in-memory projector follows the feed only on demand.

Without Redis every worker of `fairway serve` keeps its own read models in memory. Following
the feed after every wake-up, each worker read and folded every event of every worker: about
a quarter of the CPU an action cost (docs/BENCHMARKS.md, "What the in-process projector
costs an action"), for read models nobody may be reading. So, in memory, the projector's
runners wait for a reader instead of an append, and a read first catches them up:

- A round of catch-up reads the feed's head, then has every projection that is following
  (state `running`, `starting` or `rebuilding`) read and fold until its checkpoint reaches
  that head, in pages (the runner's batch), yielding the loop between them. A read is
  answered once its round is done, so it sees every append the feed showed when it came
  (read-your-writes within the process; across processes, as far as the feed shows them).
- One round at a time: a reader that comes while one is under way (whose head may be older
  than the reader's request) waits for the next, and every reader that comes meanwhile
  shares that next round. A crowd of readers costs one round after another, never one each.
- A projection that stopped (a version gap, an outdated version, the event store down and
  backed off) does not hold a round: the reader is answered from what it holds, as before.
  Nor does a round outlast `LONGEST`: past it the reader is answered from what is there.
- A slow round in the background (`ProjectionService`, every `projections_catch_up`
  seconds) keeps the lag bounded while nobody reads, so a first read after a quiet spell
  finds little to fold.

The Redis projector (`fairway projector`, FAIRWAY_PROJECTOR_INLINE) does not use this: its
read models are shared, and readers in other processes cannot ask it.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Sequence
from dataclasses import dataclass, field

from events.feed import Feed
from events.store.base import Checkpoint, StoreError
from projections.base import Doc, IndexPage, ProjectionReader

LONGEST = 10.0
"""Seconds a reader waits for its round at most, then is answered from what is there (a
rebuild from zero of a large feed; a runner backing off from a failing event store)."""
FOLLOWING = frozenset({"starting", "running", "rebuilding"})
"""The projector's states in which a projection serves rounds (projections/projector.py)."""


@dataclass(eq=False)
class Round:
    """One catch-up: every following projection to the feed's head as read at its start."""

    number: int
    target: Checkpoint
    finished: asyncio.Future[None] = field(
        default_factory=lambda: asyncio.get_running_loop().create_future()
    )


class Demand:
    """Between the readers, who ask for rounds, and the projector's runners, which serve
    them (`wanted`, then `served`)."""

    def __init__(self, feed: Feed, names: Sequence[str], longest: float = LONGEST) -> None:
        self.feed = feed
        self.longest = longest
        self.round: Round | None = None
        """The latest round asked for."""
        self.rounds = 0
        """Rounds asked for so far."""
        self._served = dict.fromkeys(names, 0)
        """The last round each projection served."""
        self._following: set[str] = set()
        """The projections that hold rounds (the projector runs, and they follow)."""
        self._asked: asyncio.Future[None] | None = None
        self._current: asyncio.Task[None] | None = None
        self._next: asyncio.Task[None] | None = None

    # ---- the readers' side ------------------------------------------------------------------

    async def catch_up(self) -> None:
        """Returns once every following projection has read the feed up to its head as it
        stood after this call began (or `longest` has passed)."""
        if self._next is None:
            self._next = asyncio.ensure_future(self._after(self._current))
            self._next.add_done_callback(_retrieved)
        await asyncio.shield(self._next)

    async def _after(self, previous: asyncio.Task[None] | None) -> None:
        """The next round, begun once the one under way (if any) has ended."""
        if previous is not None and not previous.done():
            await asyncio.wait((previous,))
        self._current, self._next = self._next, None  # readers from now on: the next one
        try:
            target = await self.feed.feed_head()
        except StoreError:
            return  # the event store is down: answer from what the read models hold
        self.rounds += 1
        self.round = round_ = Round(self.rounds, target)
        asked, self._asked = self._asked, None
        if asked is not None and not asked.done():
            asked.set_result(None)
        self._check(round_)
        with contextlib.suppress(TimeoutError):
            async with asyncio.timeout(self.longest):
                await asyncio.shield(round_.finished)

    # ---- the runners' side ------------------------------------------------------------------

    async def wanted(self, name: str, timeout: float) -> Round | None:
        """The round `name` has yet to serve, waiting for one at most `timeout` seconds."""
        round_ = self.round
        if round_ is not None and round_.number > self._served[name]:
            return round_
        if self._asked is None or self._asked.done():
            self._asked = asyncio.get_running_loop().create_future()
        with contextlib.suppress(TimeoutError):
            async with asyncio.timeout(timeout):
                await asyncio.shield(self._asked)
        round_ = self.round
        return round_ if round_ is not None and round_.number > self._served[name] else None

    def served(self, name: str, round_: Round) -> None:
        """`name` has read the feed to `round_`'s target (or to its end, read after the
        round began)."""
        self._served[name] = max(self._served[name], round_.number)
        self._check(round_)

    def following(self, name: str, state: str) -> None:
        """The projector's state for `name`: one that is not following holds no round."""
        if state in FOLLOWING:
            self._following.add(name)
        else:
            self._following.discard(name)
        if self.round is not None:
            self._check(self.round)

    def _check(self, round_: Round) -> None:
        done = all(self._served[n] >= round_.number for n in self._following)
        if done and not round_.finished.done():
            round_.finished.set_result(None)


class CaughtUpReader:
    """The read models as readers see them in memory: each read waits for a round of
    catch-up (`Demand.catch_up`) before it looks."""

    def __init__(self, store: ProjectionReader, demand: Demand) -> None:
        self.store = store
        self.demand = demand

    async def get(self, projection: str, key: str) -> Doc | None:
        await self.demand.catch_up()
        return await self.store.get(projection, key)

    async def get_many(self, projection: str, keys: Sequence[str]) -> list[Doc | None]:
        await self.demand.catch_up()
        return await self.store.get_many(projection, keys)

    async def counters(self, projection: str, key: str) -> dict[str, int]:
        await self.demand.catch_up()
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
        await self.demand.catch_up()
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
