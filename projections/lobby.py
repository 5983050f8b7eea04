"""The lobby: one listing per game, public facts only, and the indexes `GET /games` pages.

A listing holds what anyone may know of a game: its variant, title, the names in its seats
(and the level of each bot holding one) and which are free, whether it is in its lobby, in
play or finished, the current hand, its version and when it was created and last changed.
No card, no seed, no token hash: the events' secret fields never reach a listing.

Indexes (sorted sets of game ids, scored by the last change in microseconds since the epoch,
so the most recently active games page first): `all`, `status:<status>`, `open` (in its
lobby with a free seat) and `closed` (every other game), and each of those per variant
(`variant:<v>`, `variant:<v>:status:<status>`, `variant:<v>:open`, `variant:<v>:closed`).
Every filter `GET /games` offers is one index: a page never sifts.

A batch is committed as one step, so of a game's several events in one batch only the last
one's listing and index scores are ever stored: the events of play before it (which change
only the version and the time, both the last event's to keep) write nothing. `prepare` notes
how far the batch takes each game.

Spectators held back (FAIRWAY_SPECTATOR_DELAY, service/live/spectators.py) see a game in
play as it stood just before the N-th most recent seat action. So that the lobby shows them
no more, a listing in play keeps, beside its live `version` and `hand`, where they stood
before each of its last `HELD` seat actions (`held`) and before its first (`first`), and
how many it has had (`actions`); `as_seen` picks the one a delay of N shows. A seat action
begins at the first event of an append (a run of the stream's events recorded at one
moment) whose metadata names a seat, once the game has started: the rule the game's record
counts by (`GameRecord.apply`). Two appends recorded in the same microsecond would count as
one here: a listing then shows an earlier version, never a later one.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import Final

from events.feed import Feed
from events.schema.common import GameEnded, GameStarted, HandDealt
from events.schema.lobby import GameCreated, SeatClaimed, SeatReleased
from events.store.base import RecordedEvent
from projections.base import Doc, IndexAdd, IndexRemove, Put, Write

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
HELD: Final = 16
"""Seat actions a listing in play remembers where it stood before: a spectator delay of up to
this many lists the game exactly as the delayed view shows it; a longer one lists it as it
stood before its first action (its first deal)."""


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
    version = 2
    """2: a listing in play remembers where it stood before its last seat actions."""

    def __init__(self) -> None:
        self._moment = Moment()
        self._reached: dict[str, int] = {}
        """Each stream of the batch prepared -> the version the batch takes it to."""
        self._opens: dict[tuple[str, int], bool] = {}
        """(stream, version) -> whether the event opens an append, for each event whose
        stream has an earlier event in the batch (the others compare with their listing)."""

    async def prepare(self, batch: Sequence[RecordedEvent], feed: Feed | None = None) -> None:
        """Before the runner applies `batch`: how far it takes each stream, and which of its
        events open an append."""
        self._reached = {event.stream_id: event.version for event in batch}
        before: dict[str, datetime] = {}
        opens = self._opens = {}
        for event in batch:
            at = before.get(event.stream_id)
            if at is not None:
                opens[(event.stream_id, event.version)] = at != event.recorded_at
            before[event.stream_id] = event.recorded_at

    def keys(self, event: RecordedEvent) -> Sequence[str]:
        stream = event.stream_id
        return (stream,) if stream.startswith("game:") else ()  # the listing's key

    def apply(self, event: RecordedEvent, docs: Mapping[str, Doc | None]) -> Sequence[Write]:
        key = event.stream_id  # `game:<id>`, the listing's key too
        if not key.startswith("game:"):
            return ()
        data = event.data
        before = docs.get(key)
        at, now = self._moment.of(event.recorded_at)
        acts = self._acts(event, before, at)
        if (
            self._reached.get(key, 0) > event.version
            and type(data) not in _ALWAYS_WRITE
            and not acts
        ):
            return ()  # a later event of this game in the batch writes the listing
        game = key[5:]
        if isinstance(data, GameCreated):
            listing = created(game, data, event.recorded_at)
        elif before is None:
            return ()  # a game stream that did not begin with game.created: nothing to list
        else:
            listing = changed(before, data)
            if acts:
                listing.update(acted(before, event.version))
        listing["version"] = event.version
        listing["updated_at"] = at
        after = indexes(listing)
        was = indexes(before)
        writes: list[Write] = [Put(key, listing)]
        if was != after:
            writes += [IndexRemove(name, game) for name in was if name not in after]
        writes += [IndexAdd(name, game, now) for name in after]
        return writes

    def _acts(self, event: RecordedEvent, before: Doc | None, at: str) -> bool:
        """Whether `event` begins a seat action: it opens an append (recorded at another
        moment than the stream's event before it) whose metadata names a seat, in a game in
        play."""
        if before is None or before["status"] != "playing":
            return False
        if not isinstance(event.metadata.get("seat"), int):
            return False
        opens = self._opens.get((event.stream_id, event.version))
        return opens if opens is not None else at != before["updated_at"]


def acted(before: Doc, version: int) -> Doc:
    """The fields a seat action beginning at `version` changes: where the game stood just
    before it joins `held` (and is `first`, for the game's first action)."""
    stood = [version - 1, before["hand"]]
    actions = before.get("actions", 0) + 1
    fields: Doc = {"actions": actions, "held": [*before.get("held", ())[1 - HELD :], stood]}
    if actions == 1:
        fields["first"] = stood
    return fields


def as_seen(listing: Doc, delay: int) -> Doc:
    """The listing as a spectator held back `delay` seat actions sees it: a game in play
    with its `version` and `hand` as they stood before the `delay`-th most recent action
    (before the first, when it has had fewer), as `service.live.spectators.horizon` counts."""
    actions = listing.get("actions", 0)
    if delay <= 0 or not actions or listing["status"] != "playing":
        return listing
    wanted = max(0, actions - delay)  # the action that begins past the spectator's version
    held = listing["held"]
    oldest = actions - len(held)
    version, hand = held[wanted - oldest] if wanted >= oldest else listing["first"]
    return listing | {"version": version, "hand": hand}


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
        bot = event.bot if isinstance(event, SeatClaimed) else ""
        seats = [dict(seat) for seat in before["seats"]]
        if 0 <= event.seat < len(seats):
            seats[event.seat]["name"] = name
            if bot:  # a bot's level; a person's seat has no `bot` key
                seats[event.seat]["bot"] = bot
            else:
                seats[event.seat].pop("bot", None)
        listing["seats"] = seats
        listing["free_seats"] = [s["seat"] for s in seats if s["name"] is None]
    elif isinstance(event, GameStarted):
        listing["status"] = "playing"
    elif isinstance(event, HandDealt):
        listing["hand"] = event.hand
    elif isinstance(event, GameEnded):
        listing["status"] = "finished"
    return listing
