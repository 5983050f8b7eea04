"""A tournament's standings and its rounds table by table, served from the standings read
model (service/read/standings.py over projections/standings.py), never from the event
store: 503 `projections_unavailable` with Retry-After when Redis does not answer.

- GET /tournaments/{id}/standings[?round=N]: live, or as of closed round N; JSON, or CSV
  with `Accept: text/csv` (RFC 4180; a text cell starting with = + - @, a tab or a carriage
  return is prefixed with `'`, so no spreadsheet reads a player's name as a formula).
- GET /tournaments/{id}/standings/stream: NDJSON, one line per change of the standings, the
  first the standings now, the last once the tournament has ended. Silence is broken by a
  blank line every FAIRWAY_SSE_HEARTBEAT seconds (a client skips blank lines).
- GET /tournaments/{id}/rounds/{n}/results: each table, with links to its game, its hands'
  replays and its export.

A tournament the read model does not know (yet: it follows the feed) is 404
`tournament_not_found`.
"""

from __future__ import annotations

import csv
import io
from typing import Annotated, Any

from litestar import Controller, Request, Response, get
from litestar.di import NamedDependency
from litestar.openapi.datastructures import ResponseSpec
from litestar.params import Parameter
from litestar.response import Stream

from projections import standings
from projections.base import ProjectionReader
from service.contract import standings as s
from service.contract.problems import ApiError
from service.http import docs
from service.http.controllers.readmodels import UNAVAILABLE
from service.http.middleware import HEAD
from service.read.standings import LOOKS, as_of, lines, read

CSV = "text/csv"
JSON = "application/json"
NDJSON = "application/x-ndjson"
FRESH = 0.05
"""The oldest shared read a GET is answered from (`Looks`)."""
CSV_COLUMNS = (
    "rank", "player", "total", "games", "hands", "won", "average", "byes", "withdrawn", "bot",
)  # fmt: skip
MATCHPOINT_COLUMNS = ("percent", "matchpoints", "top", "boards")
"""Added after `CSV_COLUMNS` when the tournament's scoring is `matchpoints`."""
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

NOT_FOUND = {404: docs.problem("No such tournament in the read model (`tournament_not_found`)")}
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
        404: docs.problem(
            "No such tournament (`tournament_not_found`), or the round has not started "
            "(`round_not_found`)"
        )
    }
)

# ---- the answers' bodies -------------------------------------------------------------------


def csv_text(rows: list[s.StandingsRow], scoring: str = "total") -> bytes:
    """RFC 4180 (CRLF, quotes doubled), a header row first; text cells guarded against
    formula injection. With matchpoints, their columns follow."""
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\r\n", quoting=csv.QUOTE_MINIMAL)
    matched = scoring == "matchpoints"
    writer.writerow(CSV_COLUMNS + (MATCHPOINT_COLUMNS if matched else ()))
    for row in rows:
        extra = (
            [
                "" if row.percent is None else f"{row.percent:g}",
                row.matchpoints,
                row.top,
                row.boards,
            ]
            if matched
            else []
        )
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
                row.bot or "",
                *extra,
            ]
        )
    return out.getvalue().encode()


def _cell(text: str) -> str:
    return "'" + text if text.startswith(_FORMULA) else text


STANDINGS = (
    {
        200: docs.Negotiated(
            s.Standings,
            description="The standings: JSON, or CSV with `Accept: text/csv`",
            also={
                CSV: docs.text(
                    "RFC 4180: a header row, then one row per player in rank order; with "
                    "scoring `matchpoints`, the columns percent, matchpoints, top and boards "
                    "follow",
                    csv_text(
                        [
                            s.StandingsRow(1, "Ada", 31, 2, 6, 2, 5.167, 0, False),
                            s.StandingsRow(2, "Robo", 38, 2, 6, 0, 6.333, 0, False, "greedy"),
                            s.StandingsRow(3, "=Bob", 45, 2, 6, 0, 7.5, 0, True),
                        ]
                    ).decode(),
                )
            },
        )
    }
    | docs.problems(400, 429)
    | UNAVAILABLE
    | {
        404: docs.problem(
            "No such tournament (`tournament_not_found`), or no such round in it "
            "(`round_not_found`: past the rounds planned)"
        ),
        409: docs.problem("The round has not closed yet (`round_not_closed`)"),
    }
)


def _links(game_id: str, hands: int) -> s.TableLinks:
    game = f"/games/{game_id}"
    return s.TableLinks(
        game=game,
        export=f"{game}/export",
        replays=[f"{game}/hands/{hand}/replay" for hand in range(1, hands + 1)],
    )


def _table(result: Any, status: s.TableStatus, bots: dict[str, str]) -> s.TableLine:
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
        bots=[bots.get(player) for player in result.players],
    )


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
            text = csv_text(body.rows, body.scoring)
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
                tables=[_table(result, "ended", tournament.bots) for result in closed.results],
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
                _table(result, phase, tournament.bots)  # type: ignore[arg-type]
                for result, phase in standings.live_tables(tournament, games)
            ],
            byes=list(tournament.live.byes),
            bye_score=None,
            revision=standings.revision(tournament, games),
        )
