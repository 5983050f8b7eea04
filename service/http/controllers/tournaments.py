"""/tournaments: the organiser opens a tournament, registers players, starts each round; a
player sets their seed or withdraws; anyone reads the tournament and its events.

Tokens travel as for games: `Authorization: Bearer <token>`. The organiser's token comes
back from creating the tournament, each player's from registering them; with
FAIRWAY_ADMIN_KEY set, creating a tournament takes the admin key in the same header.
"""

from __future__ import annotations

from typing import Annotated, Any

import msgspec
from litestar import Controller, Request, Response, get, post, put
from litestar.datastructures import ResponseHeader
from litestar.di import NamedDependency
from litestar.openapi.datastructures import ResponseSpec
from litestar.params import HeaderParameter, Parameter

from domain.shuffle import valid_seat_seed
from domain.tournament.decide import Create
from domain.tournament.state import Round, Tournament
from events.schema.common import GameOptions
from events.schema.tournament import PlayerWithdrawn, TournamentCreated
from service.contract import tournaments as t
from service.contract.problems import PROBLEM_JSON, ApiError, Problem
from service.contract.public import TournamentEvent, to_public
from service.http import docs
from service.http.params import SEAT_TOKEN, LobbyKey, answer, bearer, required_token
from service.tournaments.record import TournamentRecord
from service.tournaments.service import TournamentService

TournamentId = Annotated[
    str, Parameter(pattern=r"^[0-9a-f]{16}(?![\s\S])", description="The tournament's id")
]
PlayerName = Annotated[
    str, Parameter(min_length=1, max_length=40, description="The player's registered name")
]
TOKEN = SEAT_TOKEN

_WHY = {
    400: "Malformed request (`malformed_request`, `invalid_request` for a path, query or "
    "header value)",
    401: "No token, or one that is nobody's in this tournament (`token_required`, `invalid_token`)",
    403: "A valid token without the right (`not_organiser`, `not_this_player`, `not_admin`)",
    404: "No such tournament or player (`tournament_not_found`, `unknown_player`)",
    409: "The tournament's state forbids it now (`name_taken`, `registration_closed`, "
    "`player_withdrawn`, `round_in_play`, `tournament_over`, `not_enough_players`, "
    "`conflict`)",
    413: "The body is too large (`body_too_large`)",
    415: "The body is not JSON (`unsupported_media_type`)",
    422: "Well-formed but not acceptable (`invalid_request`, `invalid_config`, "
    "`unknown_bot_level`, `idempotency_key_reused`)",
    429: "Rate limited (`rate_limited`); see `Retry-After`",
    500: "The tournament's stored history fails verification (`history_corrupt`), or an "
    "unexpected error (`internal_error`)",
    503: "The event store is unavailable (`unavailable`) or the server is at its connection "
    "cap (`too_many_connections`); see `Retry-After`",
}


def problems(*statuses: int) -> dict[int, ResponseSpec]:
    return {
        status: ResponseSpec(
            Problem, generate_examples=False, description=_WHY[status], media_type=PROBLEM_JSON
        )
        for status in statuses
    }


_ANY = (400, 429, 500, 503)
_BODY = (413, 415, 422)
CREATE = problems(*_ANY, *_BODY, 401, 403)
READ = docs.NOT_MODIFIED | problems(*_ANY, 404)
COMMAND = problems(*_ANY, 401, 403, 404, 409)
COMMAND_BODY = problems(*_ANY, *_BODY, 401, 403, 404, 409)
ETAG = [
    ResponseHeader(
        name="ETag",
        description='The tournament\'s version (`"12"`): send it in `If-None-Match` to read '
        "again cheaply",
        documentation_only=True,
    )
]
CREATED_HEADERS = [
    *ETAG,
    ResponseHeader(
        name="Location", description="Where the new resource lives", documentation_only=True
    ),
]
IfNoneMatch = Annotated[
    str | None,
    HeaderParameter(
        name="If-None-Match",
        required=False,
        max_length=200,
        description='The ETag of the copy you hold (`"12"`): 304 while the tournament is '
        "still at that version.",
    ),
]


CREATE_TOURNAMENT = docs.examples(
    "The tournament's game, table size, rounds, seating and whether deals are duplicated.",
    duplicate_golf={
        "name": "Club night",
        "variant": "golf",
        "table_size": 4,
        "rounds": 3,
        "seating": "swiss",
        "duplicate": True,
        "scoring": "matchpoints",
    },
    basketball_rotation={
        "name": "Hoops",
        "variant": "basketball",
        "table_size": 3,
        "rounds": 4,
        "seating": "rotation",
    },
    bots_by_themselves={
        "name": "Bot league",
        "variant": "golf",
        "table_size": 4,
        "rounds": 3,
        "auto_rounds": True,
        "options": {"hands": 1},
    },
)
REGISTER_PLAYER = docs.examples(
    "The player's name, unique in the tournament; with `bot`, a bot player of that level.",
    ada={"name": "Ada"},
    greedy_bot={"name": "Robo", "bot": "greedy"},
)


