"""GET /games (the lobby, served from its projection) and GET /projections (their status).

The lobby pages an index of the lobby projection (projections/lobby.py), the most recently
changed games first, filtered by variant, status and open seats, with a cursor that names
the last game of the page: a page is stable while games change (none is repeated, and one
that does not change is not missed). A game that changes between two pages moves to the
front, where the next listing from the top finds it.

With a spectator delay (FAIRWAY_SPECTATOR_DELAY) a game in play is listed with the `version`
and `hand` a spectator sees (`lobby.as_seen`), no further than GET /games/{id} shows it. Its
`updated_at` (and so its place in the list) stays the moment of its last change: the
spectator's version moves at that same moment, when a seat acts.
"""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Literal

import msgspec
from litestar import Controller, get
from litestar.di import NamedDependency
from litestar.openapi.datastructures import ResponseSpec
from litestar.params import Parameter

from projections import lobby
from projections.base import ProjectionReader
from projections.status import ProjectionStatus
from service.contract.problems import PROBLEM_JSON, ApiError, Problem
from service.contract.public import Variant
from service.contract.schemas import SeatInfo
from service.http import docs
from service.http.params import SpectatorDelay
from service.read.projections import ProjectionService

ListingStatus = Literal["lobby", "playing", "finished"]
"""`lobby`: seats are being claimed; `playing`: started; `finished`: the game has ended."""

_UNAVAILABLE = {
    503: ResponseSpec(
        Problem,
        generate_examples=False,
        description="The read models are unavailable (`projections_unavailable`: Redis does "
        "not answer, or the projection is being rebuilt from zero); play goes on. See "
        "`Retry-After`",
        media_type=PROBLEM_JSON,
    )
}


class GameListing(msgspec.Struct):
    """Public facts about one game: no card, no seed, no token."""

    game_id: str
    variant: Variant
    title: str
    seats: list[SeatInfo]
    free_seats: list[int]
    """Seats nobody holds (empty once every seat is claimed)."""
    status: ListingStatus
    hand: int
    """The current or last hand, 1-based; 0 before the first deal."""
    version: int
    """The game's version when the listing was last updated."""
    created_at: datetime
    updated_at: datetime


class GameList(msgspec.Struct):
    games: list[GameListing]
    next_cursor: str | None
    """Pass as `cursor` (with the same filters) for the next page; null on the last page."""


class ProjectionsStatus(msgspec.Struct):
    projections: list[ProjectionStatus]


# Declared here, mounted by GameController (`list_games = listing.list_games`): Litestar
# wants one controller per path, and /games is also where POST opens a game.
@get(
    "/",
    operation_id="listGames",
    summary="The lobby: games by last change, newest first, filtered and paged",
    responses=docs.problems(400, 429) | _UNAVAILABLE,
)
async def list_games(
    self: Controller,
    reader: NamedDependency[ProjectionReader],
    spectator_delay: SpectatorDelay,
    variant: Annotated[Variant | None, Parameter(description="Only this variant")] = None,
    status: Annotated[
        ListingStatus | None, Parameter(description="Only games in this state")
    ] = None,
    open: Annotated[  # the query parameter's own name (shadows the builtin here only)
        bool | None,
        Parameter(
            description="true: only games in their lobby with a free seat; false: only "
            "games without one",
        ),
    ] = None,
    updated_after: Annotated[
        datetime | None,
        Parameter(description="Only games changed after this time (RFC 3339, with offset)"),
    ] = None,
    limit: Annotated[int, Parameter(ge=1, le=200, description="At most this many")] = 50,
    cursor: Annotated[
        str | None,
        Parameter(max_length=400, description="The `next_cursor` of the previous page"),
    ] = None,
) -> GameList:
    if open and status not in (None, "lobby"):
        return GameList([], None)  # only games in their lobby can be open
    if updated_after is not None and updated_after.tzinfo is None:
        raise ApiError(400, "invalid_request", "updated_after needs a time zone offset (e.g. Z)")
    if open is not None and status is not None and status != "lobby":
        open = None  # a game out of its lobby is never open: `status` alone decides
    index = lobby.index_name(variant, status, open_=open)
    low = float("-inf") if updated_after is None else lobby.score(updated_after) + 1
    page = await reader.page(
        lobby.NAME, index, limit=limit, cursor=cursor, min_score=low, descending=True
    )
    docs = await reader.get_many(lobby.NAME, [lobby.listing_key(e.member) for e in page.entries])
    # A doc missing here was removed between the two reads; a doc that no longer matches
    # the filter changed between them: both are left out, as a read a moment later would.
    games = [
        msgspec.convert(lobby.as_seen(doc, spectator_delay), GameListing)
        for doc in docs
        if doc is not None and (status is None or doc["status"] == status)
    ]
    return GameList(games, page.next_cursor)


class ProjectionsController(Controller):
    path = "/projections"
    tags = ["operations"]

    @get(
        "/",
        operation_id="projectionStatus",
        summary="Each projection's generation, state, checkpoint and lag",
        responses=docs.problems(429) | _UNAVAILABLE,
    )
    async def status(self, projections: NamedDependency[ProjectionService]) -> ProjectionsStatus:
        return ProjectionsStatus(await projections.status())
