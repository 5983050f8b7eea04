"""The standings served from their read model (projections/standings.py): a tournament's
document and its live round's games, the standings live or as of a closed round, reads
shared by the readers of one process, and the NDJSON lines of the standings as they change.
A tournament the read model does not know (yet: it follows the feed) is 404
`tournament_not_found`."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any

import msgspec

from domain.tournament.matchpoints import MatchpointRow
from domain.tournament.standings import Row
from projections import boards, standings
from projections.base import Doc, ProjectionReader, ProjectionsUnavailable
from service.contract import standings as s
from service.contract.problems import ApiError

POLL = 0.25
"""Seconds between two looks at the read model for the streams of one tournament."""


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


def _rows(
    rows: list[Row], bots: dict[str, str], scored: list[MatchpointRow] | None = None
) -> list[s.StandingsRow]:
    """The rows as served, each bot player marked with its level; with matchpoints
    (`scored`), in their order and rank, each with its totals beside."""
    if scored is None:
        return [
            s.StandingsRow(**msgspec.structs.asdict(row), bot=bots.get(row.player)) for row in rows
        ]
    totals = {row.player: msgspec.structs.asdict(row) for row in rows}
    return [
        s.StandingsRow(
            **(totals[row.player] | {"rank": row.rank, "withdrawn": row.withdrawn}),
            bot=bots.get(row.player),
            percent=row.percent,
            matchpoints=row.matchpoints,
            top=row.top,
            boards=row.boards,
        )
        for row in scored
    ]


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
        rows=_rows(standings.now(tournament, games), tournament.bots, _scored(tournament, games)),
        scoring=tournament.scoring,  # type: ignore[arg-type]
    )


def _scored(
    tournament: standings.Tournament, games: list[Doc | None]
) -> list[MatchpointRow] | None:
    matched = tournament.scoring == "matchpoints"
    return boards.now(tournament, games) if matched else None


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
        rows=_rows(
            standings.as_of(tournament, number),
            tournament.bots,
            boards.as_of(tournament, number) if tournament.scoring == "matchpoints" else None,
        ),
        scoring=tournament.scoring,  # type: ignore[arg-type]
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
