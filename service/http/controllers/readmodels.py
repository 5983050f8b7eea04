"""GET /games/{id}/scoreboard and GET /players/{name}, served from the read models
(projections/scoreboard.py, projections/players.py), never from the event store.

Everything served here is public from the moment it exists: seats' names, the score of each
finished hand, totals, whose turn it is, places. No card and no seed is in these read models
(tests/unit/projections/test_readmodels_no_leaks.py, tests/api/test_api_no_leaks.py). A
reader without a seat token sees the scoreboard no further than the spectator delay and the
duplicate gate let it see the game (`held_back`), as on every other read of the game.
"""

from __future__ import annotations

import hashlib
import unicodedata
from typing import Annotated, Any

import msgspec
from litestar import Controller, Request, Response, get
from litestar.di import NamedDependency
from litestar.openapi.datastructures import ResponseSpec
from litestar.params import Parameter

from domain.decider import Status
from projections import players, scoreboard
from projections.base import ProjectionReader, ProjectionsUnavailable
from service.contract import schemas as s
from service.contract.problems import PROBLEM_JSON, ApiError, Problem
from service.contract.public import Variant
from service.http import docs
from service.http.params import GameId, Gate, IfNoneMatch, SpectatorDelay, answer, bearer
from service.live.spectators import status_at
from service.play.games import GameService
from service.play.record import GameRecord

UNAVAILABLE = {
    503: ResponseSpec(
        Problem,
        generate_examples=False,
        description="The read models are unavailable (`projections_unavailable`: Redis does "
        "not answer, the projection is being rebuilt, or the game is not in it yet); play "
        "goes on. See `Retry-After`",
        media_type=PROBLEM_JSON,
    )
}
SCOREBOARD = (
    docs.NOT_MODIFIED
    | docs.problems(400, 401, 429)
    | UNAVAILABLE
    | {
        404: ResponseSpec(
            Problem,
            generate_examples=False,
            description="No such game (`game_not_found`)",
            media_type=PROBLEM_JSON,
        )
    }
)
PLAYER = (
    docs.NOT_MODIFIED
    | docs.problems(400, 429)
    | UNAVAILABLE
    | {
        404: ResponseSpec(
            Problem,
            generate_examples=False,
            description="No game has started with a seat of that name (`player_not_found`)",
            media_type=PROBLEM_JSON,
        )
    }
)


class Scoreboard(msgspec.Struct):
    """A game's scores, hand by hand and in total, and where it stands."""

    game_id: str
    variant: Variant
    version: int
    """The game's version this scoreboard is of (also its ETag); it may trail the game's
    own by the read models' lag (`GET /projections`)."""
    seats: list[s.SeatInfo]
    status: Status | None
    """Phase, hand, whose turn (`to_act`), totals and winners; null before the start."""
    hands: list[s.HandScore]
    """Every finished hand: why it ended, its scores, the running totals after it."""
    totals: tuple[int, ...]
    finished: bool
    winners: tuple[int, ...]


class PlayerGame(msgspec.Struct):
    """One seat a player held in a game, and how it ended for that seat."""

    game_id: str
    seat: int
    variant: Variant
    finished: bool
    total: int | None
    """The seat's final total; null while the game goes on."""
    place: int | None
    """1 + the number of seats that finished strictly better; null while the game goes on."""
    won: bool


class PlayerHistory(msgspec.Struct):
    """A player name's record: a name holding several seats of one game plays once per seat."""

    name: str
    games_played: int
    """Seats held in games that started."""
    games_finished: int
    wins: int
    points: int
    """The sum of final totals over finished games (every variant counted alike)."""
    best_place: int | None
    worst_place: int | None
    """Null until a game has finished."""
    games: list[PlayerGame]
    """The most recently started first, a page at a time."""
    next_cursor: str | None
    """Pass as `cursor` for the next page; null on the last page."""


async def held_back(
    request: Request[Any, Any, Any],
    games: GameService,
    gate: Gate,
    game_id: str,
    delay: int,
) -> tuple[GameRecord, int] | None:
    """The game's record and the last version the reader may see, when that is short of the
    game's own; None when the reader sees the game as it is. A seat's token sees its own
    game as it is (401 for a token that holds no seat of it); anyone else is held back by
    the spectator delay and the duplicate gate (`DuplicateGate.held_now`)."""
    token = bearer(request)
    if token is None:
        return await gate.held_now(game_id, delay)
    games.seat_for(await games.load(game_id), token)
    return None


def seat_infos(line: scoreboard.GameLine) -> list[s.SeatInfo]:
    bots = line.bots or [None] * len(line.seats)
    return [s.SeatInfo(seat, name, bots[seat]) for seat, name in enumerate(line.seats)]


async def seats_of(reader: ProjectionReader, games: GameService, game_id: str) -> list[s.SeatInfo]:
    """Who holds each seat of a started game (and the level of each bot seat): from the
    scoreboard's read model, else the game's record (public facts, fixed from the start)."""
    try:
        doc = await reader.get(scoreboard.Scoreboard.name, scoreboard.key(game_id))
    except ProjectionsUnavailable:  # served from the game's record then, as the replay is
        doc = None
    if doc is not None:
        return seat_infos(msgspec.convert(doc, scoreboard.GameLine))
    lobby = (await games.load(game_id)).lobby
    return [s.SeatInfo(seat, name, lobby.bot_at(seat)) for seat, name in enumerate(lobby.names)]


