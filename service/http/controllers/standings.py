"""A tournament's standings, its rounds table by table, and the players' ratings, served
from the read models (projections/standings.py, projections/ratings.py), never from the
event store: 503 `projections_unavailable` with Retry-After when Redis does not answer.

- GET /tournaments/{id}/standings[?round=N]: live, or as of closed round N; JSON, or CSV
  with `Accept: text/csv` (RFC 4180; a text cell starting with = + - @, a tab or a carriage
  return is prefixed with `'`, so no spreadsheet reads a player's name as a formula).
- GET /tournaments/{id}/standings/stream: NDJSON, one line per change of the standings, the
  first the standings now, the last once the tournament has ended. Silence is broken by a
  blank line every FAIRWAY_SSE_HEARTBEAT seconds (a client skips blank lines).
- GET /tournaments/{id}/rounds/{n}/results: each table, with links to its game, its hands'
  replays and its export.
- GET /ratings (the leaderboard, a page at a time) and GET /ratings/{name}.

A tournament the read model does not know (yet: it follows the feed) is 404
`tournament_not_found`.
"""

from __future__ import annotations

import asyncio
import csv
import io
from collections.abc import AsyncIterator
from typing import Annotated, Any

import msgspec
from litestar import Controller, Request, Response, get
from litestar.di import NamedDependency
from litestar.openapi.datastructures import ResponseSpec
from litestar.params import Parameter
from litestar.response import Stream

from domain.tournament.standings import Row
from projections import ratings, standings
from projections.base import Doc, ProjectionReader, ProjectionsUnavailable
from service.contract import standings as s
from service.contract.problems import PROBLEM_JSON, ApiError, Problem
from service.http import docs
from service.http.controllers.readmodels import UNAVAILABLE
from service.http.middleware import HEAD

CSV = "text/csv"
JSON = "application/json"
NDJSON = "application/x-ndjson"
POLL = 0.25
"""Seconds between two looks at the read model for the streams of one tournament."""
FRESH = 0.05
"""The oldest shared read a GET is answered from (`Looks`)."""
CSV_COLUMNS = ("rank", "player", "total", "games", "hands", "won", "average", "byes", "withdrawn")
_FORMULA = ("=", "+", "-", "@", "\t", "\r")

TournamentId = Annotated[
    str,
    Parameter(pattern=r"^[A-Za-z0-9_-]{1,64}(?![\s\S])", description="The tournament's id"),
]
RoundNumber = Annotated[int, Parameter(ge=1, le=10_000, description="The round, 1-based")]
AsOfRound = Annotated[
    int | None,
    Parameter(
        ge=1,
        le=10_000,
        description="The standings as they were when this round closed (rounds 1..N alone); "
        "absent: live",
    ),
]
RatedName = Annotated[
    str, Parameter(min_length=1, max_length=40, description="A seat name, as claimed")
]


def _problem(description: str) -> ResponseSpec:
    return ResponseSpec(
        Problem, generate_examples=False, description=description, media_type=PROBLEM_JSON
    )


NOT_FOUND = {404: _problem("No such tournament in the read model (`tournament_not_found`)")}
STANDINGS = (
    docs.problems(400, 429)
    | UNAVAILABLE
    | {
        404: _problem(
            "No such tournament (`tournament_not_found`), or no such round in it "
            "(`round_not_found`: past the rounds planned)"
        ),
        409: _problem("The round has not closed yet (`round_not_closed`)"),
    }
)
STREAM = (
    {
        200: ResponseSpec(
            s.Standings,
            generate_examples=False,
            media_type=NDJSON,
            description="NDJSON: one `Standings` a line, now and at each change; a blank "
            "line while idle; ends after the line of the ended tournament",
        )
    }
    | NOT_FOUND
    | UNAVAILABLE
    | docs.problems(400, 429)
)
RESULTS = (
    docs.problems(400, 429)
    | UNAVAILABLE
    | {
        404: _problem(
            "No such tournament (`tournament_not_found`), or the round has not started "
            "(`round_not_found`)"
        )
    }
)
RATING = (
    docs.problems(400, 429)
    | UNAVAILABLE
    | {404: _problem("No finished game has rated that name (`rating_not_found`)")}
)


# ---- reading the read model ----------------------------------------------------------------


async def read(
    reader: ProjectionReader, tournament_id: str
) -> tuple[standings.Tournament, list[Doc | None]]:
    """The tournament's doc and its live round's game docs (two round trips)."""
    name = standings.StandingsProjection.name
    doc = await reader.get(name, standings.tournament_key(tournament_id))
    if doc is None:
        raise ApiError(404, "tournament_not_found", f"no tournament {tournament_id!r}")
    tournament = standings.load_tournament(doc)
    keys = standings.live_keys(tournament)
    games = await reader.get_many(name, keys) if keys else []
    return tournament, games


