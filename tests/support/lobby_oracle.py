"""The lobby recomputed from the events by the write side's own fold (service/play/record.py),
not by the projection: what every listing and index must hold."""

from __future__ import annotations

from collections.abc import Sequence

from events.schema.lobby import GameCreated
from events.store import RecordedEvent
from projections import lobby
from service.play.record import GameRecord


def expected_listings(feed: Sequence[RecordedEvent]) -> dict[str, dict[str, object]]:
    """Each game's listing, by game id."""
    records: dict[str, GameRecord] = {}
    times: dict[str, tuple[str, str]] = {}
    for event in feed:
        game = event.stream_id.partition(":")[2]
        if isinstance(event.data, GameCreated):
            records[game] = GameRecord.begin(game, event.data)
            times[game] = (event.recorded_at.isoformat(), event.recorded_at.isoformat())
            continue
        records[game].apply(event.version, event.data, event.metadata)
        times[game] = (times[game][0], event.recorded_at.isoformat())
    listings = {}
    for game, record in records.items():
        names = record.lobby.names
        status = record.status()
        listings[game] = {
            "game_id": game,
            "variant": record.lobby.variant,
            "title": record.lobby.title,
            "seats": [
                {"seat": seat, "name": name}
                | ({"bot": bot} if (bot := record.lobby.bot_at(seat)) else {})
                for seat, name in enumerate(names)
            ],
            "free_seats": [seat for seat, name in enumerate(names) if name is None],
            "status": "finished" if record.finished else "playing" if record.started else "lobby",
            "hand": 0 if status is None else status.hand,
            "version": record.version,
            "created_at": times[game][0],
            "updated_at": times[game][1],
        }
    return listings


def expected_index(
    listings: dict[str, dict[str, object]],
    feed: Sequence[RecordedEvent],
    variant: str | None = None,
    status: str | None = None,
    open_: bool | None = None,
) -> list[str]:
    """The game ids of an index, newest change first (ties: the greater id first)."""
    last = {e.stream_id.partition(":")[2]: lobby.score(e.recorded_at) for e in feed}
    chosen = [
        game
        for game, listing in listings.items()
        if (variant is None or listing["variant"] == variant)
        and (status is None or listing["status"] == status)
        and (
            open_ is None or open_ == (listing["status"] == "lobby" and bool(listing["free_seats"]))
        )
    ]
    return sorted(chosen, key=lambda game: (last[game], game), reverse=True)
