"""/games: open a game, claim seats, start, look, act, read scores and the event feed."""

from __future__ import annotations

from typing import Annotated, Any, cast

from litestar import Controller, Request, Response, delete, get, post
from litestar.di import NamedDependency
from litestar.params import Parameter

from events.schema.common import GameEnded, GameOptions, HandEnded
from service.contract import schemas as s
from service.contract.public import HandEndReason
from service.http import docs
from service.http.acting import Action, take_action
from service.http.chain import disclose, feed
from service.http.controllers import bots, listing
from service.http.params import (
    SEAT_TOKEN,
    GameId,
    Gate,
    IdempotencyKey,
    IfMatch,
    IfNoneMatch,
    LobbyKey,
    SpectatorDelay,
    answer,
    bearer,
    required_token,
)
from service.http.summaries import clock_of, iso, links, seat_states, signed_summary, summary
from service.live.spectators import state_at, status_at
from service.play.games import GameService


class GameController(Controller):
    path = "/games"
    tags = ["games"]

    list_games = listing.list_games
    """GET /games, the lobby (service/http/controllers/listing.py), served from its projection."""
    seat_bot = bots.seat_bot
    """POST /games/{id}/seats/{seat}/bot (service/http/controllers/bots.py)."""
    rematch = bots.rematch
    """POST /games/{id}/rematch (service/http/controllers/bots.py)."""

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
        seated = [(bot.seat, bot.level, bot.name) for bot in data.bots]
        record, token, version = await games.opened(
            data.variant, data.seats, options, data.title, idempotency_key, seated
        )
        receipt = games.receipt(record, version)
        opened = s.GameOpened(record.game_id, token, version, data.variant, data.seats, receipt)
        return answer(opened, version, status_code=201, location=f"/games/{record.game_id}")

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
        """In a game with bot seats, the claim that fills the last free seat starts the game
        in the same write (the answer's `version` is after the first deal)."""
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
        idempotency_key: IdempotencyKey = None,
    ) -> Response[s.GameSummary]:
        outcome = await games.release(game_id, required_token(request), seat, idempotency_key)
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
        idempotency_key: IdempotencyKey = None,
    ) -> Response[s.GameSummary]:
        """With the seat's own token, in a game in play. The seat's token still reads its
        view but acts no more (`409 seat_resigned`); what the seat scores is what the bot's
        moves score (docs/TOURNAMENTS.md, "Turn clocks and resigning"). A retry with the
        same `Idempotency-Key` gets the first answer."""
        key = idempotency_key
        outcome = await games.resign(game_id, required_token(request), seat, key=key)
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
        deadline = iso(min(deadlines.values(), default=None))
        if decider is None:
            body = s.PublicView(
                record.game_id, version, None, None, seats, deadline, **links(record, version)
            )
        else:
            state = state_at(record, version)
            body = s.PublicView(
                record.game_id,
                version,
                decider.status(state),
                decider.view(state, None),
                seats,
                deadline,
                **links(record, version),
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
        # The lean path (service/http/lean.py) serves most of these requests in front of the
        # router, with the same function; this handler serves the rest and documents the route.
        authorization = request.headers.get("authorization")
        body, last = await take_action(
            games, game_id, data, authorization, idempotency_key, if_match
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
            # the stored reason is one of the four the deciders write (the public type)
            s.HandScore(
                e.event.hand, cast(HandEndReason, e.event.reason), e.event.scores, e.event.totals
            )
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
