"""Cursors for paging a sorted index by (score, member).

A cursor names the last entry a page returned. Paging on from it by value, not by offset,
keeps pages stable under concurrent writes: an entry that stays put is neither repeated nor
missed, whatever is added or removed before it.
"""

from __future__ import annotations

import base64
import binascii
import math

import msgspec

from projections.base import IndexEntry, InvalidCursor

MAX_CURSOR = 400


class _Position(msgspec.Struct, array_like=True, frozen=True):
    score: float
    member: str


def encode_cursor(entry: IndexEntry) -> str:
    raw = msgspec.json.encode(_Position(entry.score, entry.member))
    return base64.urlsafe_b64encode(raw).decode().rstrip("=")


def decode_cursor(cursor: str) -> IndexEntry:
    if not isinstance(cursor, str) or not cursor or len(cursor) > MAX_CURSOR:
        raise InvalidCursor("the cursor is not one a page handed out")
    try:
        raw = base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4))
        position = msgspec.json.decode(raw, type=_Position)
    except (binascii.Error, ValueError, msgspec.DecodeError):
        raise InvalidCursor("the cursor is not one a page handed out") from None
    if not math.isfinite(position.score):
        raise InvalidCursor("the cursor is not one a page handed out")
    return IndexEntry(position.member, position.score)


def after(entry: IndexEntry, position: IndexEntry, descending: bool) -> bool:
    """Whether `entry` comes after `position` in the index's order."""
    mine = (entry.score, entry.member)
    theirs = (position.score, position.member)
    return mine < theirs if descending else mine > theirs