def round_info(played: Round) -> t.RoundInfo:
    started, closed = played.started, played.closed
    return t.RoundInfo(
        round=started.round,
        state="in_play" if closed is None else "closed",
        tables=[t.TableInfo(s.table, s.game_id, list(s.players)) for s in started.tables],
        byes=list(started.byes),
        seat_seed=started.seat_seed or None,
        results=None if closed is None else list(closed.results),
        bye_score=None if closed is None else closed.bye_score,
        server_seed=None if closed is None else closed.server_seed,
    )


def phase(state: Tournament) -> t.Phase:
    if state.ended:
        return "ended"
    if not state.rounds:
        return "registering"
    return "in_play" if state.open_round is not None else "between_rounds"


def info(record: TournamentRecord) -> t.TournamentInfo:
    state = record.state
    config = state.config
    return t.TournamentInfo(
        tournament_id=record.tournament_id,
        name=config.name,
        variant=config.variant,
        options=config.options,
        table_size=config.table_size,
        rounds=config.rounds,
        seating=config.seating,
        duplicate=config.duplicate,
        bye_rule=config.bye_rule,
        scoring=config.scoring,  # type: ignore[arg-type]
        auto_rounds=config.auto_rounds,
        phase=phase(state),
        players=[t.PlayerInfo(p.name, p.withdrawn, p.seed, p.bot or None) for p in state.players],
        played=[round_info(r) for r in state.rounds],
        seed_anchor=config.seed_anchor,
        seed_secret=config.seed_secret if state.ended else None,
        version=record.version,
    )


def public(event: Any, ended: bool) -> TournamentEvent:
    """A tournament event as anyone may read it: no token hash, ever (its public shape has
    none); the seed chain's secret once the tournament has ended."""
    if isinstance(event, TournamentCreated) and not ended:
        event = msgspec.structs.replace(event, seed_secret="")
    return to_public(event)  # type: ignore[no-any-return]


