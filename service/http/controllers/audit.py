"""/games/{id}: the replay of a finished hand, the audit report, the export.

Three readers of the stored history. Replay folds the cached events with the decider that
played them; the audit and the export read the stream's rows as stored, so a damaged
history is reported (audit) or refused (export), never half served. A reader without a seat
token is held back as on every read of the game (`held_back`: the spectator delay, the
duplicate gate): a hand that ended past where it may see is still in play to it, and the
audit is of the history as far as it may see; the export is of a finished game, shown whole.
"""

from __future__ import annotations

import asyncio
from collections import OrderedDict
from typing import Annotated, Any

from litestar import Controller, Request, Response, get, post
from litestar.di import NamedDependency
from litestar.openapi.datastructures import ResponseSpec
from litestar.params import Body, Parameter

from events.schema.tournament import TournamentEnded
from events.stored import StoredRow
from projections.base import ProjectionReader
from service.audit import AuditReport, audit_game
from service.audit.audit import RulesVersionRefused
from service.audit.chain import check_chain
from service.audit.export import ExportRefused, export_game, ndjson_lines
from service.audit.keys import ReceiptKeys
from service.audit.receipts import check_receipts
from service.audit.tournament import PREFIX, audit_tournament, read_games
from service.audit.tournament_report import TournamentAuditReport
from service.contract import schemas as s
from service.contract.export import GameExport
from service.contract.problems import PROBLEM_JSON, ApiError, Problem
from service.contract.receipts import ReceiptsToCheck
from service.http import docs
from service.http.controllers.readmodels import held_back, seats_of
from service.http.params import GameId, Gate, IfNoneMatch, SpectatorDelay, answer
from service.play.games import GameService
from service.play.loading import stream_id
from service.read.readmodels import REPLAYS
from service.read.replay import ReplayRefused, replay_hand
from service.tournaments.duplicate import peers_in

NDJSON = "application/x-ndjson"
RECEIPTS_BODY_BYTES = 64 * 1024
"""The body `POST /games/{id}/audit` takes: its 100 receipts (`ReceiptsToCheck`) as answers
give them are 25 KB in compact JSON, 34 KB indented by 4 (251 bytes a receipt, measured),
past the 16 KiB every other body is held to (FAIRWAY_MAX_BODY_BYTES)."""
HandNumber = Annotated[int, Parameter(ge=1, le=1000, description="The hand, from 1")]


def _problem(description: str) -> ResponseSpec:
    return ResponseSpec(
        Problem, generate_examples=False, description=description, media_type=PROBLEM_JSON
    )


REPLAY = docs.SEAT_READ | {
    404: _problem("No such game (`game_not_found`), or no such hand dealt (`hand_not_found`)"),
    409: _problem(
        "The hand is still in play (`hand_in_play`): it is shown once it is over; or it is "
        "still to be played at another table of its duplicate round (`deals_to_come`)"
    ),
}
ROUND_IN_PLAY = _problem(
    "The game is a table of a duplicate round still in play (`deals_to_come`): its deals "
    "are to come at another table, so it is shown once every table has ended"
)
AUDIT = docs.problems(400, 401, 429, 503) | {
    404: _problem("No such game (`game_not_found`)"),
    409: ROUND_IN_PLAY,
    422: _problem(
        "The game names a rules version this server does not implement "
        "(`unknown_rules_version`): it is not judged by other rules"
    ),
}
AUDIT_POST = (
    AUDIT
    | docs.problems(413, 415)
    | {
        422: _problem(
            "The body is not receipts to check (`invalid_request`), or the game names a rules "
            "version this server does not implement (`unknown_rules_version`)"
        )
    }
)
EXPORTED = docs.Negotiated(
    GameExport,
    description="The export: JSON, or NDJSON with `Accept: application/x-ndjson`",
    also={
        NDJSON: docs.text(
            "NDJSON: the header on the first line (every field of a `GameExport` but `events`), "
            "then one `ExportedEvent` a line, in version order"
        )
    },
)
EXPORT = AUDIT | {
    200: EXPORTED,
    409: _problem(
        "The game is not over (`game_in_play`), or a table of its duplicate round is still "
        "in play (`deals_to_come`)"
    ),
    500: _problem("The stored history fails verification (`history_corrupt`)"),
}
REFUSALS = {"hand_in_play": 409, "hand_not_found": 404}


