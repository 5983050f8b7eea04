"""The read side as the service sees it: the projection store it reads, and the projector
when it runs in this process.

Without REDIS_URL the projections live in memory and the projector runs inside `fairway
serve` (each worker keeps its own, fed by the same event store). With REDIS_URL the service
reads Redis and `fairway projector` writes it; FAIRWAY_PROJECTOR_INLINE=true runs a
projector inside the service as well (several projectors are safe: each batch commits once).
"""

from __future__ import annotations

import asyncio
import contextlib

from events.store import EventStore, StoreError
from projections.base import ProjectionsUnavailable
from projections.catalog import PROJECTIONS, fresh
from projections.memory import MemoryProjectionStore
from projections.projector import Projector
from projections.redis_store import RedisProjectionStore
from projections.status import ProjectionStatus, rebuild_counts, render_metrics, statuses
from projections.store import ProjectionStore
from service.ops.settings import Settings

INLINE_BATCH = 250


def projection_store(settings: Settings) -> ProjectionStore:
    if settings.redis_url:
        return RedisProjectionStore.from_url(settings.redis_url, settings.redis_prefix)
    return MemoryProjectionStore()


class ProjectionService:
    def __init__(self, settings: Settings, feed: EventStore) -> None:
        self.store = projection_store(settings)
        self.feed = feed
        inline = settings.projector_inline or not settings.redis_url
        # Inside the service, smaller batches: a batch's fold holds the event loop that
        # serves requests (a few milliseconds at this size).
        self.projector = (
            Projector(fresh(), self.store, feed, batch=INLINE_BATCH) if inline else None
        )
        self._task: asyncio.Task[None] | None = None

    async def start(self) -> None:
        if self.projector is not None:
            self._task = asyncio.create_task(self.projector.run(), name="fairway-projector")

    async def stop(self) -> None:
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
        await self.store.close()

    async def status(self) -> list[ProjectionStatus]:
        return await statuses(PROJECTIONS, self.store, self.feed)

    async def metrics(self) -> str:
        """The projections' gauges, for /metrics; never fails the scrape."""
        try:
            found = await self.status()
            return render_metrics(found, await rebuild_counts(PROJECTIONS, self.store))
        except (ProjectionsUnavailable, StoreError):
            return render_metrics(None)
