"""Where each projection stands: its live generation, state, checkpoint and lag.

Lag is measured against the feed: `events` behind is the feed head's position minus the
checkpoint's (exact while positions are dense; an append rolled back in PostgreSQL leaves a
hole in the sequence, so it can over-count by the number of such holes), and `seconds`
behind is now minus the recorded time of the oldest event not yet applied (0 when caught
up). Any process that reaches the stores can answer, not only the one running the projector.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from typing import Literal

import msgspec

from events.store.base import START, Checkpoint
from events.store.contract import EventStore
from projections.base import Projection
from projections.store import ProjectionStore

StatusState = Literal["running", "rebuilding", "failed", "missing"]


class FeedPosition(msgspec.Struct, frozen=True):
    """A checkpoint in the feed: the writing transaction and the global position."""

    tx_id: int
    position: int


class Lag(msgspec.Struct, frozen=True):
    events: int
    """Events in the feed not yet applied (see docs/API.md for how it is counted)."""
    seconds: float
    """Now minus the recorded time of the oldest event not yet applied; 0 when caught up."""


class ProjectionStatus(msgspec.Struct, frozen=True):
    name: str
    version: int
    """The version of the projection's code in this process."""
    state: StatusState
    """`missing`: no generation serves readers (being built from zero, e.g. after a flush)."""
    generation: int | None
    """The generation readers use (null when missing)."""
    checkpoint: FeedPosition | None
    lag: Lag | None
    """Null when missing."""
    error: str | None = None
    """Why the projection stopped (a version gap), when failed."""
    rebuilding: int | None = None
    """A generation being built to replace the live one, if any."""


async def projection_status(
    projection: Projection,
    store: ProjectionStore,
    feed: EventStore,
    head: Checkpoint,
    now: datetime | None = None,
) -> ProjectionStatus:
    name = projection.name
    number = await store.alias(name)
    newest = await store.newest(name)
    building = None
    if newest is not None and newest != number:
        pending = await store.generation(name, newest)
        building = newest if pending is not None and pending.state == "rebuilding" else None
    meta = None if number is None else await store.generation(name, number)
    if meta is None:
        return ProjectionStatus(
            name, projection.version, "missing", None, None, None, None, building
        )
    checkpoint = meta.checkpoint
    lag = await lag_behind(feed, checkpoint, head, now)
    state: StatusState = "failed" if meta.state == "failed" else "running"
    return ProjectionStatus(
        name,
        projection.version,
        state,
        meta.number,
        FeedPosition(checkpoint.tx_id, checkpoint.position),
        lag,
        meta.error or None,
        building,
    )


async def lag_behind(
    feed: EventStore, checkpoint: Checkpoint, head: Checkpoint, now: datetime | None = None
) -> Lag:
    if head == START or checkpoint >= head:
        return Lag(0, 0.0)
    oldest = await feed.read_feed(checkpoint, limit=1)
    if not oldest:
        return Lag(0, 0.0)
    now = now or datetime.now(UTC)
    seconds = max(0.0, (now - oldest[0].recorded_at).total_seconds())
    return Lag(max(1, head.position - checkpoint.position), round(seconds, 6))


async def statuses(
    projections: Sequence[Projection], store: ProjectionStore, feed: EventStore
) -> list[ProjectionStatus]:
    head = await feed.feed_head()
    return [await projection_status(p, store, feed, head) for p in projections]


async def rebuild_counts(
    projections: Sequence[Projection], store: ProjectionStore
) -> dict[str, dict[str, int]]:
    """Each projection's rebuilds switched in, by reason (`Projector.build`)."""
    return {p.name: await store.rebuilds(p.name) for p in projections}


def render_metrics(
    found: Sequence[ProjectionStatus] | None, rebuilds: Mapping[str, Mapping[str, int]] = {}
) -> str:
    """Prometheus gauges and the rebuild counters; `found` None when the projection store
    cannot be reached."""
    out = [
        "# HELP fairway_projections_available Whether the projection store answers.",
        "# TYPE fairway_projections_available gauge",
        f"fairway_projections_available {0 if found is None else 1}",
    ]
    if found is None:
        return "\n".join(out) + "\n"
    out += [
        "# HELP fairway_projection_lag_events Feed events not yet applied, per projection.",
        "# TYPE fairway_projection_lag_events gauge",
    ]
    out += [f'fairway_projection_lag_events{{projection="{s.name}"}} {_events(s)}' for s in found]
    out += [
        "# HELP fairway_projection_lag_seconds Age of the oldest event not yet applied.",
        "# TYPE fairway_projection_lag_seconds gauge",
    ]
    out += [f'fairway_projection_lag_seconds{{projection="{s.name}"}} {_seconds(s)}' for s in found]
    out += [
        "# HELP fairway_projection_up 1 when the projection serves and runs, else 0.",
        "# TYPE fairway_projection_up gauge",
    ]
    out += [
        f'fairway_projection_up{{projection="{s.name}",state="{s.state}"}} '
        f"{1 if s.state == 'running' else 0}"
        for s in found
    ]
    out += [
        "# HELP fairway_projection_rebuilds_total Generations built and switched in, per "
        "projection, by reason (missing, version, another_store, feed_went_back, requested).",
        "# TYPE fairway_projection_rebuilds_total counter",
    ]
    out += [
        f'fairway_projection_rebuilds_total{{projection="{name}",reason="{reason}"}} {count}'
        for name, counts in rebuilds.items()
        for reason, count in sorted(counts.items())
    ]
    return "\n".join(out) + "\n"


def _events(status: ProjectionStatus) -> str:
    return "NaN" if status.lag is None else str(status.lag.events)


def _seconds(status: ProjectionStatus) -> str:
    return "NaN" if status.lag is None else repr(status.lag.seconds)
