"""/games: open a game, claim seats, start, look, act, read scores and the event feed."""

from __future__ import annotations

import hashlib
from datetime import datetime
from typing import Annotated, Any

import msgspec
from litestar import Controller, Request, Response, delete, get, post
from litestar.di import NamedDependency
from litestar.params import HeaderParameter, Parameter

from domain.decider import Viewer
from events.schema.common import GameEnded, GameOptions, HandEnded
from events.schema.grid import GridAction
from events.schema.shedding import SheddingAction
from service.contract import schemas as s
from service.contract.problems import ApiError
from service.contract.public import to_public
from service.http import docs
from service.http.chain import disclose, links
from service.http.controllers import listing
from service.live.spectators import state_at, status_at
from service.play.games import GameService
from service.play.record import GameRecord
from service.tournaments.duplicate import DuplicateGate

Action = GridAction | SheddingAction

SEAT_TOKEN = [{"seatToken": []}]
# `(?![\s\S])`, the end of the text: `$` would also let a final newline through.
GameId = Annotated[str, Parameter(pattern=r"^[0-9a-f]{16}(?![\s\S])", description="The game's id")]
IdempotencyKey = Annotated[
    str | None,
    HeaderParameter(
        name="Idempotency-Key",
        required=False,
        max_length=128,
        pattern=r"^[\x21-\x7e]+$",
        description="Makes the action safe to retry: the same key and body give the same "
        "answer and one set of events; the same key with another body is rejected (422).",
    ),
]
LobbyKey = Annotated[
    str | None,
    HeaderParameter(
        name="Idempotency-Key",
        required=False,
        min_length=16,
        max_length=128,
        pattern=r"^[\x21-\x7e]+$",
        description="Makes the request safe to retry: a retry with the same key and body "
        "returns the first answer, secret token included. The key derives that token, so "
        "keep it secret and unguessable (a random UUID; at least 16 characters).",
    ),
]
SpectatorDelay = NamedDependency[int]
"""FAIRWAY_SPECTATOR_DELAY: seat actions spectators are held back (service/live/spectators.py)."""
Gate = NamedDependency[DuplicateGate]
"""How far a reader not seated in a duplicate-deal game may see it
(service/tournaments/duplicate.py)."""
IfNoneMatch = Annotated[
    str | None,
    HeaderParameter(
        name="If-None-Match",
        required=False,
        max_length=200,
        description='The ETag of the copy you hold (`"12"`): 304 with no body while the game '
        "is still at that version.",
    ),
]
IfMatch = Annotated[
    str | None,
    HeaderParameter(
        name="If-Match",
        required=False,
        max_length=40,
        description='The game version the action was decided on (`"12"`); a stale one gives 409.',
    ),
]


def bearer(request: Request[Any, Any, Any]) -> str | None:
    value = request.headers.get("authorization")
    if not value:
        return None
    scheme, _, token = value.partition(" ")
    if scheme.lower() != "bearer" or not token.strip():
        raise ApiError(401, "invalid_token", "use `Authorization: Bearer <token>`")
    return token.strip()


def required_token(request: Request[Any, Any, Any]) -> str:
    token = bearer(request)
    if token is None:
        raise ApiError(401, "token_required", "send the token as `Authorization: Bearer <token>`")
    return token


def parse_if_match(value: str | None) -> int | None:
    if value is None:
        return None
    text = value.strip().removeprefix("W/").strip('"')
    if not text.isdigit():
        raise ApiError(422, "invalid_request", f"If-Match must be a game version, not {value!r}")
    return int(text)


def answer(
    body: Any,
    version: int,
    if_none_match: str | None = None,
    *,
    status_code: int = 200,
    location: str | None = None,
) -> Response[Any]:
    """A game response: its version as the ETag, and 304 without a body when the client's
    copy (`If-None-Match`) is of that version already."""
    tag = f'"{version}"'
    headers = {"ETag": tag}
    if if_none_match is not None:
        held = {t.strip().removeprefix("W/") for t in if_none_match.split(",")}
        if tag in held or "*" in held:
            return Response(None, status_code=304, headers=headers)
    if location is not None:
        headers["Location"] = location
    return Response(body, status_code=status_code, headers=headers)


