"""One pass over each page of the feed for several projections standing at one checkpoint.

Each runner (projections/runner.py) reads a page, checks every event's stream version,
prepares, folds and commits on its own: six runners over one page meant six checks of each
event, the scoreboard's and the replay's game folds done twice, six commits and six tasks
taking turns. When the runners stand at the same checkpoint (always in a rebuild of the
catalog; `Projector.build_many`), a pass drives them together instead: one read of each page,
one check of each event's version for all of them, each projection folding only the events
of its `types`, one game fold for every projection that folds games (`folds`, the
scoreboard's and the replay's: played and kept at once), and one commit per page for all of
them (`ProjectionStore.commit_many`: pipelined in Redis).

Nothing of the runners' guarantees is loosened, because a pass never decides for a runner
what it would not have decided alone:
- Each member's generation still commits its own batch atomically with its checkpoint,
  checked where the batch started (exactly once per batch).
- The shared check is made with stream versions that every member's generation holds
  alike (each member fetches its own; one that differs leaves).
- A member whose commit or snapshot finds its checkpoint moved, or its generation gone,
  leaves the pass, its cache forgotten: it goes on alone from what its generation says.
- A gap, an unreadable stream or any error in the pass ends the pass for all: each runner
  then meets the same event on its own path, which stops the projection and says so (state
  `failed`), exactly as without the pass.
"""

from __future__ import annotations

import asyncio
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from itertools import chain

import structlog

from events.feed import Feed
from events.store.base import Checkpoint, RecordedEvent
from events.store.unreadable import Unreadable
from projections.base import Doc
from projections.folds import GameFolds
from projections.runner import BATCH, MissingDocs, Runner, VersionGap
from projections.store import Changes, Outcome, ProjectionStore

log = structlog.get_logger("fairway.projections")


@dataclass(eq=False)
class Member:
    runner: Runner
    number: int
    """The generation it builds or follows."""
    own_folds: GameFolds | None = None
    """The projection's own game folds, given back when it leaves (the pass lends it the
    shared ones meanwhile)."""