class Reports:
    """Public audit reports of intact histories, by (game, version, head hash): an intact
    chain's head hash fixes every byte of the rows, so a report is reused only for the very
    same history, and the walk (tens of µs per event) is not repeated for every reader of a
    finished game. A broken history is audited afresh each time."""

    def __init__(self, kept: int = 256) -> None:
        self.kept = kept
        self._reports: OrderedDict[tuple[str, int, bytes], AuditReport] = OrderedDict()

    async def report(self, game_id: str, rows: list[StoredRow]) -> AuditReport:
        intact = check_chain(game_id, rows).failure is None
        key = (game_id, len(rows), rows[-1].hash)
        if intact and key in self._reports:
            self._reports.move_to_end(key)
            return self._reports[key]
        try:
            report = await asyncio.to_thread(audit_game, game_id, rows, public=True)
        except RulesVersionRefused as refused:
            raise ApiError(422, refused.code, refused.detail) from None
        if intact:
            self._reports[key] = report
            while len(self._reports) > self.kept:
                self._reports.popitem(last=False)
        return report


REPORTS = Reports()
TOURNAMENT_AUDIT = docs.problems(400, 429, 503) | {
    404: _problem("No such tournament (`tournament_not_found`)"),
    409: _problem("The tournament has not ended (`tournament_in_play`)"),
}
TournamentId = Annotated[
    str, Parameter(pattern=r"^[0-9a-f]{16}(?![\s\S])", description="The tournament's id")
]


async def _rows(games: GameService, game_id: str) -> list[StoredRow]:
    rows = await games.store.read_stored(stream_id(game_id))
    if not rows or rows[0].type != "game.created":
        raise ApiError(404, "game_not_found", f"no game has the id {game_id!r}")
    return rows


