"""The feed's entries and their hash chain: which links, event ids and metadata a viewer may
see.

The chain hash of an event is SHA-256 over its canonical bytes, which hold its event id and
metadata. With those and the hash, a viewer could try each card a hidden field might hold
(52 tries) and find the one that hashes right. So event id, time and metadata are shown
only where the viewer may know the whole event (`GameRecord.knows_whole`), and the hash
only there too, except on events whose hidden part is a 256-bit secret (`shows_hash`): an
action's event id derives from its Idempotency-Key, which a client may have made guessable.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import msgspec

from domain.decider import Viewer
from events.codec import GENESIS_HASH
from events.schema.lobby import TurnPlayedFor
from service.contract import schemas as s
from service.contract.public import to_public
from service.play.games import GameService
from service.play.loading import stream_id
from service.play.record import Entry, GameRecord


def links(
    record: GameRecord, viewer: Viewer, first: int, last: int, as_of: int
) -> Iterator[tuple[Entry, Any, str | None, str | None]]:
    """Each entry of `first`..`last` with the event as `viewer` may see it, its hash and
    the previous event's hash (each None where the viewer may not see it)."""
    first = max(first, 1)
    if first > min(last, len(record.entries)):
        return  # a page past the end: nothing
    if first == 1:
        prev: str | None = GENESIS_HASH.hex()
    else:
        before = record.entries[first - 2]
        shown = record.shows_hash(before, viewer, as_of)
        before_link = record.link(before.version)
        prev = before_link.hex() if shown and before_link else None
    for entry in record.entries[first - 1 : last]:
        event = record.redact(entry, viewer, as_of)
        whole = event == entry.event or record.hand_over(entry, as_of)
        if isinstance(entry.event, TurnPlayedFor):  # known whole where its move is
            whole = record.knows_whole(entry, viewer, as_of)
        shown = whole or record.shows_hash(entry, viewer, as_of)
        stored = record.link(entry.version) if shown else b""
        link = stored.hex() if stored else None
        yield entry, event, link, prev
        prev = link


def feed(
    record: GameRecord, viewer: Viewer, first: int, last: int, as_of: int
) -> list[s.FeedEntry]:
    """Events `first`..`last` in their public shape, as `viewer` may know them at `as_of`,
    with the chain hashes the viewer may see (`links`)."""
    return [
        s.FeedEntry(entry.version, to_public(event), hash=link, prev_hash=prev)
        for entry, event, link, prev in links(record, viewer, first, last, as_of)
    ]


async def disclose(
    games: GameService,
    record: GameRecord,
    viewer: Viewer,
    page: list[s.FeedEntry],
    as_of: int | None = None,
) -> list[s.FeedEntry]:
    """The page with event id, time and metadata on the entries whose whole event the
    viewer may know as of `as_of` (default: now; a delayed spectator's horizon), read from
    the store: the cache keeps none of them."""
    entries = record.entries
    as_of = record.version if as_of is None else as_of
    known = [e for e in page if record.knows_whole(entries[e.version - 1], viewer, as_of)]
    if not known:
        return page
    first = known[0].version
    rows = await games.store.read_stored(
        stream_id(record.game_id), first, known[-1].version - first + 1
    )
    by_version = {row.version: row for row in rows}
    wanted = {e.version for e in known}
    out = []
    for entry in page:
        row = by_version.get(entry.version)
        if entry.version in wanted and row is not None:
            entry = msgspec.structs.replace(
                entry,
                event_id=row.event_id,
                recorded_at=row.recorded_at.isoformat(),
                metadata=_metadata(row.metadata),
            )
        out.append(entry)
    return out


_METADATA = msgspec.json.Decoder(s.EventMetadata)


def _metadata(stored: str) -> s.EventMetadata | None:
    try:
        return _METADATA.decode(stored)
    except (msgspec.ValidationError, msgspec.DecodeError):
        return None  # an early event's metadata in an older shape: shown without it