class OnePass:
    def __init__(
        self,
        members: Sequence[tuple[Runner, int]],
        store: ProjectionStore,
        feed: Feed,
        batch: int = BATCH,
    ) -> None:
        self.members = [Member(runner, number) for runner, number in members]
        self.store = store
        self.feed = feed
        self.batch = batch
        self.pages = 0
        """Pages committed by the pass (for tests and the benchmark)."""
        self._ahead: tuple[Checkpoint, asyncio.Task[list[RecordedEvent]]] | None = None
        self._shared: GameFolds | None = None
        owns = {m: f for m in self.members if (f := _folds(m)) is not None}
        if len(owns) > 1:  # fold each game once for all of them
            self._shared = GameFolds(
                play=any(f.play for f in owns.values()),
                keep=any(f.keep for f in owns.values()),
                name="one pass",
            )
            for member, own in owns.items():
                member.own_folds = own
                member.runner.projection.folds = self._shared  # type: ignore[attr-defined]

    async def run(self, stepped: Callable[[], None] = lambda: None) -> None:
        """Step until the members have caught up with the feed or none is left (`stepped`
        called after each page); those that left go on alone, from where their generations
        stand. Any error ends the pass: each runner meets it again on its own path, where
        it is handled and told as without the pass."""
        try:
            while self.members and await self.step():
                stepped()
        except Exception as error:
            log.warning("one_pass_dissolved", error=repr(error))
            self.dissolve()
        finally:
            self._discard()
            for member in list(self.members):
                self._give_back(member)

    async def step(self) -> int:
        """Apply the next page to every member; the events read (0: caught up, or nobody
        is left)."""
        await self._align()
        if not self.members:
            return 0
        start = self.members[0].runner.checkpoint
        assert start is not None
        events = await self._read(start)
        if not events:
            return 0
        streams = list(dict.fromkeys([e.stream_id for e in events]))
        named = {id(m): self._named(m, events) for m in self.members}
        for member in list(self.members):
            runner = member.runner
            if runner._known_at != start:
                runner._forget()
            keys = list(dict.fromkeys(chain.from_iterable(named[id(member)][1])))
            if not await runner._fetch(member.number, start, keys, streams):
                self._leave(member)
        if not self.members:
            return 0
        versions = {s: self.members[0].runner._versions[s] for s in streams}
        for member in self.members[1:]:
            if any(member.runner._versions[s] != v for s, v in versions.items()):
                self._leave(member)  # (not seen: generations at one checkpoint agree)
        try:
            checked, moved = _check(events, versions)
        except VersionGap:
            self.dissolve()  # each runner meets the gap on its own path, and says so
            return 0
        await self._prepare(events)
        commits: list[tuple[str, int, Checkpoint, Checkpoint, Changes]] = []
        end = events[-1].checkpoint
        folded = []
        whole = len(checked) == len(events)  # nothing redelivered nor unreadable
        fresh = None if whole else {id(e) for e in checked}
        for member in list(self.members):
            mine, keys_of = named[id(member)]
            if fresh is not None:
                pairs = [(e, k) for e, k in zip(mine, keys_of, strict=True) if id(e) in fresh]
                mine, keys_of = [e for e, _ in pairs], [k for _, k in pairs]
            result = await self._fold(member, start, mine, keys_of)
            if result is None:
                continue
            changes, docs = result
            changes.versions = moved
            commits.append((member.runner.projection.name, member.number, start, end, changes))
            folded.append((member, docs))
        if len(events) == self.batch:  # catching up: read the next page meanwhile
            self._prefetch(end)
        outcomes = await self.store.commit_many(commits)
        applied = len(checked)  # as a runner counts: every event neither redelivered nor
        # unreadable, whether of the projection's `types` or not
        for (member, docs), outcome in zip(folded, outcomes, strict=True):
            runner = member.runner
            if outcome is not Outcome.COMMITTED:
                self._leave(member)
                continue
            runner.checkpoint = end
            runner._remember(end, docs, moved)
            runner.applied += applied
            if runner.observe is not None:
                runner.observe(events)
        self.pages += 1
        return len(events)

    def dissolve(self) -> None:
        """Every member goes on alone."""
        for member in list(self.members):
            self._leave(member)

    # ---- the members ----------------------------------------------------------------------

    async def _align(self) -> None:
        """Each member's checkpoint read when it has none; those not where most stand
        leave (a pass drives only runners in step)."""
        for member in list(self.members):
            runner = member.runner
            if runner.checkpoint is None:
                snapshot = await self.store.snapshot(runner.projection.name, member.number, (), ())
                if snapshot is None:
                    self._leave(member)  # its own step raises `GenerationGone`
                    continue
                runner.checkpoint = snapshot.checkpoint
        if self.members:  # the checkpoint most of them stand at (ties: the earliest named)
            standing = Counter(m.runner.checkpoint for m in self.members)
            most = max(standing.values())
            at = next(c for c, n in standing.items() if n == most)
            for member in list(self.members):
                if member.runner.checkpoint != at:
                    self._leave(member)

    def _named(
        self, member: Member, events: list[RecordedEvent]
    ) -> tuple[list[RecordedEvent], list[Sequence[str]]]:
        """The page's events of the member's `types` (all of them without `types`) and the
        docs each names."""
        projection = member.runner.projection
        wanted: frozenset[type] | None = getattr(projection, "types", None)
        mine = events if wanted is None else [e for e in events if type(e.data) in wanted]
        keys = projection.keys
        return mine, [keys(event) for event in mine]

    async def _prepare(self, events: list[RecordedEvent]) -> None:
        """Each member's `prepare`, the shared game folds once for all that lend them."""
        if self._shared is not None:
            await self._shared.prepare(events, self.feed.read_stream)
        for member in self.members:
            if member.own_folds is not None:
                continue
            prepare = getattr(member.runner.projection, "prepare", None)
            if prepare is not None:
                await prepare(events, self.feed)

    async def _fold(
        self,
        member: Member,
        start: Checkpoint,
        mine: list[RecordedEvent],
        keys_of: list[Sequence[str]],
    ) -> tuple[Changes, dict[str, Doc | None]] | None:
        """The member's writes for its checked events, fetching what `more_keys` names;
        None when it left (its checkpoint moved meanwhile)."""
        runner = member.runner
        keys = list(dict.fromkeys(chain.from_iterable(keys_of)))
        while True:
            docs = {k: runner._docs[k] for k in keys}
            try:
                return runner.fold_checked(mine, docs, keys_of), docs
            except MissingDocs as more:
                keys = [*keys, *more.keys]
                if not await runner._fetch(member.number, start, more.keys, ()):
                    self._leave(member)
                    return None

    def _leave(self, member: Member) -> None:
        """The member goes on alone, from what its generation says."""
        if member in self.members:
            self.members.remove(member)
        member.runner._forget()
        member.runner.checkpoint = None
        self._give_back(member)

    def _give_back(self, member: Member) -> None:
        if member.own_folds is not None:
            member.runner.projection.folds = member.own_folds  # type: ignore[attr-defined]
            member.own_folds = None

    # ---- reading --------------------------------------------------------------------------

    async def _read(self, start: Checkpoint) -> list[RecordedEvent]:
        ahead, self._ahead = self._ahead, None
        if ahead is not None and ahead[0] == start:
            return await ahead[1]
        if ahead is not None:
            ahead[1].cancel()
        return await self.feed.read_feed(start, limit=self.batch)

    def _prefetch(self, after: Checkpoint) -> None:
        self._discard()
        task = asyncio.create_task(self.feed.read_feed(after, limit=self.batch))
        task.add_done_callback(lambda t: t.cancelled() or t.exception())
        self._ahead = (after, task)

    def _discard(self) -> None:
        if self._ahead is not None:
            self._ahead[1].cancel()
            self._ahead = None


def _folds(member: Member) -> GameFolds | None:
    """The member's game folds, when its projection folds games (the scoreboard's, the
    replay's)."""
    folds = getattr(member.runner.projection, "folds", None)
    return folds if isinstance(folds, GameFolds) else None


def _check(
    events: Sequence[RecordedEvent], versions: dict[str, int]
) -> tuple[list[RecordedEvent], dict[str, int]]:
    """The page's events to apply (in order: neither redelivered nor unreadable) and the
    version each stream reaches; `VersionGap` at an event past its stream's next."""
    checked: list[RecordedEvent] = []
    moved: dict[str, int] = {}
    versions = dict(versions)
    for event in events:
        stream, version = event.stream_id, event.version
        applied = versions.get(stream, 0)
        if version != applied + 1:
            if version <= applied:
                continue  # redelivered: applied before
            raise VersionGap("one pass", stream, applied, version)
        versions[stream] = moved[stream] = version
        if type(event.data) is not Unreadable:
            checked.append(event)
    return checked, moved
