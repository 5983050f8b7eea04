"""The runner: applies one projection to one generation, a batch of the feed at a time.

A step reads the next page of the feed after the generation's checkpoint, fetches the docs
the page's events name and the versions of its streams in one round trip, folds the events
through the projection's pure `apply` (each seeing the batch's own earlier writes), and
commits the writes with the new checkpoint in one atomic step that first checks the
checkpoint has not moved. Two runners on one generation are safe: one commits, the other
finds the checkpoint moved and reads again.

The runner, not the projection, checks each stream's version: an event at or below the
version applied is a redelivery and does nothing; one past the next is a gap, an error that
stops the projection (it is never skipped).

A projection may also have `async prepare(events, feed)`, awaited before each batch is
folded: the scoreboard and the replay fold the game's domain state there
(projections/folds.py), reading the event store only when a game is not in their cache.

And a projection may have `more_keys(event, docs)`: the docs `apply` reads beyond its
`keys`, named by what those docs say (the ratings read each player's rating, named by the
game's document, which holds the seat names that `game.ended` does not say). The runner
folds with every doc it holds; an event naming one it does not hold sends it back to the
store for them (in the same snapshot: the checkpoint still where the batch started), and the
batch is folded again, so `apply` sees each doc as the batch's earlier events left it.

A projection keeps nothing between batches beside what it writes: two projectors share a
generation, and either may commit any batch, so a process sees only some of the events.
What a projection keeps in memory (the fold caches of projections/folds.py) is only ever a
copy of what the event store or its documents say, checked against them before it is used.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Mapping, Sequence
from itertools import chain
from types import MappingProxyType

from events.feed import Feed
from events.store.base import Checkpoint, RecordedEvent
from events.store.unreadable import Unreadable
from projections.base import Delete, Doc, IndexAdd, Projection, Put
from projections.store import Changes, Outcome, ProjectionStore

BATCH = 1000
_NO_DOCS: Mapping[str, Doc | None] = MappingProxyType({})
"""What `apply` sees of an event that names no docs (read-only: shared by all of them)."""
CACHE_DOCS = 20_000
"""Docs a runner keeps between batches (then it forgets them all and reads them again)."""


class VersionGap(Exception):
    """The feed skipped a version of a stream: the projection cannot go on truthfully."""

    def __init__(self, projection: str, stream_id: str, applied: int, found: int) -> None:
        super().__init__(
            f"{projection}: stream {stream_id} jumps from version {applied} to {found}"
        )
        self.stream_id = stream_id
        self.applied = applied
        self.found = found


class MissingDocs(Exception):
    """The fold met an event whose `more_keys` named docs it was not given."""

    def __init__(self, keys: Sequence[str]) -> None:
        super().__init__(f"docs not given: {', '.join(keys[:5])}")
        self.keys = keys


class GenerationGone(Exception):
    """The generation was dropped (a rebuild replaced it) or the store was flushed."""


class Runner:
    def __init__(
        self,
        projection: Projection,
        store: ProjectionStore,
        feed: Feed,
        batch: int = BATCH,
        observe: Callable[[Sequence[RecordedEvent]], None] | None = None,
    ) -> None:
        self.projection = projection
        self.observe = observe
        """Called with each batch once it is committed (the lag benchmark times them)."""
        self.store = store
        self.feed = feed
        self.batch = batch
        self.checkpoint: Checkpoint | None = None
        """Where the generation stood after this runner's last read or commit."""
        self.applied = 0
        """Events applied by this runner (redeliveries not counted)."""
        self._docs: dict[str, Doc | None] = {}
        self._versions: dict[str, int] = {}
        self._known_at: Checkpoint | None = None
        """The docs and stream versions as the generation held them at `_known_at`, kept
        while each batch commits from where the last one ended: then no other runner has
        written in between (it would have moved the checkpoint), and a batch whose docs are
        all known needs no snapshot, only its commit, which checks the checkpoint anyway."""
        self._ahead: tuple[Checkpoint, asyncio.Task[list[RecordedEvent]]] | None = None
        """The next page, read while a full batch commits (catching up overlaps the feed's
        query with Redis and the fold)."""

    async def step(self, number: int) -> int:
        """Apply the next batch to generation `number`; the number of events read from the
        feed (0: caught up). Raises `GenerationGone` or `VersionGap`."""
        name = self.projection.name
        while True:
            if self.checkpoint is None:
                snapshot = await self.store.snapshot(name, number, (), ())
                if snapshot is None:
                    raise GenerationGone(name)
                self.checkpoint = snapshot.checkpoint
            start = self.checkpoint
            events = await self._read(start)
            if not events:
                return 0
            named = self._named(events)
            keys = list(dict.fromkeys(chain.from_iterable(named)))
            streams = list(dict.fromkeys([e.stream_id for e in events]))
            if self._known_at != start:
                self._forget()
            if not await self._fetch(number, start, keys, streams):
                continue  # another runner moved the checkpoint: read on from there
            prepare = getattr(self.projection, "prepare", None)
            if prepare is not None:  # a projection that folds the domain beside the feed
                await prepare(events, self.feed)
            folded = await self._fold_fetching(number, start, events, keys, streams, named)
            if folded is None:
                continue  # moved while fetching what the docs named
            changes, applied, docs, versions = folded
            end = events[-1].checkpoint
            if len(events) == self.batch:  # catching up: read the next page meanwhile
                self._prefetch(end)
            outcome = await self.store.commit(name, number, start, end, changes)
            if outcome is not Outcome.COMMITTED:
                self.discard()
                self._forget()
            if outcome is Outcome.GONE:
                raise GenerationGone(name)
            if outcome is Outcome.MOVED:
                self.checkpoint = None
                continue
            self.checkpoint = end
            self._remember(end, docs, versions)
            self.applied += applied
            if self.observe is not None:
                self.observe(events)
            return len(events)

    async def _fold_fetching(
        self,
        number: int,
        start: Checkpoint,
        events: Sequence[RecordedEvent],
        keys: list[str],
        streams: list[str],
        named: Sequence[Sequence[str]],
    ) -> tuple[Changes, int, dict[str, Doc | None], dict[str, int]] | None:
        """`fold` with the docs and versions known, fetching what `more_keys` names and
        folding again until nothing is lacking; None when the checkpoint moved meanwhile."""
        while True:
            docs = {k: self._docs[k] for k in keys}
            versions = {s: self._versions[s] for s in streams}
            try:
                changes, applied = self.fold(events, docs, versions, named)
            except MissingDocs as more:
                keys = [*keys, *more.keys]
                if not await self._fetch(number, start, more.keys, ()):
                    return None
                continue
            return changes, applied, docs, versions

    async def _fetch(
        self, number: int, start: Checkpoint, keys: Sequence[str], streams: Sequence[str]
    ) -> bool:
        """Make sure the docs `keys` and the versions of `streams` are known as the generation
        holds them at `start`; False (and the checkpoint moved on) when it has moved."""
        missing = [k for k in keys if k not in self._docs]
        unknown = [s for s in streams if s not in self._versions]
        if not missing and not unknown and self._known_at is not None:
            return True
        name = self.projection.name
        snapshot = await self.store.snapshot(name, number, missing, unknown)
        if snapshot is None:
            raise GenerationGone(name)
        if snapshot.checkpoint != start:
            self._forget()
            self.checkpoint = snapshot.checkpoint
            return False
        self._docs.update(snapshot.docs)
        self._versions.update(snapshot.versions)
        self._known_at = start
        return True

    def _remember(
        self, at: Checkpoint, docs: dict[str, Doc | None], versions: dict[str, int]
    ) -> None:
        """Keep what this batch left, as the generation holds it at `at`."""
        if len(self._docs) + len(docs) > CACHE_DOCS:
            self._forget()
            return
        self._docs.update(docs)
        self._versions.update(versions)
        self._known_at = at

    def _forget(self) -> None:
        self._docs.clear()
        self._versions.clear()
        self._known_at = None

    async def _read(self, start: Checkpoint) -> list[RecordedEvent]:
        ahead, self._ahead = self._ahead, None
        if ahead is not None and ahead[0] == start:
            return await ahead[1]
        if ahead is not None:
            ahead[1].cancel()
        return await self.feed.read_feed(start, limit=self.batch)

    def _prefetch(self, after: Checkpoint) -> None:
        self.discard()
        task = asyncio.create_task(self.feed.read_feed(after, limit=self.batch))
        # Retrieved by the next step, or dropped: either way its failure is not news.
        task.add_done_callback(lambda t: t.cancelled() or t.exception())
        self._ahead = (after, task)

    def discard(self) -> None:
        """Drop a page read ahead (the runner is abandoned, or its checkpoint moved)."""
        if self._ahead is not None:
            self._ahead[1].cancel()
            self._ahead = None

    def _named(self, events: Sequence[RecordedEvent]) -> list[Sequence[str]]:
        """Each event's `keys`; () without asking for an event whose type the projection
        declares it never reads (`types`)."""
        keys = self.projection.keys
        wanted: frozenset[type] | None = getattr(self.projection, "types", None)
        if wanted is None:
            return [keys(event) for event in events]
        return [keys(event) if type(event.data) in wanted else () for event in events]

    def fold(
        self,
        events: Sequence[RecordedEvent],
        docs: dict[str, Doc | None],
        versions: dict[str, int],
        named: Sequence[Sequence[str]] | None = None,
    ) -> tuple[Changes, int]:
        """The batch's net writes, each event applied to the docs as the batch's earlier
        events left them, and how many events were applied (not redelivered). `named`: each
        event's `keys`, when the caller has them already. `MissingDocs` when a `more_keys`
        named docs that `docs` does not hold (the fold goes on to the end first, to name
        them all; only the events before the first such are folded truly)."""
        changes = Changes()
        add, index, put, counters = changes.add, changes.index, changes.docs, changes.counters
        moved = changes.versions
        apply = self.projection.apply
        wanted: frozenset[type] | None = getattr(self.projection, "types", None)
        more = getattr(self.projection, "more_keys", None)
        if named is None:
            named = self._named(events)
        applied_here = 0
        absent: dict[str, None] = {}
        for event, keys in zip(events, named, strict=True):
            stream, version = event.stream_id, event.version
            applied = versions.get(stream, 0)
            if version != applied + 1:
                if version <= applied:
                    continue  # redelivered: applied before
                raise VersionGap(self.projection.name, stream, applied, version)
            versions[stream] = moved[stream] = version
            kind = type(event.data)
            if kind is Unreadable:
                continue  # the store has reported it; the stream's next rows are applied
            if wanted is not None and kind not in wanted:
                applied_here += 1  # counted and versioned: it writes nothing here
                continue
            if not keys:  # most events, for the projections that read few docs
                seen: Mapping[str, Doc | None] = _NO_DOCS
            elif len(keys) == 1:
                seen = {keys[0]: docs.get(keys[0])}
            else:
                seen = {key: docs.get(key) for key in keys}
            if more is not None and keys:
                further = more(event, seen)
                if further:
                    lacking = [key for key in further if key not in docs]
                    if lacking or absent:  # fold on only to learn what else is lacking
                        absent.update(dict.fromkeys(lacking))
                        continue
                    seen = dict(seen) | {key: docs[key] for key in further}
            for write in apply(event, seen):
                # The two writes of nearly every event inline, the rest through `add`.
                if type(write) is IndexAdd:
                    index[(write.index, write.member)] = write.score
                elif type(write) is Put:
                    put[write.key] = docs[write.key] = write.doc  # later events see it
                    if counters:  # a Delete earlier in the batch: the doc replaces it
                        counters.pop(write.key, None)
                else:
                    add(write)
                    if type(write) is Delete:
                        docs[write.key] = None
            applied_here += 1
        if absent:
            raise MissingDocs(list(absent))
        return changes, applied_here
