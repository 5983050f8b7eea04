"""The projection store contract: generations behind an alias, atomic batches, reading.

A projection's documents live in a *generation*: a key space numbered per projection. The
alias names the generation readers use. A rebuild fills a new generation from position zero
while readers keep using the old one, then switches the alias (compare-and-set) and drops the
old generation. Each generation keeps its checkpoint and the version of every stream it has
applied, so a batch is applied exactly once: `commit` applies the writes, the stream versions
and the new checkpoint together, and only if the checkpoint is still where the batch started.

Both stores (Redis, in-memory) implement this contract and pass the same tests.
"""

from __future__ import annotations

import abc
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from enum import Enum
from typing import Any, Literal

import msgspec

from events.store.base import START, Checkpoint
from projections.base import (
    Delete,
    Doc,
    Incr,
    IndexAdd,
    IndexPage,
    IndexRemove,
    ProjectionReader,
    Put,
    Write,
)

State = Literal["rebuilding", "running", "failed"]


class Generation(msgspec.Struct, frozen=True):
    """One key space of a projection, as its meta record says."""

    name: str
    number: int
    version: int
    """The projection code's `version` that built it."""
    checkpoint: Checkpoint = START
    state: State = "rebuilding"
    error: str = ""
    source: str = ""
    """The installation id of the event store it is built from (`EventStore.installation`);
    empty for a generation that does not name its store."""


class Snapshot(msgspec.Struct, frozen=True):
    """What a batch starts from, read at one instant: the checkpoint, the docs the batch's
    events name and the versions of its streams (0: none applied yet)."""

    checkpoint: Checkpoint
    docs: dict[str, Doc | None]
    versions: dict[str, int]


class Outcome(Enum):
    COMMITTED = "committed"
    MOVED = "moved"
    """The checkpoint was not where the batch started: another runner got there first."""
    GONE = "gone"
    """The generation no longer exists (dropped after a rebuild, or the store was flushed)."""


@dataclass
class Changes:
    """A batch's writes, folded to their net effect (the batch is applied as one step, so
    only the end state of each key matters): a doc's last Put or Delete, each counter hash's
    reset and sums, each index member's last score or removal, each stream's last version.
    A key holds a doc or a counter hash, never both: a Put after a Delete of the same key
    in one batch leaves the doc, an Incr after a Delete a fresh counter."""

    docs: dict[str, Doc | None] = field(default_factory=dict)
    counters: dict[str, tuple[bool, dict[str, int]]] = field(default_factory=dict)
    """key -> (delete the hash first, amounts to add per field)."""
    index: dict[tuple[str, str], float | None] = field(default_factory=dict)
    versions: dict[str, int] = field(default_factory=dict)

    def add(self, write: Write) -> None:
        handler = _ADD.get(type(write))  # by exact type: this runs for every write of a rebuild
        if handler is None:
            raise TypeError(f"not a write: {write!r}")
        handler(self, write)

    def _put(self, write: Put) -> None:
        self.docs[write.key] = write.doc
        self.counters.pop(write.key, None)  # a key holds a doc or a counter hash, not both

    def _delete(self, write: Delete) -> None:
        self.docs[write.key] = None
        self.counters[write.key] = (True, {})

    def _incr(self, write: Incr) -> None:
        reset, sums = self.counters.get(write.key, (False, {}))
        sums[write.field] = sums.get(write.field, 0) + write.amount
        self.counters[write.key] = (reset, sums)

    def _index_add(self, write: IndexAdd) -> None:
        self.index[(write.index, write.member)] = write.score

    def _index_remove(self, write: IndexRemove) -> None:
        self.index[(write.index, write.member)] = None

    def __bool__(self) -> bool:
        return bool(self.docs or self.counters or self.index or self.versions)


_ADD: dict[type, Callable[[Changes, Any], None]] = {
    Put: Changes._put,
    Delete: Changes._delete,
    Incr: Changes._incr,
    IndexAdd: Changes._index_add,
    IndexRemove: Changes._index_remove,
}


class ProjectionStore(ProjectionReader, abc.ABC):
    """Generations, batches and reads. Every method raises `ProjectionsUnavailable` when the
    store cannot be reached."""

    # ---- generations ------------------------------------------------------------------------

    @abc.abstractmethod
    async def alias(self, name: str) -> int | None:
        """The generation readers of `name` use; None when there is none (never built, or
        the store was flushed)."""

    @abc.abstractmethod
    async def begin(self, name: str, version: int, source: str = "") -> Generation:
        """A new, empty generation of `name` at START, state `rebuilding`, numbered above
        every generation before it, built from the event store `source` (its installation
        id)."""

    @abc.abstractmethod
    async def generation(self, name: str, number: int) -> Generation | None:
        """The generation's meta record; None when it does not exist (dropped, flushed)."""

    @abc.abstractmethod
    async def mark(self, name: str, number: int, state: State, error: str = "") -> None:
        """Record the generation's state (and the error that stopped it)."""

    @abc.abstractmethod
    async def switch(self, name: str, number: int, expected: int | None) -> bool:
        """Point the alias at `number` if it still names `expected`; False if it moved."""

    @abc.abstractmethod
    async def drop(self, name: str, number: int) -> None:
        """Delete the generation: its meta record first (so no batch commits into it any
        more), then its keys, a batch at a time."""

    @abc.abstractmethod
    async def newest(self, name: str) -> int | None:
        """The last generation number handed out for `name` (a rebuild in progress when
        above the alias); None when none was."""

    @abc.abstractmethod
    async def generations(self, name: str) -> list[int]:
        """The numbers of every generation of `name` that has a meta record."""

    # ---- batches ----------------------------------------------------------------------------

    @abc.abstractmethod
    async def snapshot(
        self, name: str, number: int, keys: Sequence[str], streams: Sequence[str]
    ) -> Snapshot | None:
        """The generation's checkpoint, `keys` and the versions of `streams`, consistently;
        None when the generation does not exist."""

    @abc.abstractmethod
    async def commit(
        self, name: str, number: int, start: Checkpoint, end: Checkpoint, changes: Changes
    ) -> Outcome:
        """Apply `changes` and move the checkpoint from `start` to `end`, atomically, if the
        generation still exists and its checkpoint is still `start`."""

    # ---- reading (through the alias) ----------------------------------------------------------

    @abc.abstractmethod
    async def get(self, projection: str, key: str) -> Doc | None: ...

    @abc.abstractmethod
    async def get_many(self, projection: str, keys: Sequence[str]) -> list[Doc | None]: ...

    @abc.abstractmethod
    async def counters(self, projection: str, key: str) -> dict[str, int]: ...

    @abc.abstractmethod
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
    ) -> IndexPage: ...

    @abc.abstractmethod
    async def dump(self, name: str, number: int) -> Mapping[str, object]:
        """Every key of the generation (relative) with its value: docs as dicts, counter
        hashes as dicts of ints, indexes as lists of (member, score); for tests and tools
        that compare read models key for key."""

    # ---- rebuilds -----------------------------------------------------------------------------

    @abc.abstractmethod
    async def count_rebuild(self, name: str, reason: str) -> None:
        """Count one rebuild of `name` switched in, by why it was needed (for the metrics:
        every process that reads the store sees the same counts)."""

    @abc.abstractmethod
    async def rebuilds(self, name: str) -> dict[str, int]:
        """The rebuilds of `name` switched in, by reason (since the store was last flushed)."""

    @abc.abstractmethod
    async def close(self) -> None: ...
