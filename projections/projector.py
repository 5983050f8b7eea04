"""The projector: keeps every projection's live generation current, and rebuilds.

For each projection it makes sure the alias names a usable generation (building one from
position zero when there is none: first start, or a flushed Redis; when the stored one was
built by another code `version`; or when it was built from another event store than the one
the feed now is, or the feed went back behind it), then follows the feed, waking on the
store's notification and polling as a fallback, and looking again at the poll's pace. A
rebuild fills a new generation while readers keep the old one, switches the alias
(compare-and-set: of two projectors racing, one wins and the other drops its copy), waits
out the readers' alias cache and drops the old generation.

The feed going back: a generation names the event store it is built from (the store's
installation id, `EventStore.installation`). A feed that is another store's (the database
dropped and created again under a running Redis), or whose head stands behind the
generation's checkpoint (a restore to an earlier point), would leave the projection waiting
for ever past events the store will never hold: it is rebuilt from zero instead, logged
(`projection_feed_changed`) and counted (`fairway_projection_rebuilds_total` by reason).

Failures: an unreachable store (Redis or the event store) is retried with back-off, and the
projections catch up when it returns; so is anything unexpected (logged with its traceback as
`projection_crashed`), since a projection whose task ended would stay behind unseen. A
version gap stops that projection (state `failed`, logged, shown in status and metrics)
until an operator rebuilds it (or the feed is found to have changed), and the projector then
follows the new generation.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Literal

import structlog

from events.feed import Feed, SharedFeed
from events.store.base import RecordedEvent, StoreUnavailable
from projections.base import Projection, ProjectionsUnavailable
from projections.demand import Demand
from projections.redis_store import ALIAS_TTL
from projections.runner import BATCH, GenerationGone, Runner, VersionGap
from projections.store import Generation, ProjectionStore

POLL = 0.5
"""Seconds between polls when no notification comes (another process appending to the
embedded store, a lost NOTIFY), and between checks of the alias when idle."""
CHECK_FEED = 5.0
"""Seconds between a running projection's looks at the feed itself (`feed_changed`: the
store's id and its head, two statements, for each projection). At the poll's pace they
were most of what an idle service spent (23 statements a second a worker, docs/BENCHMARKS.md,
"The background consumers paced"); what they look for, a database created again or restored
to an earlier point, is an operator's rare act, noticed within this."""
RETRY_MAX = 5.0
log = structlog.get_logger("fairway.projections")

Reason = Literal["missing", "version", "another_store", "feed_went_back", "requested"]
"""Why a generation was built (the `reason` of `fairway_projection_rebuilds_total`):
`missing` (none live: the first start, a flushed Redis), `version` (the code's changed),
`another_store` (the feed is another event store's), `feed_went_back` (the feed's head is
behind the checkpoint), `requested` (`fairway projector --rebuild`)."""


class NewerVersion(Exception):
    """The live generation was built by a newer version of the projection's code."""

    def __init__(self, name: str, stored: int, mine: int) -> None:
        super().__init__(f"{name}: the live generation is version {stored}, this code {mine}")


@dataclass
class Progress:
    """What this process knows of a projection it runs."""

    state: str = "starting"
    generation: int | None = None
    error: str = ""
    applied: int = 0