class TournamentController(Controller):
    path = "/tournaments"
    tags = ["tournaments"]

    @post(
        "/",
        operation_id="createTournament",
        summary="Open a tournament",
        status_code=201,
        responses=CREATE,
        response_headers=CREATED_HEADERS,
    )
    async def create(
        self,
        data: Annotated[t.CreateTournament, CREATE_TOURNAMENT],
        request: Request[Any, Any, Any],
        tournaments: NamedDependency[TournamentService],
        idempotency_key: LobbyKey = None,
    ) -> Response[t.TournamentOpened]:
        """With FAIRWAY_ADMIN_KEY set, send it as `Authorization: Bearer <key>`. The answer
        holds the organiser's token (secret)."""
        spec = Create(
            name=data.name,
            variant=data.variant,
            options=data.options or GameOptions(),
            table_size=data.table_size,
            rounds=data.rounds,
            seating=data.seating,
            duplicate=data.duplicate,
            scoring=data.scoring,
            organiser_hash="",
            seed_anchor="",
            seed_secret="",
            auto_rounds=data.auto_rounds,
        )
        record, token = await tournaments.create(spec, bearer(request), idempotency_key)
        body = t.TournamentOpened(
            record.tournament_id, token, record.version, data.name, data.variant
        )
        location = f"/tournaments/{record.tournament_id}"
        return answer(body, record.version, status_code=201, location=location)

    @get(
        "/{tournament_id:str}",
        operation_id="getTournament",
        summary="The tournament: its players, rounds, tables and byes",
        responses=READ,
        response_headers=ETAG,
    )
    async def get_tournament(
        self,
        tournament_id: TournamentId,
        tournaments: NamedDependency[TournamentService],
        if_none_match: IfNoneMatch = None,
    ) -> Response[t.TournamentInfo]:
        record = await tournaments.load(tournament_id)
        return answer(info(record), record.version, if_none_match)

    @post(
        "/{tournament_id:str}/players",
        operation_id="registerPlayer",
        summary="Register a player (organiser)",
        security=TOKEN,
        status_code=201,
        responses=COMMAND_BODY,
        response_headers=CREATED_HEADERS,
    )
    async def register(
        self,
        tournament_id: TournamentId,
        data: Annotated[t.RegisterPlayer, REGISTER_PLAYER],
        request: Request[Any, Any, Any],
        tournaments: NamedDependency[TournamentService],
        idempotency_key: LobbyKey = None,
    ) -> Response[t.PlayerAdded]:
        """Registration closes when round 1 starts. The answer holds the player's token
        (secret), which acts in every game of theirs in the tournament. With `bot` (a
        level) the player is a bot: no token is issued, each of its seats is a bot seat
        that the service plays (an unknown level is 422 `unknown_bot_level`)."""
        outcome, token = await tournaments.register(
            tournament_id, required_token(request), data.name, idempotency_key, data.bot or ""
        )
        version = outcome.last_version
        body = t.PlayerAdded(tournament_id, data.name, token, version, data.bot)
        location = f"/tournaments/{tournament_id}"
        return answer(body, version, status_code=201, location=location)

    @post(
        "/{tournament_id:str}/players/{name:str}/withdraw",
        operation_id="withdrawPlayer",
        summary="Withdraw a player (organiser, or the player)",
        security=TOKEN,
        status_code=200,
        responses=COMMAND,
        response_headers=ETAG,
    )
    async def withdraw(
        self,
        tournament_id: TournamentId,
        name: PlayerName,
        request: Request[Any, Any, Any],
        tournaments: NamedDependency[TournamentService],
    ) -> Response[t.PlayerLeft]:
        """The player is seated in no later round; their games still in play are played
        out by the service from now on (`seat.resigned`, reason `withdrawn`)."""
        outcome, resigned = await tournaments.withdraw(tournament_id, required_token(request), name)
        version = outcome.last_version
        event = outcome.record.events[version - 1].data
        assert isinstance(event, PlayerWithdrawn)
        body = t.PlayerLeft(tournament_id, name, event.round, resigned, version)
        return answer(body, version)

    @put(
        "/{tournament_id:str}/players/{name:str}/seed",
        operation_id="setPlayerSeed",
        summary="Set the player's seed for the duplicate rounds started from now on (player)",
        security=TOKEN,
        status_code=200,
        responses=COMMAND_BODY,
        response_headers=ETAG,
    )
    async def set_seed(
        self,
        tournament_id: TournamentId,
        name: PlayerName,
        data: Annotated[t.SetPlayerSeed, docs.SET_SEED],
        request: Request[Any, Any, Any],
        tournaments: NamedDependency[TournamentService],
    ) -> Response[t.PlayerSeedRecorded]:
        """Public, like a seat's seed: every active player's seed (or name) goes into each
        duplicate round's seat seed, so no single party controls its deals."""
        if not valid_seat_seed(data.seed):
            raise ApiError(
                422,
                "invalid_request",
                "a seed is printable characters: no control, format, private-use or "
                "unassigned character, and no separator but the space",
                errors=[{"message": "not printable", "key": "seed", "source": "body"}],
            )
        outcome = await tournaments.set_seed(
            tournament_id, required_token(request), name, data.seed
        )
        version = outcome.last_version
        return answer(t.PlayerSeedRecorded(tournament_id, name, data.seed, version), version)

    @post(
        "/{tournament_id:str}/rounds",
        operation_id="startRound",
        summary="Start the next round: seat it, create and start its games (organiser)",
        security=TOKEN,
        status_code=201,
        responses=problems(*_ANY, 401, 403, 404, 409, 422),
        response_headers=CREATED_HEADERS,
    )
    async def start_round(
        self,
        tournament_id: TournamentId,
        request: Request[Any, Any, Any],
        tournaments: NamedDependency[TournamentService],
        idempotency_key: LobbyKey = None,
    ) -> Response[t.RoundInfo]:
        """Refused while a round is in play (`round_in_play`), after the last round
        (`tournament_over`), and with fewer active players than a table
        (`not_enough_players`). A retry with the same `Idempotency-Key` gets the round it
        started."""
        outcome = await tournaments.start_round(
            tournament_id, required_token(request), idempotency_key
        )
        started = outcome.record.events[outcome.first_version - 1].data
        played = next(r for r in outcome.record.state.rounds if r.number == started.round)
        location = f"/tournaments/{tournament_id}"
        return answer(round_info(played), outcome.last_version, status_code=201, location=location)

    @get(
        "/{tournament_id:str}/events",
        operation_id="getTournamentEvents",
        summary="The tournament's own events, a page at a time",
        responses=READ,
        response_headers=ETAG,
    )
    async def events(
        self,
        tournament_id: TournamentId,
        tournaments: NamedDependency[TournamentService],
        after: Annotated[
            int, Parameter(ge=0, le=10_000_000, description="The last version already read")
        ] = 0,
        limit: Annotated[int, Parameter(ge=1, le=1000, description="At most this many")] = 500,
        if_none_match: IfNoneMatch = None,
    ) -> Response[t.TournamentFeed]:
        record = await tournaments.load(tournament_id)
        ended = record.state.ended
        last = min(record.version, after + limit)
        more = last < record.version
        page = t.TournamentFeed(
            tournament_id,
            record.version,
            [
                t.TournamentEntry(e.version, public(e.data, ended))
                for e in record.events[after:last]
            ],
            has_more=more,
            next_after=last if more else None,
        )
        return answer(page, record.version, if_none_match)
