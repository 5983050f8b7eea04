"""Every projection the projector runs, by name. Add a new read model here."""

from __future__ import annotations

from projections.base import Projection
from projections.lobby import LobbyProjection
from projections.players import Players
from projections.ratings import Ratings
from projections.replay import Replays
from projections.scoreboard import Scoreboard
from projections.standings import StandingsProjection

PROJECTIONS: tuple[Projection, ...] = (
    LobbyProjection(),
    Scoreboard(),
    Players(),
    Replays(),
    StandingsProjection(),
    Ratings(),
)


def fresh() -> list[Projection]:
    """New instances of every projection, for one projector: the scoreboard and the replay
    keep a fold cache and the ratings the seat names of games in play, which must not be
    shared by projectors of other stores or threads."""
    return [type(projection)() for projection in PROJECTIONS]


def by_name(name: str) -> Projection:
    for projection in PROJECTIONS:
        if projection.name == name:
            return projection
    known = ", ".join(p.name for p in PROJECTIONS)
    raise KeyError(f"no projection is called {name!r} (known: {known})")