def _rows(rows: list[Row]) -> list[s.StandingsRow]:
    return [s.StandingsRow(**msgspec.structs.asdict(row)) for row in rows]


def live(
    tournament_id: str, tournament: standings.Tournament, games: list[Doc | None]
) -> s.Standings:
    closed = len(tournament.closed)
    last = max((c.round for c in tournament.closed), default=0)
    return s.Standings(
        tournament_id=tournament_id,
        name=tournament.name,
        variant=tournament.variant,  # type: ignore[arg-type]
        round=tournament.live.round if tournament.live is not None else last,
        live=tournament.live is not None,
        rounds_closed=closed,
        rounds=tournament.rounds,
        ended=tournament.ended,
        revision=standings.revision(tournament, games),
        rows=_rows(standings.now(tournament, games)),
    )


def as_of(tournament_id: str, tournament: standings.Tournament, number: int) -> s.Standings:
    closed = standings.closed_round(tournament, number)
    if closed is None:
        if number > max(tournament.rounds, len(tournament.closed)):
            raise ApiError(
                404,
                "round_not_found",
                f"tournament {tournament_id!r} plays {tournament.rounds} rounds",
            )
        raise ApiError(409, "round_not_closed", f"round {number} has not closed yet")
    return s.Standings(
        tournament_id=tournament_id,
        name=tournament.name,
        variant=tournament.variant,  # type: ignore[arg-type]
        round=number,
        live=False,
        rounds_closed=sum(c.round <= number for c in tournament.closed),
        rounds=tournament.rounds,
        ended=tournament.ended and number == max(c.round for c in tournament.closed),
        revision=closed.revision,
        rows=_rows(standings.as_of(tournament, number)),
    )


def csv_text(rows: list[s.StandingsRow]) -> bytes:
    """RFC 4180 (CRLF, quotes doubled), a header row first; text cells guarded against
    formula injection."""
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\r\n", quoting=csv.QUOTE_MINIMAL)
    writer.writerow(CSV_COLUMNS)
    for row in rows:
        writer.writerow(
            [
                row.rank,
                _cell(row.player),
                row.total,
                row.games,
                row.hands,
                row.won,
                "" if row.average is None else f"{row.average:g}",
                row.byes,
                "true" if row.withdrawn else "false",
            ]
        )
    return out.getvalue().encode()


def _cell(text: str) -> str:
    return "'" + text if text.startswith(_FORMULA) else text


def _links(game_id: str, hands: int) -> s.TableLinks:
    game = f"/games/{game_id}"
    return s.TableLinks(
        game=game,
        export=f"{game}/export",
        replays=[f"{game}/hands/{hand}/replay" for hand in range(1, hands + 1)],
    )


def _table(result: Any, status: s.TableStatus) -> s.TableLine:
    return s.TableLine(
        table=result.table,
        game_id=result.game_id,
        players=list(result.players),
        totals=list(result.totals),
        hands=result.hands,
        winners=list(result.winners),
        resigned=list(result.resigned),
        status=status,
        links=_links(result.game_id, result.hands),
    )


class Look(msgspec.Struct):
    """One read of a tournament's docs, and its live standings once someone asked."""

    tournament: standings.Tournament
    games: list[Doc | None]
    live: s.Standings | None = None


class Looks:
    """Readers of one process share their reads of each tournament: a read in flight is
    joined, and one younger than the asker's `max_age` is reused. So a crowd of GETs or
    streams costs a few Redis reads a second per tournament, not one each (and no crowd of
    Redis connections); an answer may trail the read model by at most `max_age`."""

    def __init__(self) -> None:
        self._looks: dict[tuple[int, str], tuple[float, asyncio.Task[Look]]] = {}

    async def look(self, reader: ProjectionReader, tournament_id: str, max_age: float) -> Look:
        loop = asyncio.get_running_loop()
        key = (id(reader), tournament_id)
        held = self._looks.get(key)
        if held is not None and (not held[1].done() or loop.time() - held[0] < max_age):
            return await asyncio.shield(held[1])

        async def fetch() -> Look:
            return Look(*await read(reader, tournament_id))

        task = asyncio.ensure_future(fetch())
        task.add_done_callback(lambda t: t.cancelled() or t.exception())
        now = loop.time()
        for old in [k for k, (at, t) in self._looks.items() if t.done() and now - at > 60]:
            del self._looks[old]
        self._looks[key] = (now, task)
        return await asyncio.shield(task)

    async def standings(
        self, reader: ProjectionReader, tournament_id: str, max_age: float = POLL
    ) -> s.Standings:
        found = await self.look(reader, tournament_id, max_age)
        if found.live is None:
            found.live = live(tournament_id, found.tournament, found.games)
        return found.live


LOOKS = Looks()


