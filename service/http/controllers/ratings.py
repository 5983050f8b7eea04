"""/ratings: the players' ratings, served from their read model (projections/ratings.py),
never from the event store: the leaderboard a page at a time, and one player's rating; 503
`projections_unavailable` with Retry-After when Redis does not answer."""

from __future__ import annotations

import unicodedata
from typing import Annotated

import msgspec
from litestar import Controller, get
from litestar.di import NamedDependency
from litestar.params import Parameter

from projections import ratings
from projections.base import ProjectionReader
from service.contract import standings as s
from service.contract.problems import ApiError
from service.http import docs
from service.http.controllers.readmodels import UNAVAILABLE

RatedName = Annotated[
    str, Parameter(min_length=1, max_length=40, description="A seat name, as claimed")
]

RATING = (
    docs.problems(400, 429)
    | UNAVAILABLE
    | {404: docs.problem("No finished game has rated that name (`rating_not_found`)")}
)


class RatingsController(Controller):
    path = "/ratings"
    tags = ["players"]

    @get(
        "/",
        operation_id="listRatings",
        summary="The rating leaderboard: the best ordinal first, a page at a time",
        responses=docs.problems(400, 429) | UNAVAILABLE,
    )
    async def leaderboard(
        self,
        reader: NamedDependency[ProjectionReader],
        limit: Annotated[int, Parameter(ge=1, le=200, description="At most this many")] = 50,
        cursor: Annotated[
            str | None,
            Parameter(max_length=400, description="The `next_cursor` of the previous page"),
        ] = None,
        bots: Annotated[
            bool,
            Parameter(
                description="Whether names a bot has played are listed (`false`: the "
                "leaderboard of people alone; a cursor pages the board it came from)"
            ),
        ] = True,
    ) -> s.Leaderboard:
        name = ratings.Ratings.name
        board = ratings.LEADERBOARD if bots else ratings.PEOPLE
        page = await reader.page(name, board, limit=limit, cursor=cursor)
        found = await reader.get_many(
            name, [ratings.rating_key(entry.member) for entry in page.entries]
        )
        return s.Leaderboard(
            ratings=[msgspec.convert(doc, s.Rating) for doc in found if doc is not None],
            next_cursor=page.next_cursor,
        )

    @get(
        "/{name:str}",
        operation_id="getRating",
        summary="A player's rating",
        responses=RATING,
    )
    async def rating(self, name: RatedName, reader: NamedDependency[ProjectionReader]) -> s.Rating:
        name = unicodedata.normalize("NFC", name)  # as names are stored
        doc = await reader.get(ratings.Ratings.name, ratings.rating_key(name))
        if doc is None:
            raise ApiError(404, "rating_not_found", f"no finished game has rated {name!r}")
        return msgspec.convert(doc, s.Rating)
