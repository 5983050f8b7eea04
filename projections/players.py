"""Each player name's history: games played and finished, wins, points, places, and the
list of their games with the result.

A player is a name claimed for a seat (service/play/lobby.py); the same name in two games is the
same player, and a name holding several seats of one game plays once per seat. Names are
only final when the game starts, so nothing is counted before `game.started`.

A duplicate round's game (its `game.created` names `peers`) is dealt the same cards as every
other table of its round, so its final totals would tell the tables still playing what is
coming (docs/TOURNAMENTS.md, "Fair seating and duplicate deals"). Its result is therefore
counted, and shown, only when the tournament's `round.closed` lists it: until then the game
reads as in play. Every other game (casual, or a tournament's without duplicate deals) is
counted at its own `game.ended`.

The keys:
- `game:<game_id>`: the game as this projection needs it (variant, each seat's name, and
  once over the totals, winners and each seat's place; `held` for a duplicate round's game).
  Read at the game's own events, and at the `round.closed` that lists it.
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
from events.schema.tournament import RoundClosed
from events.store.base import RecordedEvent
from projections.base import Doc, Incr, IndexAdd, Put, Write
from projections.folds import GAME_PREFIX, game_id

_READS = (GameCreated, SeatClaimed, SeatReleased, GameStarted, GameEnded, RoundClosed)
_READ_TYPES = frozenset(_READS)
"""Tested by exact type on the path every event takes (events are never subclassed)."""


class PlayerGame(msgspec.Struct, frozen=True):
    """The stored `game:<game_id>` document."""

    variant: str
    names: list[str | None]
    started: bool = False
    finished: bool = False
    held: bool = False
    """A duplicate round's game: its result waits for the round's `round.closed`."""
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
    version = 2
    """2: a duplicate round's game is counted at its round's close, not at its own end."""
    types = _READ_TYPES

    def keys(self, event: RecordedEvent) -> Sequence[str]:
        data = event.data
        kind = type(data)
        if kind not in _READ_TYPES:  # first: most events stop here
            return ()
        if kind is RoundClosed:
            return tuple(game_key(result.game_id) for result in data.results)
        stream = event.stream_id  # `game:<game_id>`, which is `game_key(game_id)`
        return (stream,) if stream.startswith(GAME_PREFIX) else ()

    def apply(self, event: RecordedEvent, docs: Mapping[str, Doc | None]) -> Sequence[Write]:
        data = event.data
        if type(data) not in _READ_TYPES:
            return ()
        if isinstance(data, RoundClosed):
            return _round_closed(data, docs)
        game = game_id(event)
        if game is None:
            return ()
        if isinstance(data, GameCreated):
            fresh: Doc = {"variant": data.variant, "names": [None] * data.seats}
            if data.peers:
                fresh["held"] = True
            return (Put(game_key(game), fresh),)
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
            if doc.get("held"):
                return ()  # counted when its round closes
            return _finish(game, doc, data.totals, data.winners)
        return (Put(game_key(game), new), *writes)


def _round_closed(data: RoundClosed, docs: Mapping[str, Doc | None]) -> Sequence[Write]:
    """The round's duplicate games, held since their own end, are counted now. A game this
    projection never saw, or one already counted (a round without duplicate deals), is
    left alone."""
    writes: list[Write] = []
    for result in data.results:
        doc = docs.get(game_key(result.game_id))
        if doc is None or not doc.get("held") or doc.get("finished"):
            continue
        writes += _finish(result.game_id, doc, result.totals, result.winners)
    return writes


def _finish(game: str, doc: Doc, totals: Sequence[int], winners: Sequence[int]) -> list[Write]:
    """The game's result on its document, and each seated name's counters."""
    seat_places = places(totals, winners)
    new = dict(doc) | {
        "finished": True,
        "totals": list(totals),
        "winners": list(winners),
        "places": seat_places,
    }
    writes: list[Write] = [Put(game_key(game), new)]
    for seat, name in enumerate(doc["names"]):
        if name is None:
            continue
        key = counters_key(name)
        writes.append(Incr(key, "finished", 1))
        writes.append(Incr(key, "wins", int(seat in winners)))
        writes.append(Incr(key, "points", totals[seat]))
        writes.append(Incr(key, f"place:{seat_places[seat]}", 1))
    return writes
