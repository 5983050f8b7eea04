"""Every projection the projector runs, by name. Add a new read model here."""

from __future__ import annotations

from projections.base import Projection
from projections.lobby import LobbyProjection

PROJECTIONS: tuple[Projection, ...] = (LobbyProjection(),)


def by_name(name: str) -> Projection:
    for projection in PROJECTIONS:
        if projection.name == name:
            return projection
    known = ", ".join(p.name for p in PROJECTIONS)
    raise KeyError(f"no projection is called {name!r} (known: {known})")