def seat_states(
    record: GameRecord, deadlines: dict[int, datetime] | None = None
) -> list[s.SeatState]:
    """Each seat's holder, whether the bot plays it, and when its time to act runs out."""
    lobby, deadlines = record.lobby, deadlines or {}
    return [
        s.SeatState(
            seat,
            name,
            lobby.resigned_reason(seat),  # type: ignore[arg-type]
            _iso(deadlines.get(seat)),
        )
        for seat, name in enumerate(lobby.names)
    ]


def _iso(moment: datetime | None) -> str | None:
    return None if moment is None else moment.isoformat()


async def clock_of(games: GameService, record: GameRecord, version: int) -> dict[int, datetime]:
    """The turn deadlines shown with the game as of `version`: the live game's only (a
    delayed spectator sees none: the clock would tell them the table has moved on)."""
    return await games.turn_deadlines(record) if version == record.version else {}


def summary(
    record: GameRecord, version: int | None = None, deadlines: dict[int, datetime] | None = None
) -> s.GameSummary:
    """The game's lobby and status, as of `version` (default: now)."""
    lobby = record.lobby
    version = record.version if version is None else version
    status = status_at(record, version)
    return s.GameSummary(
        game_id=record.game_id,
        variant=lobby.variant,  # type: ignore[arg-type]
        title=lobby.title,
        seats=seat_states(record, deadlines),
        options=lobby.options,
        version=version,
        started=record.started,
        status=status,
        turn_deadline=_iso(min(deadlines.values(), default=None) if deadlines else None),
    )


def signed_summary(games: GameService, record: GameRecord, version: int) -> s.GameSummary:
    """The summary an answer that stored events gives, with its receipt."""
    signed = summary(record, version)
    signed.receipt = games.receipt(record, version)
    return signed


def feed(
    record: GameRecord, viewer: Viewer, first: int, last: int, as_of: int
) -> list[s.FeedEntry]:
    """Events `first`..`last` in their public shape, as `viewer` may know them at `as_of`,
    with the chain hashes the viewer may see (service/http/chain.py)."""
    return [
        s.FeedEntry(entry.version, to_public(event), hash=link, prev_hash=prev)
        for entry, event, link, prev in links(record, viewer, first, last, as_of)
    ]