class Projector:
    def __init__(
        self,
        projections: Sequence[Projection],
        store: ProjectionStore,
        feed: Feed,
        *,
        poll: float = POLL,
        batch: int = BATCH,
        grace: float = 2 * ALIAS_TTL,
        check_feed: float = CHECK_FEED,
        observe: Callable[[Sequence[RecordedEvent]], None] | None = None,
        demand: Demand | None = None,
    ) -> None:
        """`demand`: follow the feed only when readers ask (projections/demand.py: the
        in-memory read models); None: after every append."""
        self.projections = list(projections)
        self.store = store
        self.feed = SharedFeed.of(feed)  # runners in step share their reads (and, given the
        # process's shared feed, with its other consumers), and are paced: under a steady
        # stream of appends, one read per `PACE` gathers them (events/feed.py)
        self.poll = poll
        self.batch = batch
        self.grace = grace
        self.check_feed = check_feed
        self.observe = observe
        self.demand = demand
        self.progress = {p.name: Progress() for p in self.projections}

    # ---- building ---------------------------------------------------------------------------

    async def build(self, projection: Projection, replacing: int | None, reason: Reason) -> int:
        """Build a new generation from position zero to the feed's end, switch the alias to
        it (if it still names `replacing`), drop the one it replaced; the live generation."""
        name = projection.name
        source = await self.feed.installation()  # before the first read: what it is built from
        fresh = await self.store.begin(name, projection.version, source)
        self._note(name, "rebuilding", replacing, generation_building=fresh.number)
        runner = Runner(projection, self.store, self.feed, self.batch, self.observe)
        try:
            while await runner.step(fresh.number):
                self.progress[name].applied = runner.applied
        except VersionGap as gap:
            await self.store.mark(name, fresh.number, "failed", str(gap))
            raise
        await self.store.mark(name, fresh.number, "running")
        if not await self.store.switch(name, fresh.number, replacing):
            await self.store.drop(name, fresh.number)  # another projector switched first
            live = await self.store.alias(name)
            if live is None:
                raise GenerationGone(name)
            return live
        await self.store.count_rebuild(name, reason)
        self._emit("projection_built", projection=name, generation=fresh.number, reason=reason)
        await asyncio.sleep(self.grace if replacing is not None else 0)  # readers' alias cache
        for older in await self.store.generations(name):
            # The one replaced, and any left by a build that was killed or lost the race (a
            # runner still building one finds it gone and follows the alias instead).
            if older < fresh.number:
                await self.store.drop(name, older)
        return fresh.number

    async def rebuild(self, name: str) -> int:
        """`fairway projector --rebuild NAME`: a new generation from zero, switched in."""
        projection = next(p for p in self.projections if p.name == name)
        while True:
            current = await self.store.alias(name)
            try:
                return await self.build(projection, current, "requested")
            except GenerationGone:
                continue

    async def ensure(self, projection: Projection) -> int:
        """The live generation of `projection`, built first if it is missing, has lost its
        meta record (a flush), was built by another code version, or from another feed than
        this one (`feed_changed`)."""
        name = projection.name
        number = await self.store.alias(name)
        if number is None:
            return await self.build(projection, None, "missing")
        meta = await self.store.generation(name, number)
        if meta is not None and meta.version > projection.version:
            # Built by newer code (a rolling deploy): leave it to the new projectors rather
            # than switch readers back to this code's meaning.
            raise NewerVersion(name, meta.version, projection.version)
        if meta is None:
            return await self.build(projection, number, "missing")
        if meta.version != projection.version:
            return await self.build(projection, number, "version")
        changed = await self.feed_changed(meta)
        if changed is None:
            return number
        reason, detail = changed
        self.feed.forget()  # pages read from what the feed was
        self._emit(
            "projection_feed_changed",
            level="warning",
            projection=name,
            generation=number,
            reason=reason,
            detail=detail,
        )
        return await self.build(projection, number, reason)

    async def feed_changed(self, meta: Generation) -> tuple[Reason, str] | None:
        """Why the feed is not the one `meta`'s generation was built from and has followed,
        with the particulars; None when it is. Read after the generation's checkpoint, the
        head of the same feed is never behind it (the feed only grows)."""
        source = await self.feed.installation()
        if meta.source != source:
            built = meta.source or "a store it does not name (built by an older release)"
            return "another_store", f"built from store {built}; the feed is store {source}"
        head = await self.feed.source_head()  # a replica behind the primary only lags
        if head < meta.checkpoint:
            at = meta.checkpoint
            return (
                "feed_went_back",
                f"the feed ends at ({head.tx_id}, {head.position}), before the generation's"
                f" checkpoint ({at.tx_id}, {at.position})",
            )
        return None

    # ---- following --------------------------------------------------------------------------

    async def run(self) -> None:
        """Follow every projection until cancelled. On demand, the projections hold the
        readers' rounds only while this runs."""
        names = [p.name for p in self.projections]
        if self.demand is not None:
            for name in names:
                self.demand.following(name, "starting")
        try:
            await asyncio.gather(*(self.follow(p) for p in self.projections))
        finally:
            if self.demand is not None:
                for name in names:
                    self.demand.following(name, "stopped")

    async def follow(self, projection: Projection) -> None:
        """Keep `projection` current, until cancelled."""
        name = projection.name
        delay = 0.1
        while True:
            try:
                await self._follow(projection)
            except VersionGap as gap:
                self._note(name, "failed", self.progress[name].generation, error=str(gap))
                self._emit("projection_failed", projection=name, error=str(gap), level="error")
                number = self.progress[name].generation
                if number is not None:
                    with contextlib.suppress(ProjectionsUnavailable):
                        await self.store.mark(name, number, "failed", str(gap))
                await self._stopped(name, number)
                continue
            except GenerationGone:
                continue  # flushed or replaced while building: look again
            except NewerVersion as newer:
                self._note(name, "outdated", self.progress[name].generation, error=str(newer))
                self._emit("projection_outdated", projection=name, error=str(newer))
                await asyncio.sleep(self.poll)
                continue
            except (ProjectionsUnavailable, StoreUnavailable) as error:
                self._note(name, "waiting", self.progress[name].generation, error=str(error))
                self._emit("projection_waiting", projection=name, error=str(error))
                await asyncio.sleep(delay)
                delay = min(delay * 2, RETRY_MAX)
                continue
            except Exception as error:  # a projection that stopped here would stay behind
                # for ever with nothing said (the task's exception unread): say it, back off,
                # and ensure again. Seen: redis-py's cluster client racing two first
                # connections to one node (AttributeError from inside the client).
                self._note(name, "waiting", self.progress[name].generation, error=repr(error))
                log.exception("projection_crashed", projection=name, error=repr(error))
                await asyncio.sleep(delay)
                delay = min(delay * 2, RETRY_MAX)
                continue
            delay = 0.1

    async def _stopped(self, name: str, number: int | None) -> None:
        """Returns once a projection stopped by a gap in generation `number` may go on: an
        operator rebuilt it (the alias moved), or the feed is not the one it was built
        from (then it is rebuilt by itself)."""
        while True:
            await asyncio.sleep(self.poll)
            try:
                if await self.store.alias(name) != number:
                    return
                meta = None if number is None else await self.store.generation(name, number)
                if meta is not None and await self.feed_changed(meta) is not None:
                    return
            except (ProjectionsUnavailable, StoreUnavailable):
                continue

    async def _follow(self, projection: Projection) -> None:
        """Apply the feed to the live generation until it is gone or the alias moves."""
        name = projection.name
        number = await self.ensure(projection)
        self._note(name, "running", number)
        runner = Runner(projection, self.store, self.feed, self.batch, self.observe)
        checked = looked = time.monotonic()
        idle = False
        """On demand: at the feed's end as far as any round asked; the feed is read again
        after the next append if the projection was read lately, else for the next round."""
        while True:
            if idle:
                assert self.demand is not None
                assert runner.checkpoint is not None
                at = runner.checkpoint
                if self.demand.lanes[name].watched():
                    idle = not await self.feed.wait_for_events(at, self.poll)
                else:  # the alias's checks go on at the poll's pace
                    idle = not await self.demand.lanes[name].wanted(at, self.poll)
            else:
                try:
                    read = await runner.step(number)
                except GenerationGone:
                    return
                self.progress[name].applied = runner.applied
                if self.demand is not None and runner.checkpoint is not None:
                    self.demand.reached(name, runner.checkpoint)
                if read < self.batch:  # caught up, as far as the feed showed
                    assert runner.checkpoint is not None
                    if self.demand is None:  # wait for the next append
                        await self.feed.wait_for_events(runner.checkpoint, self.poll)
                    elif not self.demand.lanes[name].behind(runner.checkpoint):
                        idle = True
                    elif read == 0:  # short of a round's target, and nothing shown past
                        await self.feed.wait_for_events(runner.checkpoint, self.poll)
            now = time.monotonic()
            if now - checked >= self.poll:
                checked = now
                if await self.store.alias(name) != number:
                    return  # rebuilt elsewhere, or flushed: ensure again
                meta = await self.store.generation(name, number)
                if meta is None:
                    return  # flushed: ensure again
                if now - looked >= self.check_feed:
                    looked = now
                    if await self.feed_changed(meta) is not None:
                        return  # the feed went back or is another's: ensure again

    # ---- reporting --------------------------------------------------------------------------

    def _note(
        self,
        name: str,
        state: str,
        generation: int | None,
        error: str = "",
        generation_building: int | None = None,
    ) -> None:
        progress = self.progress[name]
        progress.state, progress.error = state, error
        if self.demand is not None:
            self.demand.following(name, state)
        if generation is not None:
            progress.generation = generation
        if generation_building is not None:
            self._emit("projection_rebuilding", projection=name, generation=generation_building)

    def _emit(self, event: str, level: str = "info", **fields: object) -> None:
        getattr(log, level)(event, **fields)
