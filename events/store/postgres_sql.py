"""The statements the PostgreSQL store sends: the call of `fairway_append` (one event, or
arrays of them) and of `fairway_append_together` (several appends at once), the reads of a
stream, the feed and the stream list, the NOTIFY that wakes readers, and the receipt keys'
registry. Parameters are bound, never formatted in."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final, LiteralString

from events.store.base import PreparedEvent

CHANNEL: Final = "fairway_events"

_APPEND: Final = (
    "SELECT stream_version, global_position, hash FROM fairway_append("
    "%b::text, %b::int4, %b::uuid[], %b::text[], %b::int4[], %b::text[], %b::text[])"
)
_APPEND_ONE: Final = (  # the same function for one event, without arrays (cheaper to send)
    "SELECT stream_version, global_position, hash FROM fairway_append("
    "%b::text, %b::int4, %b::uuid, %b::text, %b::int4, %b::text, %b::text)"
)
_APPEND_BATCH: Final = (  # events/migrations/0008_cheaper_append.sql
    "SELECT append_no, stream_version, global_position, hash, error_state, error_message,"
    " error_detail, error_constraint FROM fairway_append_together(%b::text[], %b::int4[],"
    " %b::int4[], %b::uuid[], %b::text[], %b::int4[], %b::text[], %b::text[])"
)
NOTIFY: Final = f"NOTIFY {CHANNEL}"
# `events.` in ORDER BY: a bare `tx_id` would sort by the output column (the int8 cast)
# and miss the index.
_COLUMNS: Final = (
    "global_position, tx_id::text::int8, stream_id, stream_version, event_id, type,"
    " schema_version, data::text, metadata::text, recorded_at, hash"
)
READ_STREAM: Final = (  # then the event id's text, which the hash chain covers
    f"SELECT {_COLUMNS}, event_id::text FROM events"
    " WHERE stream_id = %s::text AND stream_version >= %s::int4"
    " ORDER BY stream_version LIMIT %s::int8"
)
STREAM_VERSION: Final = (
    "SELECT coalesce(max(stream_version), 0) FROM events WHERE stream_id = %s::text"
)
_VISIBLE: Final = "tx_id < pg_snapshot_xmin(pg_current_snapshot())"
READ_FEED: Final = (
    f"SELECT {_COLUMNS} FROM events"
    f" WHERE (tx_id, global_position) > (%s::text::xid8, %s::int8) AND {_VISIBLE}"
    " ORDER BY events.tx_id, events.global_position LIMIT %s::int8"
)
FEED_HEAD: Final = (
    f"SELECT tx_id::text::int8, global_position FROM events WHERE {_VISIBLE}"
    " ORDER BY events.tx_id DESC, events.global_position DESC LIMIT 1"
)
LIST_STREAMS: Final = (
    "SELECT stream_id, max(stream_version) FROM events"
    " WHERE stream_id > %s::text AND starts_with(stream_id, %s::text)"
    " GROUP BY stream_id ORDER BY stream_id LIMIT %s::int8"
)

# The app role may INSERT and SELECT receipt_keys (migration 0005); DO NOTHING needs no more.
REGISTER_RECEIPT_KEY: Final = (
    "INSERT INTO receipt_keys (key_id, public_key) VALUES (%s::text, %s::bytea)"
    " ON CONFLICT DO NOTHING"
)
RECEIPT_KEYS: Final = (
    "SELECT key_id, public_key, first_seen FROM receipt_keys ORDER BY first_seen, key_id"
)


def append_call(
    stream_id: str, expected: int, prepared: list[PreparedEvent]
) -> tuple[LiteralString, tuple[object, ...]]:
    """The statement and parameters of `fairway_append` for these events."""
    if len(prepared) == 1:
        (one,) = prepared
        return _APPEND_ONE, (
            stream_id,
            expected,
            one.event_id,
            one.type,
            one.schema_version,
            one.data.decode(),
            one.metadata.decode(),
        )
    return _APPEND, (
        stream_id,
        expected,
        [p.event_id for p in prepared],
        [p.type for p in prepared],
        [p.schema_version for p in prepared],
        [p.data.decode() for p in prepared],
        [p.metadata.decode() for p in prepared],
    )


def append_batch_call(
    appends: Sequence[tuple[str, int, list[PreparedEvent]]],
) -> tuple[LiteralString, tuple[object, ...]]:
    """The statement and parameters of `fairway_append_together` for these appends (stream id,
    expected version, events), in this order; its rows name each append by its place from 1."""
    events = [p for _, _, prepared in appends for p in prepared]
    return _APPEND_BATCH, (
        [stream_id for stream_id, _, _ in appends],
        [expected for _, expected, _ in appends],
        [len(prepared) for _, _, prepared in appends],
        [p.event_id for p in events],
        [p.type for p in events],
        [p.schema_version for p in events],
        [p.data.decode() for p in events],
        [p.metadata.decode() for p in events],
    )