class AuditController(Controller):
    path = "/games"
    tags = ["audit"]

    @get(
        "/{game_id:str}/hands/{hand:int}/replay",
        operation_id="replayHand",
        summary="A finished hand step by step, every card shown",
        responses=REPLAY,
        response_headers=docs.ETAG,
    )
    async def replay(
        self,
        game_id: GameId,
        hand: HandNumber,
        request: Request[Any, Any, Any],
        games: NamedDependency[GameService],
        reader: NamedDependency[ProjectionReader],
        spectator_delay: SpectatorDelay,
        gate: Gate,
        if_none_match: IfNoneMatch = None,
    ) -> Response[s.HandReplay]:
        """Each event of the hand with the whole table after it, folded by the decider that
        played it. Refused whole while the hand is in play: to a reader without a seat
        token, while it is in play as far as the spectator delay lets them see the game.
        The ETag is the version of the hand's last step: a finished hand's replay changes
        no more (the last hand's gains the game's end)."""
        await gate.require_hand(game_id, hand)
        held = await held_back(request, games, gate, game_id, spectator_delay)
        ended = None if held is None else held[0].hand_ended_at.get(hand)
        if held is not None and ended is not None and ended > held[1]:
            raise ApiError(
                409,
                "hand_in_play",
                f"hand {hand} of game {game_id} is still in play as spectators see the game "
                f"(at version {held[1]}, held back): it is shown once it is over there",
            )
        body = await REPLAYS.replay(reader, game_id, hand)  # the read model, when it has it
        if body is None:
            record = await games.load(game_id)
            events = [(entry.version, entry.event) for entry in record.entries]
            try:
                body = await asyncio.to_thread(replay_hand, game_id, events, hand)
            except ReplayRefused as refused:
                raise ApiError(REFUSALS[refused.code], refused.code, refused.detail) from None
        body.seats = await seats_of(reader, games, game_id)
        return answer(body, body.steps[-1].version, if_none_match)

    @get(
        "/{game_id:str}/audit",
        operation_id="auditGame",
        summary="Whether the game's stored history holds, check by check",
        responses=AUDIT,
    )
    async def audit(
        self,
        game_id: GameId,
        request: Request[Any, Any, Any],
        games: NamedDependency[GameService],
        spectator_delay: SpectatorDelay,
        gate: Gate,
    ) -> AuditReport:
        """The hash chain over every stored event (or its first broken link); for each
        finished hand the commitment, the deck, every move's legality and the scores, decided
        again by the variant's rules; the winners. A hand in play is `pending` and not
        examined; hands past a broken link are `unverifiable`. Public facts only. Without a
        seat token, of the history as far as the spectator delay lets the reader see it
        (`chain.version` says how far)."""
        rows = await _rows(games, game_id)
        await gate.require_open(game_id, peers_in(rows))
        held = await held_back(request, games, gate, game_id, spectator_delay)
        return await REPORTS.report(game_id, rows if held is None else rows[: held[1]])

    @post(
        "/{game_id:str}/audit",
        operation_id="auditGameWithReceipts",
        summary="The audit, with receipts checked against the stored history",
        status_code=200,
        responses=AUDIT_POST,
        request_max_body_size=RECEIPTS_BODY_BYTES,
    )
    async def audit_receipts(
        self,
        game_id: GameId,
        data: Annotated[
            ReceiptsToCheck,
            Body(description="The receipts you hold: at most 100, in a body of 64 KiB at most."),
        ],
        request: Request[Any, Any, Any],
        games: NamedDependency[GameService],
        spectator_delay: SpectatorDelay,
        keyring: NamedDependency[ReceiptKeys],
        gate: Gate,
    ) -> AuditReport:
        """As `GET /games/{id}/audit`, and each receipt you hold checked: signed by one of
        the installation's keys (`keys` of `GET /.well-known/fairway-receipt-key`: any
        instance's, current or retired), and the stored hash at its version the one it
        signs. A version the history no longer holds is a deleted tail; another hash there is
        a rewrite. The receipts are checked against the whole stored history (a receipt
        tells its holder nothing they were not told when they got it); the rest of the report
        is held back as on `GET`."""
        rows = await _rows(games, game_id)
        await gate.require_open(game_id, peers_in(rows))
        held = await held_back(request, games, gate, game_id, spectator_delay)
        keys = await keyring.accepted()
        check, results = check_receipts(game_id, rows, data.receipts, keys)
        shown = rows if held is None else rows[: held[1]]
        try:
            return await asyncio.to_thread(
                audit_game, game_id, shown, public=True, extra=[check], receipts=results
            )
        except RulesVersionRefused as refused:
            raise ApiError(422, refused.code, refused.detail) from None

    @get(
        "/{game_id:str}/export",
        operation_id="exportGame",
        summary="A finished game as one self-contained document (JSON, or NDJSON by Accept)",
        responses=EXPORT,
    )
    async def export(
        self,
        game_id: GameId,
        request: Request[Any, Any, Any],
        games: NamedDependency[GameService],
        gate: Gate,
    ) -> Response[GameExport]:
        """Every event as stored (data and metadata as their exact text) with its chain
        fields, the variant's rules record, the options, the seats, each hand's commitment and
        seed, the winners. With `Accept: application/x-ndjson`: the header on the first line,
        then one event per line. `fairway verify FILE` checks either offline."""
        rows = await _rows(games, game_id)
        await gate.require_open(game_id, peers_in(rows))
        chain = check_chain(game_id, rows)
        if chain.failure is not None:
            raise ApiError(
                500,
                "history_corrupt",
                f"the stored history of game {game_id} fails verification at version "
                f"{chain.failure.version}; it is not exported",
            )
        try:
            document = export_game(game_id, rows)
        except ExportRefused as refused:
            raise ApiError(409, refused.code, refused.detail) from None
        if request.accept.best_match(["application/json", NDJSON]) == NDJSON:
            body = b"".join(ndjson_lines(document))
            return Response(body, media_type=NDJSON)  # type: ignore[arg-type]
        return Response(document)


class TournamentAuditController(Controller):
    path = "/tournaments"
    tags = ["audit"]

    @get(
        "/{tournament_id:str}/audit",
        operation_id="auditTournament",
        summary="Whether a tournament's seeds, seating and duplicate deals hold, check by check",
        responses=TOURNAMENT_AUDIT,
    )
    async def audit(
        self, tournament_id: TournamentId, games: NamedDependency[GameService]
    ) -> TournamentAuditReport:
        """Once the tournament has ended: each revealed round seed hashes to the anchor of
        `tournament.created`; round 1 is seated by the shuffle of its seating seed; with
        duplicate deals, every table of a round deals from the round's chain and seat seed,
        the same deck hand by hand; and every game passes the game audit. Each failure
        names its round, table and game (docs/TOURNAMENTS.md)."""
        rows = await games.store.read_stored(PREFIX + tournament_id)
        if not rows:
            raise ApiError(
                404, "tournament_not_found", f"no tournament has the id {tournament_id!r}"
            )
        if not any(row.type == TournamentEnded.__struct_config__.tag for row in rows):
            raise ApiError(
                409,
                "tournament_in_play",
                f"tournament {tournament_id} has not ended: its seeds are revealed as it ends",
            )
        tables = await read_games(games.store, rows)
        return await asyncio.to_thread(audit_tournament, tournament_id, rows, tables, public=True)
