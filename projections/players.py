"""Each player name's history: games played and finished, wins, points, places, and the
list of their games with the result.

A player is a name claimed for a seat (service/lobby.py); the same name in two games is the
same player, and a name holding several seats of one game plays once per seat. Names are
only final when the game starts, so nothing is counted before `game.started`.

The keys:
- `game:<game_id>`: the game as this projection needs it (variant, each seat's name, and
  once over the totals, winners and each seat's place). Read at the game's own events only.
- `player:<name>` (counters): `games`, `finished`, `wins`, `points` (the sum of final
  totals) and `place:<n>` (how often the player finished n-th), so the best and worst place
  are the smallest and largest n counted. Written by `Incr` alone: no event reads them.
- `games:<name>` (index): one member `<game_id>:<seat>` per seat played, scored by the
  feed position of the game's start, so a page in score order is chronological.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import msgspec

from events.schema.common import GameEnded, GameStarted
from events.schema.lobby import GameCreated, SeatClaimed, SeatReleased
from events.store.base import RecordedEvent
from projections.base import Doc, Incr, IndexAdd, Put, Write
from projections.folds import GAME_PREFIX, game_id

_READS = (GameCreated, SeatClaimed, SeatReleased, GameStarted, GameEnded)
_READ_TYPES = frozenset(_READS)
"""Tested by exact type on the path every event takes (events are never subclassed)."""


class PlayerGame(msgspec.Struct, frozen=True):
    """The stored `game:<game_id>` document."""

    variant: str
    names: list[str | None]
    started: bool = False
    finished: bool = False
    totals: list[int] = []
    winners: list[int] = []
    places: list[int] = []
    """Each seat's place once over: 1 + the number of seats that did strictly better."""


def game_key(game: str) -> str:
    return f"game:{game}"


def counters_key(name: str) -> str:
    return f"player:{name}"


def index_key(name: str) -> str:
    return f"games:{name}"


def member(game: str, seat: int) -> str:
    return f"{game}:{seat}"


def places(totals: Sequence[int], winners: Sequence[int]) -> list[int]:
    """1 + the number of seats strictly better. Which way is better (low or high totals)
    is read off the winners, who hold the best total whichever way the variant counts."""
    if not winners:
        return [1] * len(totals)
    best = totals[winners[0]]
    high = best > min(totals)
    return [
        1 + sum((other > mine) if high else (other < mine) for other in totals) for mine in totals
    ]


class Players:
    name = "players"
    version = 1
    types = _READ_TYPES

    def keys(self, event: RecordedEvent) -> Sequence[str]:
        if type(event.data) not in _READ_TYPES:  # first: most events stop here
            return ()
        stream = event.stream_id  # `game:<game_id>`, which is `game_key(game_id)`
        return (stream,) if stream.startswith(GAME_PREFIX) else ()

    def apply(self, event: RecordedEvent, docs: Mapping[str, Doc | None]) -> Sequence[Write]:
        data = event.data
        if type(data) not in _READ_TYPES:
            return ()
        game = game_id(event)
        if game is None:
            return ()
        if isinstance(data, GameCreated):
            return (Put(game_key(game), {"variant": data.variant, "names": [None] * data.seats}),)
        doc = docs.get(game_key(game))
        if doc is None:
            raise ValueError(f"{event.stream_id} v{event.version}: no game document before it")
        new = dict(doc)
        writes: list[Write] = []
        names: list[str | None] = doc["names"]
        if isinstance(data, SeatClaimed | SeatReleased):
            new["names"] = list(names)
            new["names"][data.seat] = data.name if isinstance(data, SeatClaimed) else None
        elif isinstance(data, GameStarted):
            new["started"] = True
            for seat, name in enumerate(names):
                if name is not None:
                    writes.append(Incr(counters_key(name), "games", 1))
                    writes.append(
                        IndexAdd(index_key(name), member(game, seat), event.global_position)
                    )
        elif isinstance(data, GameEnded):
            seat_places = places(data.totals, data.winners)
            new |= {
                "finished": True,
                "totals": list(data.totals),
                "winners": list(data.winners),
                "places": seat_places,
            }
            for seat, name in enumerate(names):
                if name is None:
                    continue
                key = counters_key(name)
                writes.append(Incr(key, "finished", 1))
                writes.append(Incr(key, "wins", int(seat in data.winners)))
                writes.append(Incr(key, "points", data.totals[seat]))
                writes.append(Incr(key, f"place:{seat_places[seat]}", 1))
        return (Put(game_key(game), new), *writes)
