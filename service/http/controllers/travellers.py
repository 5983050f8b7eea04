"""GET /tournaments/{id}/rounds/{n}/travellers[?hand=&seat=]: a duplicate round's travellers,
served from the standings read model (projections/boards.py), JSON or CSV.

A traveller is one board: hand h, seat position s of the round, held by one player at every
table. It lists every table's result on it, the matchpoints each earned against the others
(domain/tournament/matchpoints.py) and a link to the table's replay of that hand, so a player
sees how the others played the same cards. A live round shows only the boards no table
still has to play: through the fewest hands a table still playing has ended, the horizon of
the duplicate gate (service/tournaments/duplicate.py); a hand past it is 409
`deals_to_come`.
"""

from __future__ import annotations

import csv
import io
from typing import Annotated, Any

from litestar import Controller, Request, Response, get
from litestar.di import NamedDependency
from litestar.params import Parameter

from domain.tournament.matchpoints import Board
from projections import boards, standings
from projections.base import ProjectionReader
from service.contract import standings as s
from service.contract.problems import ApiError
from service.http import docs
from service.http.controllers.readmodels import UNAVAILABLE
from service.http.controllers.standings import CSV, JSON, RoundNumber, TournamentId, _cell
from service.read.standings import read

COLUMNS = (
    "round",
    "hand",
    "seat",
    "table",
    "game_id",
    "player",
    "score",
    "matchpoints",
    "top",
    "percent",
    "replay",
)
HandFilter = Annotated[
    int | None, Parameter(ge=1, le=1000, description="Only this hand's boards (1-based)")
]
SeatFilter = Annotated[
    int | None, Parameter(ge=0, le=9, description="Only this seat position's boards (0-based)")
]


def _body(tournament_id: str, number: int, found: list[Board]) -> list[s.Traveller]:
    return [
        s.Traveller(
            hand=board.hand,
            seat=board.seat,
            entries=[
                s.TravellerEntry(
                    table=e.table,
                    game_id=e.game_id,
                    player=e.player,
                    score=e.score,
                    matchpoints=e.matchpoints,
                    top=e.top,
                    percent=e.percent,
                    replay=f"/games/{e.game_id}/hands/{board.hand}/replay",
                )
                for e in board.entries
            ],
        )
        for board in found
    ]


def csv_text(body: s.Travellers) -> bytes:
    """RFC 4180, one row per table per board, a header row first."""
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\r\n", quoting=csv.QUOTE_MINIMAL)
    writer.writerow(COLUMNS)
    for board in body.travellers:
        for e in board.entries:
            percent = "" if e.percent is None else f"{e.percent:g}"
            place = [body.round, board.hand, board.seat, e.table, e.game_id, _cell(e.player)]
            writer.writerow([*place, e.score, e.matchpoints, e.top, percent, e.replay])
    return out.getvalue().encode()


EXAMPLE = s.Travellers(
    "0f1e2d3c4b5a6978",
    1,
    "closed",
    "matchpoints",
    1,
    [
        s.Traveller(
            1,
            0,
            [
                s.TravellerEntry(1, "a1b2c3d4e5f60718", "Ada", 4, 2, 2, 100.0, "/games/…"),
                s.TravellerEntry(2, "91a2b3c4d5e6f708", "Bob", 9, 0, 2, 0.0, "/games/…"),
            ],
        )
    ],
    42,
)
TRAVELLERS = (
    {
        200: docs.Negotiated(
            s.Travellers,
            description="The travellers: JSON, or CSV with `Accept: text/csv`",
            also={
                CSV: docs.text(
                    "RFC 4180: a header row, then one row per table per board",
                    csv_text(EXAMPLE).decode(),
                )
            },
        )
    }
    | docs.problems(400, 429)
    | UNAVAILABLE
    | {
        404: docs.problem(
            "No such tournament (`tournament_not_found`), the round has not started "
            "(`round_not_found`), or a closed round has no such hand (`hand_not_found`)"
        ),
        409: docs.problem(
            "The tournament's tables are not dealt the same cards (`not_duplicate`), or the "
            "hand is still to be played at a table of the round (`deals_to_come`)"
        ),
        422: docs.problem("No such seat position at the round's tables (`invalid_seat`)"),
    }
)


class TravellersController(Controller):
    path = "/tournaments"
    tags = ["tournaments"]

    @get(
        "/{tournament_id:str}/rounds/{number:int}/travellers",
        operation_id="getTravellers",
        summary="A duplicate round's travellers: every table's result on the same cards",
        description="For each hand and seat position of the round (or the one `hand` and "
        "`seat` name): every table's score, the matchpoints it earned against the others "
        "and a link to its replay. A live round shows only the hands every table still "
        "playing has ended. `Accept: text/csv` answers CSV (RFC 4180).",
        responses=TRAVELLERS,
    )
    async def travellers(
        self,
        tournament_id: TournamentId,
        number: RoundNumber,
        request: Request[Any, Any, Any],
        reader: NamedDependency[ProjectionReader],
        hand: HandFilter = None,
        seat: SeatFilter = None,
    ) -> Response[s.Travellers]:
        tournament, games = await read(reader, tournament_id)
        if not tournament.duplicate:
            raise ApiError(
                409,
                "not_duplicate",
                f"tournament {tournament_id} deals every table its own cards: no two results "
                "share a deal, so it has no travellers",
            )
        found = boards.round_boards(tournament, number, games)
        if found is None:
            raise ApiError(404, "round_not_found", f"round {number} has not started")
        closed = standings.closed_round(tournament, number)
        shown = max((board.hand for board in found), default=0)
        if hand is not None and hand > shown:
            if closed is not None:
                raise ApiError(404, "hand_not_found", f"round {number} played {shown} hands")
            raise ApiError(
                409,
                "deals_to_come",
                f"hand {hand} of round {number} is still to be played at a table of the "
                "round: its travellers are shown once every table has played it",
            )
        seats = max((len(t.players) for t in closed.results), default=0) if closed else None
        if seats is None and tournament.live is not None:
            seats = max((len(t.players) for t in tournament.live.tables), default=0)
        if seat is not None and seat >= (seats or 0):
            raise ApiError(422, "invalid_seat", f"the round's tables have {seats} seats")
        picked = [
            board
            for board in found
            if (hand is None or board.hand == hand) and (seat is None or board.seat == seat)
        ]
        body = s.Travellers(
            tournament_id=tournament_id,
            round=number,
            status="closed" if closed is not None else "playing",
            scoring=tournament.scoring,  # type: ignore[arg-type]
            hands=shown,
            travellers=_body(tournament_id, number, picked),
            revision=closed.revision if closed else standings.revision(tournament, games),
        )
        headers = {"Vary": "Accept"}
        if request.accept.best_match([JSON, CSV], default=JSON) == CSV:
            text = csv_text(body)
            return Response(text, media_type=f"{CSV}; charset=utf-8", headers=headers)  # type: ignore[arg-type]
        return Response(body, headers=headers)
