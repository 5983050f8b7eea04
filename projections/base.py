"""The projection contract: what a read model is, as pure code.

A projection turns feed events into writes on its own documents, counters and indexes. It
performs no I/O and keeps nothing beside its documents: what it writes is a function of the
event and the docs it reads, so any process may apply any batch (two projectors share a
generation, and each sees only the batches it commits). The runner (`projections.runner`)
reads the feed, fetches the documents `keys` names for a whole batch in one round trip,
overlays the batch's own writes, calls `apply`, and hands the writes to a store that applies
them and moves the checkpoint in one atomic step. The same projection code serves Redis and
the in-memory store.

Keys are relative to the projection's key space; the store places them under one hash tag
per projection generation (e.g. `{fw:lobby:g7}:game:abc`), so Redis Cluster keeps a
projection's keys in one slot and one script can apply a batch atomically.

The runner, not the projection, checks each stream's version: a redelivered event never
reaches `apply`, and a gap stops the projection with an error.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Protocol, runtime_checkable

import msgspec

from events.store.base import RecordedEvent

Doc = dict[str, Any]
"""A JSON document (msgspec.json-encodable: a projection may put structs in it, such as the
replay's events, which every store keeps as their JSON)."""


class Put(msgspec.Struct, frozen=True):
    """Replace the document at `key`."""

    key: str
    doc: Doc


class Delete(msgspec.Struct, frozen=True):
    """Remove the document (or counter hash) at `key`."""

    key: str


class Incr(msgspec.Struct, frozen=True):
    """Add `amount` to `field` of the counter hash at `key`."""

    key: str
    field: str
    amount: int


class IndexAdd(msgspec.Struct, frozen=True):
    """Put `member` in the sorted set `index` with `score` (moving it if already there)."""

    index: str
    member: str
    score: float


class IndexRemove(msgspec.Struct, frozen=True):
    """Take `member` out of the sorted set `index`."""

    index: str
    member: str


Write = Put | Delete | Incr | IndexAdd | IndexRemove


class Projection(Protocol):
    """A read model: a name, a version, and the pure function from events to writes."""

    name: str
    """"lobby", "scoreboard", "players", "replay" (later "standings")."""
    version: int
    """Bump when `apply` changes meaning: the projector then rebuilds it from zero."""

    def keys(self, event: RecordedEvent) -> Sequence[str]:
        """The docs `apply` reads for this event, computable from the event alone; the runner
        fetches them for a whole batch in one round trip."""
        ...

    def apply(self, event: RecordedEvent, docs: Mapping[str, Doc | None]) -> Sequence[Write]:
        """Pure: the writes this event causes, given the docs `keys(event)` named, as they
        stand after every earlier event (the runner overlays the batch's own writes)."""
        ...

    # Optional: `types: frozenset[type]`, the event types `apply` may write for. The runner
    # then neither asks `keys` nor calls `apply` for any other event (it still counts it and
    # checks its version): for a projection that reads few of the feed's events, the calls
    # were most of its cost.
    #
    # Optional: `more_keys(event, docs) -> Sequence[str]`, asked for an event whose `keys`
    # named any, with those docs: the further docs `apply` reads, which only the docs can
    # name (the players a game's document seats). `apply` then sees both.


# ---- reading --------------------------------------------------------------------------------


class ProjectionsUnavailable(Exception):
    """The projection store cannot be reached, or the projection is not built yet; the API
    answers 503 with Retry-After (problem code `projections_unavailable`)."""


class InvalidCursor(ValueError):
    """A paging cursor that no page of this index handed out."""


class IndexEntry(msgspec.Struct, frozen=True):
    member: str
    score: float


class IndexPage(msgspec.Struct, frozen=True):
    entries: list[IndexEntry]
    next_cursor: str | None
    """Opaque; pass it back to read on after the last entry. None when nothing follows."""


@runtime_checkable
class ProjectionReader(Protocol):
    """Read access to the live generation of each projection (resolved through its alias).
    Every method raises `ProjectionsUnavailable` when the store cannot answer. The service
    hands it to handlers as the dependency `reader` (`NamedDependency[ProjectionReader]`)."""

    async def get(self, projection: str, key: str) -> Doc | None:
        """The document at `key`, or None."""
        ...

    async def get_many(self, projection: str, keys: Sequence[str]) -> list[Doc | None]:
        """The documents at `keys`, in order, in one round trip."""
        ...

    async def counters(self, projection: str, key: str) -> dict[str, int]:
        """The counter hash at `key` (empty when none)."""
        ...

    async def page(
        self,
        projection: str,
        index: str,
        *,
        limit: int,
        cursor: str | None = None,
        min_score: float = float("-inf"),
        max_score: float = float("inf"),
        descending: bool = False,
    ) -> IndexPage:
        """Up to `limit` entries of the sorted set `index` whose score lies in
        [min_score, max_score], ordered by (score, member) (reversed when `descending`),
        after `cursor`. A cursor names the last (score, member) returned, so a page is stable
        under concurrent writes: nothing is repeated, and an entry that stays put is not
        missed. `InvalidCursor` when `cursor` is not one a page handed out."""
        ...
