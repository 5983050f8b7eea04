"""The lobby: one listing per game, public facts only, and the indexes `GET /games` pages.

A listing holds what anyone may know of a game: its variant, title, the names in its seats
and which are free, whether it is in its lobby, in play or finished, the current hand, its
version and when it was created and last changed. No card, no seed, no token hash: the
events' secret fields never reach a listing.

Indexes (sorted sets of game ids, scored by the last change in microseconds since the epoch,
so the most recently active games page first): `all`, `status:<status>`, `open` (in its
lobby with a free seat) and `closed` (every other game), and each of those per variant
(`variant:<v>`, `variant:<v>:status:<status>`, `variant:<v>:open`, `variant:<v>:closed`).
Every filter `GET /games` offers is one index: a page never sifts.

A batch is committed as one step, so of a game's several events in one batch only the last
one's listing and index scores are ever stored: the events of play before it (which change
only the version and the time, both the last event's to keep) write nothing. `prepare` notes
how far the batch takes each game.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import Final

from events.schema.common import GameEnded, GameStarted, HandDealt
from events.schema.lobby import GameCreated, SeatClaimed, SeatReleased
from events.store.base import RecordedEvent
from projections.base import Doc, IndexAdd, IndexRemove, Put, Write
from projections.feed import Feed

NAME: Final = "lobby"
_LISTED: Final = (SeatClaimed, SeatReleased, GameStarted, HandDealt, GameEnded)
"""The events that change a listing beyond its version and time."""
_LISTED_TYPES: Final = frozenset(_LISTED)
"""The same, tested by exact type on the path every event takes (events are never
subclassed, and `isinstance` against a tuple of struct types costs more)."""
_ALWAYS_WRITE: Final = frozenset((GameCreated, *_LISTED))
"""The events that write their listing even when a later event of the game is in the batch:
they change what the listing holds or which indexes hold it."""
STATUSES: Final = ("lobby", "playing", "finished")


def game_id(stream_id: str) -> str | None:
    category, _, rest = stream_id.partition(":")
    return rest if category == "game" and rest else None


def listing_key(game: str) -> str:
    """A listing's key: the game's stream id."""
    return f"game:{game}"


def score(moment: datetime) -> float:
    """Microseconds since the epoch: exact in a double until the year 2255."""
    return float(round(moment.timestamp() * 1_000_000))


def index_name(
    variant: str | None = None, status: str | None = None, open_: bool | None = None
) -> str:
    """The index holding the games of `variant` (any when None) with `status` (any when None),
    or (`open_` given) those open to join, or those not."""
    if open_ is not None:
        part = "open" if open_ else "closed"
    else:
        part = f"status:{status}" if status else ""
    if variant is None:
        return part or "all"
    return f"variant:{variant}:{part}" if part else f"variant:{variant}"


def indexes(listing: Doc | None) -> tuple[str, ...]:
    """The indexes that hold `listing`."""
    if listing is None:
        return ()
    is_open = listing["status"] == "lobby" and bool(listing["free_seats"])
    return _indexes(listing["variant"], listing["status"], is_open)


@functools.cache
def _indexes(variant: str, status: str, is_open: bool) -> tuple[str, ...]:
    names = [index_name(), index_name(status=status), index_name(variant)]
    names.append(index_name(variant, status))
    names += [index_name(open_=is_open), index_name(variant, open_=is_open)]
    return tuple(names)


class Moment:
    """A recorded time as a listing stores it (ISO text) and as the indexes score it,
    computed once for a run of events recorded together: the events of one append share
    their `recorded_at`, and formatting it was a fifth of the lobby's work per event."""

    __slots__ = ("_last",)

    def __init__(self) -> None:
        self._last: tuple[datetime, str, float] | None = None

    def of(self, at: datetime) -> tuple[str, float]:
        last = self._last  # one tuple, replaced whole: safe to share between threads
        # The same instant in another zone would format differently: the same zone object.
        if last is None or last[0] != at or last[0].tzinfo is not at.tzinfo:
            last = self._last = (at, at.isoformat(), score(at))
        return last[1], last[2]


class LobbyProjection:
    name = NAME
    version = 1

    def __init__(self) -> None:
        self._moment = Moment()
        self._reached: dict[str, int] = {}
        """Each stream of the batch prepared -> the version the batch takes it to."""

    async def prepare(self, batch: Sequence[RecordedEvent], feed: Feed | None = None) -> None:
        """Before the runner applies `batch`: how far it takes each stream."""
        self._reached = {event.stream_id: event.version for event in batch}

    def keys(self, event: RecordedEvent) -> Sequence[str]:
        stream = event.stream_id
        return (stream,) if stream.startswith("game:") else ()  # the listing's key

    def apply(self, event: RecordedEvent, docs: Mapping[str, Doc | None]) -> Sequence[Write]:
        key = event.stream_id  # `game:<id>`, the listing's key too
        if not key.startswith("game:"):
            return ()
        data = event.data
        if self._reached.get(key, 0) > event.version and type(data) not in _ALWAYS_WRITE:
            return ()  # a later event of this game in the batch writes the listing
        game = key[5:]
        before = docs.get(key)
        at, now = self._moment.of(event.recorded_at)
        if isinstance(data, GameCreated):
            listing = created(game, data, event.recorded_at)
        elif before is None:
            return ()  # a game stream that did not begin with game.created: nothing to list
        else:
            listing = changed(before, data)
        listing["version"] = event.version
        listing["updated_at"] = at
        after = indexes(listing)
        was = indexes(before)
        writes: list[Write] = [Put(key, listing)]
        if was != after:
            writes += [IndexRemove(name, game) for name in was if name not in after]
        writes += [IndexAdd(name, game, now) for name in after]
        return writes


def created(game: str, event: GameCreated, at: datetime) -> Doc:
    return {
        "game_id": game,
        "variant": event.variant,
        "title": event.title,
        "seats": [{"seat": seat, "name": None} for seat in range(event.seats)],
        "free_seats": list(range(event.seats)),
        "status": "lobby",
        "hand": 0,
        "version": 1,
        "created_at": at.isoformat(),
        "updated_at": at.isoformat(),
    }


def changed(before: Doc, event: object) -> Doc:
    """The listing after `event`; a new dict (the one given is left as it was, and what the
    two share is never changed in place)."""
    listing = dict(before)
    if type(event) not in _LISTED_TYPES:  # most events: play, which changes only the version
        return listing
    if isinstance(event, SeatClaimed | SeatReleased):
        name = event.name if isinstance(event, SeatClaimed) else None
        seats = [dict(seat) for seat in before["seats"]]
        if 0 <= event.seat < len(seats):
            seats[event.seat]["name"] = name
        listing["seats"] = seats
        listing["free_seats"] = [s["seat"] for s in seats if s["name"] is None]
    elif isinstance(event, GameStarted):
        listing["status"] = "playing"
    elif isinstance(event, HandDealt):
        listing["hand"] = event.hand
    elif isinstance(event, GameEnded):
        listing["status"] = "finished"
    return listing
