"""Operations: liveness, readiness (the store answers) and Prometheus metrics.

With a feed replica (FAIRWAY_FEED_DATABASE_URL) that does not answer, `/ready` stays 200 but
says `degraded`, naming it: commands still work on the primary, and taking every instance out
of the load balancer for a replica would stop them too.

Readiness is bounded like every request: the store gives up after its `db_timeout`, so a
database that goes silent turns `/ready` to 503 within that time, not the partition's."""

from __future__ import annotations

from litestar import Controller, MediaType, Response, get
from litestar.di import NamedDependency
from litestar.openapi.datastructures import ResponseSpec

from events.store import EventStore, StoreError
from service.contract.schemas import Health
from service.ops.metrics import Metrics
from service.read.projections import ProjectionService


class OpsController(Controller):
    tags = ["operations"]

    @get("/health", operation_id="health", summary="The process is alive")
    async def health(self) -> Health:
        return Health("ok")

    @get(
        "/ready",
        operation_id="ready",
        summary="The event store answers",
        responses={
            503: ResponseSpec(
                Health,
                generate_examples=False,
                description="The event store does not answer; see `Retry-After`",
            )
        },
    )
    async def ready(
        self, store: NamedDependency[EventStore], feed: NamedDependency[EventStore]
    ) -> Response[Health]:
        kind = type(store).__name__
        try:
            await store.feed_head()
        except StoreError as error:
            return Response(
                Health("unavailable", kind, str(error)),
                status_code=503,
                headers={"Retry-After": "1"},
            )
        if feed is not store:
            try:
                await feed.feed_head()
            except StoreError as error:
                # Commands and reads still work on the primary; the feed's readers wait and
                # retry, and live streams poll the primary meanwhile: keep serving, say so.
                return Response(Health("degraded", kind, f"the feed replica: {error}"))
        return Response(Health("ok", kind))

    @get(
        "/metrics", operation_id="metrics", summary="Prometheus metrics", media_type=MediaType.TEXT
    )
    async def metrics(
        self, metrics: NamedDependency[Metrics], projections: NamedDependency[ProjectionService]
    ) -> str:
        return metrics.render() + await projections.metrics()
