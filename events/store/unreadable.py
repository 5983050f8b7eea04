"""Rows this code cannot decode: what a reader gets instead of the event, and the one report
of each to the operator.

A row is `newer` when its type or schema version is one this release does not know (a newer
release wrote it during a rolling deploy: this one will read it once upgraded), or garbage
when its type and version are known but its data does not decode as them. Either is a
fault of that one stream, never of the feed: reading the stream raises `UnreadableEvent`
naming it, while the feed gives the row with an `Unreadable` as its data, so every consumer
passes over that stream's row and serves the others.
"""

from __future__ import annotations

import logging
from collections import OrderedDict
from collections.abc import Callable
from typing import Final

import msgspec

from events.store.base import StoreError

log = logging.getLogger(__name__)

REMEMBERED: Final = 10_000
"""Rows already reported that a process remembers (each is reported once while it is)."""


class Unreadable(msgspec.Struct, frozen=True):
    """The data of a feed row this code cannot decode, in the decoded event's place."""

    type: str
    schema_version: int
    newer: bool
    """Written by a newer release (unknown type or schema version), else garbage."""
    error: str

    @property
    def kind(self) -> str:
        return "newer" if self.newer else "garbage"


class UnreadableEvent(StoreError):
    """A stream holds a row this code cannot decode: the stream cannot be read past it."""

    def __init__(self, stream_id: str, version: int, unreadable: Unreadable) -> None:
        what = "written by a newer release" if unreadable.newer else "undecodable"
        super().__init__(
            f"stream {stream_id} version {version} ({unreadable.type}"
            f" v{unreadable.schema_version}) is {what}: {unreadable.error}"
        )
        self.stream_id = stream_id
        self.version = version
        self.unreadable = unreadable


Report = Callable[[str, int, Unreadable], None]
"""Told of each unreadable row once: (stream id, version, what it is)."""


class Sightings:
    """Reports each unreadable row once per process, however often it is read (a consumer
    that retries, every request for the stream): a log line, and the `listeners` (the
    service counts them in its metrics). Remembers the last `REMEMBERED` rows."""

    def __init__(self, remembered: int = REMEMBERED) -> None:
        self._seen: OrderedDict[tuple[str, int], None] = OrderedDict()
        self._remembered = remembered
        self.listeners: list[Report] = []

    def report(self, stream_id: str, version: int, unreadable: Unreadable) -> None:
        key = (stream_id, version)
        if key in self._seen:
            self._seen.move_to_end(key)
            return
        self._seen[key] = None
        if len(self._seen) > self._remembered:
            self._seen.popitem(last=False)
        log.error(
            "event_unreadable stream=%s version=%d type=%s schema_version=%d kind=%s: %s",
            stream_id,
            version,
            unreadable.type,
            unreadable.schema_version,
            unreadable.kind,
            unreadable.error,
        )
        for listener in self.listeners:
            listener(stream_id, version, unreadable)