async def lines(
    reader: ProjectionReader, tournament_id: str, heartbeat: float, looks: Looks = LOOKS
) -> AsyncIterator[bytes]:
    """The standings now, then again at each change, until the tournament has ended."""
    loop = asyncio.get_running_loop()
    sent: tuple[Any, ...] | None = None
    quiet_until = loop.time() + heartbeat
    while True:
        try:
            now = await looks.standings(reader, tournament_id)
        except (ApiError, ProjectionsUnavailable):
            return  # the client reconnects, and hears the problem then
        what = (now.rows, now.round, now.live, now.rounds_closed, now.ended)
        if what != sent:
            sent = what
            yield msgspec.json.encode(now) + b"\n"
            quiet_until = loop.time() + heartbeat
            if now.ended:
                return
        elif loop.time() >= quiet_until:
            yield b"\n"
            quiet_until = loop.time() + heartbeat
        await asyncio.sleep(POLL)


# ---- the endpoints -------------------------------------------------------------------------


class StandingsController(Controller):
    path = "/tournaments"
    tags = ["tournaments"]

    @get(
        "/{tournament_id:str}/standings",
        operation_id="getStandings",
        summary="The standings, live or as of a closed round (JSON, or CSV)",
        description="JSON by default; `Accept: text/csv` answers CSV (RFC 4180, a header "
        "row; a text cell starting with `=`, `+`, `-`, `@`, a tab or a carriage return is "
        "prefixed with `'` against formula injection).",
        responses=STANDINGS,
    )
    async def standings(
        self,
        tournament_id: TournamentId,
        request: Request[Any, Any, Any],
        reader: NamedDependency[ProjectionReader],
        round: AsOfRound = None,  # the query parameter's name
    ) -> Response[s.Standings]:
        if round is None:
            body = await LOOKS.standings(reader, tournament_id, FRESH)
        else:
            found = await LOOKS.look(reader, tournament_id, FRESH)
            body = as_of(tournament_id, found.tournament, round)
        headers = {"Vary": "Accept"}
        if request.accept.best_match([JSON, CSV], default=JSON) == CSV:
            text = csv_text(body.rows)
            return Response(text, media_type=f"{CSV}; charset=utf-8", headers=headers)  # type: ignore[arg-type]
        return Response(body, headers=headers)

    @get(
        "/{tournament_id:str}/standings/stream",
        operation_id="streamStandings",
        summary="The standings as they change (NDJSON), until the tournament ends",
        description="One JSON line (a `Standings`) now, then one at each change of the "
        "standings; the stream ends after the line of the ended tournament. A blank line "
        "is sent every FAIRWAY_SSE_HEARTBEAT seconds of silence: skip it.",
        media_type=NDJSON,
        responses=STREAM,
    )
    async def stream(
        self,
        tournament_id: TournamentId,
        request: Request[Any, Any, Any],
        reader: NamedDependency[ProjectionReader],
        sse_heartbeat: NamedDependency[float],
    ) -> Stream:
        await read(reader, tournament_id)  # 404 or 503 before the stream begins
        headers = {"Cache-Control": "no-cache", "X-Accel-Buffering": "no"}
        if request.scope.get(HEAD):  # headers only, not for ever
            return Stream((), media_type=NDJSON, headers=headers)
        return Stream(
            lines(reader, tournament_id, sse_heartbeat), media_type=NDJSON, headers=headers
        )

    @get(
        "/{tournament_id:str}/rounds/{number:int}/results",
        operation_id="getRoundResults",
        summary="A round table by table, with links to each game's replays and export",
        responses=RESULTS,
    )
    async def results(
        self,
        tournament_id: TournamentId,
        number: RoundNumber,
        reader: NamedDependency[ProjectionReader],
    ) -> s.RoundResults:
        tournament, games = await read(reader, tournament_id)
        closed = standings.closed_round(tournament, number)
        if closed is not None:
            return s.RoundResults(
                tournament_id=tournament_id,
                round=number,
                status="closed",
                tables=[_table(result, "ended") for result in closed.results],
                byes=list(closed.byes),
                bye_score=closed.bye_score,
                revision=closed.revision,
            )
        if tournament.live is None or tournament.live.round != number:
            raise ApiError(404, "round_not_found", f"round {number} has not started")
        return s.RoundResults(
            tournament_id=tournament_id,
            round=number,
            status="playing",
            tables=[
                _table(result, phase)  # type: ignore[arg-type]
                for result, phase in standings.live_tables(tournament, games)
            ],
            byes=list(tournament.live.byes),
            bye_score=None,
            revision=standings.revision(tournament, games),
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
    ) -> s.Leaderboard:
        name = ratings.Ratings.name
        page = await reader.page(name, ratings.LEADERBOARD, limit=limit, cursor=cursor)
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
        doc = await reader.get(ratings.Ratings.name, ratings.rating_key(name))
        if doc is None:
            raise ApiError(404, "rating_not_found", f"no finished game has rated {name!r}")
        return msgspec.convert(doc, s.Rating)