class GameController(Controller):
    path = "/games"
    tags = ["games"]

    list_games = listing.list_games
    """GET /games, the lobby (service/http/controllers/listing.py), served from its projection."""

    @post(
        "/",
        operation_id="createGame",
        summary="Open a game",
        status_code=201,
        responses=docs.CREATE,
        response_headers=docs.CREATED_HEADERS,
    )
    async def create(
        self,
        data: Annotated[s.CreateGame, docs.CREATE_GAME],
        games: NamedDependency[GameService],
        idempotency_key: LobbyKey = None,
    ) -> Response[s.GameOpened]:
        options = data.options or GameOptions()
        record, token = await games.create(
            data.variant, data.seats, options, data.title, idempotency_key
        )
        receipt = games.receipt(record, 1)
        opened = s.GameOpened(record.game_id, token, 1, data.variant, data.seats, receipt)
        return answer(opened, 1, status_code=201, location=f"/games/{record.game_id}")

    @get(
        "/{game_id:str}",
        operation_id="getGame",
        summary="The game's lobby and status",
        responses=docs.READ,
        response_headers=docs.ETAG,
    )
    async def get_game(
        self,
        game_id: GameId,
        games: NamedDependency[GameService],
        spectator_delay: SpectatorDelay,
        gate: Gate,
        if_none_match: IfNoneMatch = None,
    ) -> Response[s.GameSummary]:
        record = await games.load(game_id)
        version = await gate.visible(record, None, spectator_delay)
        deadlines = await clock_of(games, record, version)
        return answer(summary(record, version, deadlines), version, if_none_match)

    @post(
        "/{game_id:str}/seats",
        operation_id="claimSeat",
        summary="Claim a seat",
        status_code=201,
        responses=docs.CLAIM,
        response_headers=docs.CREATED_HEADERS,
    )
    async def claim(
        self,
        game_id: GameId,
        data: Annotated[s.ClaimSeat, docs.CLAIM_SEAT],
        games: NamedDependency[GameService],
        idempotency_key: LobbyKey = None,
    ) -> Response[s.SeatGranted]:
        outcome, seat, token = await games.claim(game_id, data.seat, data.name, idempotency_key)
        version = outcome.last_version
        receipt = games.receipt(outcome.record, version)
        granted = s.SeatGranted(game_id, seat, token, version, receipt)
        return answer(granted, version, status_code=201, location=f"/games/{game_id}/seats/{seat}")

    @delete(
        "/{game_id:str}/seats/{seat:int}",
        operation_id="releaseSeat",
        summary="Free a claimed seat before the game starts (creator, or the seat's holder)",
        security=SEAT_TOKEN,
        status_code=200,
        responses=docs.RELEASE,
        response_headers=docs.ETAG,
    )
    async def release(
        self,
        game_id: GameId,
        seat: Annotated[int, Parameter(ge=0, le=9, description="The seat to free")],
        request: Request[Any, Any, Any],
        games: NamedDependency[GameService],
    ) -> Response[s.GameSummary]:
        outcome = await games.release(game_id, required_token(request), seat)
        return answer(
            signed_summary(games, outcome.record, outcome.last_version), outcome.last_version
        )

    @post(
        "/{game_id:str}/seats/{seat:int}/resign",
        operation_id="resignSeat",
        summary="Resign the seat: from now on the service's bot plays it out",
        security=SEAT_TOKEN,
        status_code=200,
        responses=docs.RESIGN,
        response_headers=docs.ETAG,
    )
    async def resign(
        self,
        game_id: GameId,
        seat: Annotated[int, Parameter(ge=0, le=9, description="The seat to resign")],
        request: Request[Any, Any, Any],
        games: NamedDependency[GameService],
    ) -> Response[s.GameSummary]:
        """With the seat's own token, in a game in play. The seat's token still reads its
        view but acts no more (`409 seat_resigned`); what the seat scores is what the bot's
        moves score (docs/TOURNAMENTS.md, "Turn clocks and resigning")."""
        outcome = await games.resign(game_id, required_token(request), seat)
        return answer(
            signed_summary(games, outcome.record, outcome.last_version), outcome.last_version
        )

    @post(
        "/{game_id:str}/start",
        operation_id="startGame",
        summary="Start the game (creator)",
        security=SEAT_TOKEN,
        status_code=200,
        responses=docs.START,
        response_headers=docs.ETAG,
    )
    async def start(
        self,
        game_id: GameId,
        request: Request[Any, Any, Any],
        games: NamedDependency[GameService],
        idempotency_key: IdempotencyKey = None,
    ) -> Response[s.GameSummary]:
        outcome = await games.start(game_id, required_token(request), idempotency_key)
        return answer(
            signed_summary(games, outcome.record, outcome.last_version), outcome.last_version
        )

    @get(
        "/{game_id:str}/view",
        operation_id="getPublicView",
        summary="The spectators' view",
        responses=docs.READ,
        response_headers=docs.ETAG,
    )
    async def public_view(
        self,
        game_id: GameId,
        games: NamedDependency[GameService],
        spectator_delay: SpectatorDelay,
        gate: Gate,
        if_none_match: IfNoneMatch = None,
    ) -> Response[s.PublicView]:
        record = await games.load(game_id)
        version = await gate.visible(record, None, spectator_delay)
        decider = record.decider
        deadlines = await clock_of(games, record, version)
        seats = seat_states(record, deadlines)
        deadline = _iso(min(deadlines.values(), default=None))
        if decider is None:
            body = s.PublicView(record.game_id, version, None, None, seats, deadline)
        else:
            state = state_at(record, version)
            body = s.PublicView(
                record.game_id,
                version,
                decider.status(state),
                decider.view(state, None),
                seats,
                deadline,
            )
        return answer(body, version, if_none_match)

    @get(
        "/{game_id:str}/me",
        operation_id="getSeatView",
        summary="A seat's own view and legal actions",
        security=SEAT_TOKEN,
        responses=docs.SEAT_READ,
        response_headers=docs.ETAG,
    )
    async def seat_view(
        self,
        game_id: GameId,
        request: Request[Any, Any, Any],
        games: NamedDependency[GameService],
        if_none_match: IfNoneMatch = None,
    ) -> Response[s.SeatView]:
        token = required_token(request)
        record = await games.load(game_id)
        seat = games.seat_for(record, token)
        if record.decider is None:
            body = s.SeatView(record.game_id, record.version, seat, None, None, [])
        else:
            decider, state = record.decider, record.state
            body = s.SeatView(
                record.game_id,
                record.version,
                seat,
                record.status(),
                decider.view(state, seat),
                list(decider.legal_actions(state, seat)),
            )
        return answer(body, record.version, if_none_match)

    @post(
        "/{game_id:str}/actions",
        operation_id="postAction",
        summary="Take an action",
        security=SEAT_TOKEN,
        status_code=200,
        responses=docs.PLAY,
        response_headers=docs.ETAG,
    )
    async def act(
        self,
        game_id: GameId,
        data: Annotated[Action, docs.ACTION],
        request: Request[Any, Any, Any],
        games: NamedDependency[GameService],
        idempotency_key: IdempotencyKey = None,
        if_match: IfMatch = None,
    ) -> Response[s.ActionResult]:
        """The answer holds the action's events and the acting seat's view and legal actions
        after it; a retry with the same `Idempotency-Key` gets the first answer exactly."""
        token = required_token(request)
        outcome = await games.act(
            game_id,
            token,
            data,
            idempotency_key=idempotency_key,
            request_hash=hashlib.sha256(msgspec.json.encode(data)).hexdigest(),
            if_match=parse_if_match(if_match),
        )
        record, last, seat = outcome.record, outcome.last_version, outcome.actor.seat
        assert seat is not None
        assert record.decider is not None
        decider, state = record.decider, record.state_at(last)
        body = s.ActionResult(
            game_id=record.game_id,
            seat=seat,
            version=last,
            events=feed(record, seat, outcome.first_version, last, last),
            status=decider.status(state),
            view=decider.view(state, seat),
            legal_actions=list(decider.legal_actions(state, seat)),
            receipt=games.receipt(record, last),
        )
        return answer(body, last)

    @get(
        "/{game_id:str}/events",
        operation_id="getEvents",
        summary="The game's events, redacted for the viewer, a page at a time",
        responses=docs.SEAT_READ,
        response_headers=docs.ETAG,
    )
    async def events(
        self,
        game_id: GameId,
        request: Request[Any, Any, Any],
        games: NamedDependency[GameService],
        spectator_delay: SpectatorDelay,
        gate: Gate,
        after: Annotated[
            int, Parameter(ge=0, le=10_000_000, description="The last version already read")
        ] = 0,
        limit: Annotated[int, Parameter(ge=1, le=1000, description="At most this many")] = 500,
        if_none_match: IfNoneMatch = None,
    ) -> Response[s.Feed]:
        """Without a token, what a spectator may know (held back by the spectator delay, if
        any); with a seat token, that seat's view."""
        token = bearer(request)
        record = await games.load(game_id)
        viewer = None if token is None else games.seat_for(record, token)
        visible = await gate.visible(record, viewer, spectator_delay)
        last = min(visible, after + limit)
        more = last < visible
        entries = feed(record, viewer, after + 1, last, visible)
        page = s.Feed(
            record.game_id,
            visible,
            await disclose(games, record, viewer, entries, visible),
            has_more=more,
            next_after=last if more else None,
        )
        return answer(page, visible, if_none_match)

    @get(
        "/{game_id:str}/scores",
        operation_id="getScores",
        summary="Scores so far",
        responses=docs.READ,
        response_headers=docs.ETAG,
    )
    async def scores(
        self,
        game_id: GameId,
        games: NamedDependency[GameService],
        spectator_delay: SpectatorDelay,
        gate: Gate,
        if_none_match: IfNoneMatch = None,
    ) -> Response[s.Scores]:
        record = await games.load(game_id)
        version = await gate.visible(record, None, spectator_delay)
        shown = record.entries[:version]
        hands = [
            s.HandScore(e.event.hand, e.event.reason, e.event.scores, e.event.totals)
            for e in shown
            if isinstance(e.event, HandEnded)
        ]
        ended = next((e.event for e in shown if isinstance(e.event, GameEnded)), None)
        status = status_at(record, version)
        body = s.Scores(
            record.game_id,
            record.lobby.variant,  # type: ignore[arg-type]
            version,
            status.totals if status is not None else (),
            hands,
            ended is not None,
            ended.winners if ended else (),
        )
        return answer(body, version, if_none_match)
