"""The read side as the service sees it: the projection store it reads, and the projector
when it runs in this process.

Without REDIS_URL the projections live in memory and the projector runs inside `fairway
serve` (each worker keeps its own, fed by the same event store), on demand: a read catches
it up to the feed's head first, and it reads nothing from the feed while nobody reads
(projections/demand.py), but once the feed has been quiet for `QUIET` seconds. With
REDIS_URL the service reads Redis and `fairway projector` writes it;
FAIRWAY_PROJECTOR_INLINE=true runs a projector inside the service as well (several
projectors are safe: each batch commits once).
"""

from __future__ import annotations

import asyncio

from events.feed import SharedFeed
from events.store import EventStore, ReplicaStore, StoreError
from projections.base import ProjectionReader, ProjectionsUnavailable
from projections.catalog import PROJECTIONS, fresh
from projections.demand import LONGEST, WATCH, CaughtUpReader, Demand
from projections.memory import MemoryProjectionStore
from projections.projector import Projector
from projections.redis_store import RedisProjectionStore
from projections.status import ProjectionStatus, rebuild_counts, render_metrics, statuses
from projections.store import ProjectionStore
from service.ops.background import Background
from service.ops.settings import Settings

INLINE_BATCH = 250
ON_DEMAND_BATCH = INLINE_BATCH
"""In memory, a round's pages. Pages of 1000 made a first read under a saturated loop wait
4 s instead of 9.6 (each page's awaits wait a turn of the loop), but a reader now waits
`LONGEST` at most whatever the page; and a round of all six after a busy spell (the quiet
round) held RSS at 157.7 MB with them against 150.8 MB with 250 (main, following every
append: 149.6 MB; docs/BENCHMARKS.md, issue 19, "on a quiet machine, a fourth time")."""
QUIET = 1.0
"""In memory: seconds between looks at the feed's head; when it has not moved since the
last look and the read models are behind it, a round of catch-up of them all."""


def projection_store(settings: Settings) -> ProjectionStore:
    if settings.redis_url:
        return RedisProjectionStore.from_url(settings.redis_url, settings.redis_prefix)
    return MemoryProjectionStore()


class ProjectionService:
    def __init__(
        self,
        settings: Settings,
        events: EventStore,
        feed: EventStore | None = None,
        shared: SharedFeed | None = None,
        quiet: float = QUIET,
        watch: float = WATCH,
        longest: float = LONGEST,
    ) -> None:
        """`events`: the primary; `feed`: where the projector reads the feed (a replica,
        FAIRWAY_FEED_DATABASE_URL; the primary when None); `shared`: the process's shared
        feed around it, which the projector reads through with the other consumers. The lag
        is measured against the primary's feed, so a replica's lag shows in it. `quiet`,
        `watch`, `longest`: in memory, see `QUIET` and projections/demand.py's `WATCH` and
        `LONGEST`."""
        self.store = projection_store(settings)
        self.events = events
        self.feed = feed or events
        inline = settings.projector_inline or not settings.redis_url
        self.shared = settings.redis_url is not None
        """Whether the projector writes read models every process shares (Redis): then one
        per deployment is enough (service/ops/leader.py); in memory, each process its own."""
        read = shared or self.feed
        names = [p.name for p in PROJECTIONS]
        self.demand = None if self.shared else Demand(read, names, longest, watch)
        """In memory: the readers' rounds of catch-up (None on Redis: followed eagerly)."""
        # Inside the service, smaller batches: a batch's fold holds the event loop that
        # serves requests (a few milliseconds at this size).
        self.projector = (
            Projector(
                fresh(),
                self.store,
                read,
                batch=INLINE_BATCH if self.demand is None else ON_DEMAND_BATCH,
                demand=self.demand,
            )
            if inline
            else None
        )
        self.reader: ProjectionReader = (
            self.store if self.demand is None else CaughtUpReader(self.store, self.demand)
        )
        """What the read routes read (the `reader` dependency): in memory, caught up first."""
        self.quiet = quiet
        self._background = Background("fairway-projector", self._project)

    async def _project(self) -> None:
        if self.projector is None:
            return
        if self.demand is None:
            await self.projector.run()
            return
        async with asyncio.TaskGroup() as group:
            group.create_task(self.projector.run())
            group.create_task(self._when_quiet(self.demand))

    async def _when_quiet(self, demand: Demand) -> None:
        """A round of every projection once the feed's head has stood still for `quiet`
        seconds (one look a `quiet`), unless they are there already."""
        last = caught = None
        while True:
            await asyncio.sleep(self.quiet)
            try:
                head = await self.feed.feed_head()
            except StoreError:
                continue
            if head == last and head != caught:
                await demand.catch_up(watch=False)
                caught = head
            last = head

    async def caught_up(self, watch: bool = True) -> None:
        """In memory: once the projector has read the feed to its head (as it stood when
        called); on Redis at once (readers there cannot ask the projector). `watch`: count
        it as a read of every read model (each then follows every append for a while)."""
        if self.demand is not None:
            await self.demand.catch_up(watch=watch)

    def start(self) -> None:
        """Run the projector in this process, if it has one."""
        self._background.start()

    async def stop(self) -> None:
        """Stop the projector; the store stays open (`close`)."""
        await self._background.stop()

    async def close(self) -> None:
        await self.stop()
        await self.store.close()

    async def status(self) -> list[ProjectionStatus]:
        """`GET /projections`, an operator's look: in memory, caught up first (not counted
        as a read: the read models not read lately stay unfollowed)."""
        await self.caught_up(watch=False)
        return await statuses(PROJECTIONS, self.store, self.events)

    async def metrics(self) -> str:
        """The projections' gauges, for /metrics; never fails the scrape. Not caught up
        first: a scrape every few seconds would fold every read model as often, the cost
        the in-memory read models no longer pay while nobody reads them; so in memory the lag
        of one not read lately is what its next read will fold (projections/demand.py)."""
        replica = await replica_metrics(self.feed)
        try:
            found = await statuses(PROJECTIONS, self.store, self.events)
            return render_metrics(found, await rebuild_counts(PROJECTIONS, self.store)) + replica
        except (ProjectionsUnavailable, StoreError):
            return render_metrics(None) + replica


async def replica_metrics(feed: EventStore) -> str:
    """With a feed replica: whether it answers, and how far its replay is behind (seconds;
    absent while unknown). Nothing without one."""
    if not isinstance(feed, ReplicaStore):
        return ""
    out = [
        "# HELP fairway_feed_replica_up 1 when the feed replica answers, else 0.",
        "# TYPE fairway_feed_replica_up gauge",
    ]
    try:
        _, lag = await feed.replication_lag_row()
    except StoreError:
        return "\n".join([*out, "fairway_feed_replica_up 0"]) + "\n"
    out.append("fairway_feed_replica_up 1")
    if lag is not None:
        out += [
            "# HELP fairway_feed_replica_lag_seconds How far the replica's replay is behind.",
            "# TYPE fairway_feed_replica_lag_seconds gauge",
            f"fairway_feed_replica_lag_seconds {lag:.6f}",
        ]
    return "\n".join(out) + "\n"