PlayerName = Annotated[
    str, Parameter(min_length=1, max_length=40, description="A seat name, as claimed")
]


class ReadModelController(Controller):
    path = "/games"
    tags = ["games"]

    @get(
        "/{game_id:str}/scoreboard",
        operation_id="getScoreboard",
        summary="The scoreboard: every hand's scores, the totals, whose turn it is",
        responses=SCOREBOARD,
        response_headers=docs.ETAG,
    )
    async def scoreboard(
        self,
        game_id: GameId,
        request: Request[Any, Any, Any],
        reader: NamedDependency[ProjectionReader],
        games: NamedDependency[GameService],
        spectator_delay: SpectatorDelay,
        gate: Gate,
        if_none_match: IfNoneMatch = None,
    ) -> Response[Scoreboard]:
        """Without a token, as a spectator sees the game: held back by the spectator delay
        (service/live/spectators.py), and for a table of a duplicate round still in play,
        the hands every table of the round has finished (service/tournaments/duplicate.py:
        a hand's scores tell of its cards, which another table has still to play); its
        `version` says where. With a seat token, the seat's own game as it is."""
        game_doc, hands_doc = await reader.get_many(
            scoreboard.Scoreboard.name, [scoreboard.key(game_id), scoreboard.hands_key(game_id)]
        )
        if game_doc is None:
            await games.load(game_id)  # 404 game_not_found when there is no such game
            raise ProjectionsUnavailable(f"game {game_id} is not in the scoreboard yet")
        line = msgspec.convert(game_doc, scoreboard.GameLine)
        hands = [] if hands_doc is None else msgspec.convert(hands_doc["hands"], list[s.HandScore])
        status, version = line.status, line.version
        held = await held_back(request, games, gate, game_id, spectator_delay)
        if held is not None and held[1] < line.version:  # not a read model that lags
            record, version = held
            status = status_at(record, version)
            shown = {hand for hand, ended in record.hand_ended_at.items() if ended <= version}
            hands = [hand for hand in hands if hand.hand in shown]
        body = Scoreboard(
            game_id=line.game_id,
            variant=line.variant,  # type: ignore[arg-type]
            version=version,
            seats=seat_infos(line),
            status=status,
            hands=hands,
            totals=status.totals if status is not None else (),
            finished=status is not None and status.phase == "game_over",
            winners=status.winners if status is not None else (),
        )
        return answer(body, version, if_none_match)


class PlayerController(Controller):
    path = "/players"
    tags = ["players"]

    @get(
        "/{name:str}",
        operation_id="getPlayer",
        summary="A player's record and games, newest first",
        responses=PLAYER,
        response_headers=docs.ETAG,
    )
    async def player(
        self,
        name: PlayerName,
        reader: NamedDependency[ProjectionReader],
        limit: Annotated[int, Parameter(ge=1, le=200, description="At most this many")] = 50,
        cursor: Annotated[
            str | None,
            Parameter(max_length=400, description="The `next_cursor` of the previous page"),
        ] = None,
        if_none_match: IfNoneMatch = None,
    ) -> Response[PlayerHistory]:
        name = unicodedata.normalize("NFC", name)  # as names are stored
        counters = await reader.counters(players.Players.name, players.counters_key(name))
        if not counters.get("games"):
            raise ApiError(404, "player_not_found", f"no game has started with a seat {name!r}")
        page = await reader.page(
            players.Players.name,
            players.index_key(name),
            limit=limit,
            cursor=cursor,
            descending=True,
        )
        seats = [entry.member.rsplit(":", 1) for entry in page.entries]
        docs_ = await reader.get_many(
            players.Players.name, [players.game_key(game) for game, _ in seats]
        )
        entries = [
            _player_game(game, int(seat), doc)
            for (game, seat), doc in zip(seats, docs_, strict=True)
            if doc is not None
        ]
        placed = sorted(
            int(k.split(":")[1]) for k, v in counters.items() if k.startswith("place:") and v
        )
        body = PlayerHistory(
            name=name,
            games_played=counters.get("games", 0),
            games_finished=counters.get("finished", 0),
            wins=counters.get("wins", 0),
            points=counters.get("points", 0),
            best_place=placed[0] if placed else None,
            worst_place=placed[-1] if placed else None,
            games=entries,
            next_cursor=page.next_cursor,
        )
        return _tagged(body, if_none_match)


def _player_game(game: str, seat: int, doc: dict[str, Any]) -> PlayerGame:
    result = msgspec.convert(doc, players.PlayerGame)
    over = result.finished
    return PlayerGame(
        game_id=game,
        seat=seat,
        variant=result.variant,  # type: ignore[arg-type]
        finished=over,
        total=result.totals[seat] if over else None,
        place=result.places[seat] if over else None,
        won=over and seat in result.winners,
    )


def _tagged(body: Any, if_none_match: str | None) -> Response[Any]:
    """A response whose ETag is a digest of its body: a player's record has no version."""
    encoded = msgspec.json.encode(body)
    tag = '"' + hashlib.sha256(encoded).hexdigest()[:20] + '"'
    if if_none_match is not None:
        held = {t.strip().removeprefix("W/") for t in if_none_match.split(",")}
        if tag in held or "*" in held:
            return Response(None, status_code=304, headers={"ETag": tag})
    return Response(body, headers={"ETag": tag})
