"""POST /games/{id}/seats/{seat}/bot (the creator seats a bot before the start) and
POST /games/{id}/rematch (a seat's holder opens a finished game again).

Declared here, mounted by GameController (as `listing.list_games` is): Litestar wants one
controller per path. The bots themselves play from service/bots.
"""

from __future__ import annotations

from typing import Annotated, Any

from litestar import Controller, Request, Response, post
from litestar.di import NamedDependency
from litestar.params import Parameter

from service.contract import schemas as s
from service.http import docs
from service.http.params import SEAT_TOKEN, GameId, answer, required_token
from service.http.summaries import signed_summary
from service.play.games import GameService


@post(
    "/{game_id:str}/seats/{seat:int}/bot",
    operation_id="seatBot",
    summary="Seat a bot in a free seat before the start (creator)",
    security=SEAT_TOKEN,
    status_code=201,
    responses=docs.SEAT_BOT,
    response_headers=docs.CREATED_HEADERS,
)
async def seat_bot(
    self: Controller,
    game_id: GameId,
    seat: Annotated[int, Parameter(ge=0, le=9, description="The free seat the bot takes")],
    data: Annotated[s.SeatBot, docs.SEAT_BOT_BODY],
    request: Request[Any, Any, Any],
    games: NamedDependency[GameService],
) -> Response[s.GameSummary]:
    """With the creator's token. The seat has no token: the service's bots play it from the
    seat's own view and legal actions (`seat.claimed` names the level in `bot`). The bot
    that fills the last free seat starts the game (as a person's claim would). Refused:
    an unknown level (422 `unknown_bot_level`, naming the levels), a taken seat (409
    `seat_taken`), a game that has started (409 `game_already_started`), anyone but the
    creator (403 `not_creator`)."""
    outcome = await games.seat_bot(game_id, required_token(request), seat, data.level, data.name)
    version = outcome.last_version
    body = signed_summary(games, outcome.record, version)
    return answer(body, version, status_code=201, location=f"/games/{game_id}/seats/{seat}")


@post(
    "/{game_id:str}/rematch",
    operation_id="rematchGame",
    summary="Play a finished game again: same variant, options and seats (a seat's holder)",
    security=SEAT_TOKEN,
    status_code=201,
    responses=docs.REMATCH,
    response_headers=docs.CREATED_HEADERS,
)
async def rematch(
    self: Controller,
    game_id: GameId,
    request: Request[Any, Any, Any],
    games: NamedDependency[GameService],
) -> Response[s.RematchOpened]:
    """With a seat's token, once the game is over (409 `game_in_play` before). The rematch
    is started at once: each seat's holder holds the same seat there with the same token,
    each bot seat a bot of the same level. One rematch per game: asked again, by any seat,
    the answer names the same game. The two games link to each other (`rematch_of` and
    `rematch` in their summaries and public views)."""
    record = await games.rematch(game_id, required_token(request))
    version = record.version
    body = s.RematchOpened(record.game_id, game_id, version, games.receipt(record, version))
    return answer(body, version, status_code=201, location=f"/games/{record.game_id}")
